package envconfig

import (
	"strings"
)

// RedactURL returns a repository address with no credential in it, for
// reports, errors, logs and pages; it is the one redactor of repository
// addresses (envsource shows them through it too).
//
// Whatever the form (https://user:token@host/org/repo.git,
// ssh://git:pw@host/repo, the scp-like user@host:org/repo.git), everything
// up to the last "@" of the address is dropped, and so are a URL's query
// and fragment, which can carry tokens too. The last "@", not the first:
// a password may hold "@", and also "/", "?", "#" or ":" unescaped, which
// is why the address is not cut up by net/url (it ends the authority at
// the first "/", "?" or "#", so "https://u:12/x@host/r" parses as host
// "u:12" and would show the password's start). A host never holds an "@",
// so no byte before the last one is shown; an address whose path holds an
// "@" loses what comes before it, which is the price of never guessing.
func RedactURL(repo string) string {
	scheme, rest, ok := strings.Cut(repo, "://")
	if !ok || !IsURLScheme(scheme) {
		// A local path or the scp-like form: no query or fragment.
		if at := strings.LastIndex(repo, "@"); at >= 0 {
			return repo[at+1:]
		}
		return repo
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		rest = rest[at+1:]
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	return scheme + "://" + rest
}

// IsURLScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, "+", "-" or "."), so that "user:p://w@host:repo" is not
// taken for a URL whose scheme carries the credentials.
func IsURLScheme(s string) bool {
	for i, c := range s {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}
