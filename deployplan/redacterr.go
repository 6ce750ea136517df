package deployplan

import (
	"cmp"
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/hanzoai/deploy-web/envconfig"
)

// redactErr returns err unchanged when repo carries no credentials, else
// an error of the same text with every piece of them (the user
// information, the user, the password; as written and URL-escaped)
// replaced by "REDACTED": a library's error may quote the address it was
// given (net/url's parse errors do, whole). The error chain is not kept
// then.
func redactErr(err error, repo string) error {
	cut := envconfig.RedactURL(repo)
	if err == nil || len(cut) == len(repo) {
		return err
	}
	userinfo := repo
	if scheme, rest, ok := strings.Cut(repo, "://"); ok && envconfig.IsURLScheme(scheme) {
		userinfo = rest
	}
	userinfo = userinfo[:strings.LastIndex(userinfo, "@")]
	user, password, _ := strings.Cut(userinfo, ":")
	var pieces []string
	for _, p := range []string{userinfo, user, password} {
		if p != "" {
			pieces = append(pieces, p, url.PathEscape(p), url.QueryEscape(p))
		}
	}
	// Longest first, so a piece inside another goes with it.
	slices.SortFunc(pieces, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	msg := err.Error()
	for _, p := range pieces {
		msg = strings.ReplaceAll(msg, p, "REDACTED")
	}
	return errors.New(msg)
}
