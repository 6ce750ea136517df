package writeback

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// reviewPrefix is the folder of every review branch deploy-web pushes.
const reviewPrefix = "deploy-web/"

// maxRefPartRunes caps each of the action, app and version in a review
// branch name.
const maxRefPartRunes = 60

// ReviewBranch is the branch mode's branch for a change:
// deploy-web/<action>-<app>-<version>, each part reduced to letters,
// digits, '.', '_' and '-' (anything else, '/' included, becomes '-'), so
// the name is always one valid ref directly under refs/heads/deploy-web/,
// whatever the parts hold.
func ReviewBranch(action, app, version string) (string, error) {
	parts := []string{refPart(action), refPart(app), refPart(version)}
	for i, p := range parts {
		if p == "" {
			return "", fmt.Errorf("writeback: review branch: the %s is empty once reduced to letters, digits, '.', '_' and '-'", []string{"action", "app", "version"}[i])
		}
	}
	name := reviewPrefix + strings.Join(parts, "-")
	if err := plumbing.NewBranchReferenceName(name).Validate(); err != nil {
		return "", fmt.Errorf("writeback: review branch %q: %v", name, err)
	}
	return name, nil
}

// refPart is s with every byte outside [A-Za-z0-9._-] turned into '-',
// runs of '-' and '.' collapsed (no "..", no "-.-"), without leading or
// trailing '.' or '-' and without a ".lock" suffix, at most
// maxRefPartRunes long.
func refPart(s string) string {
	var b strings.Builder
	prevSep := true // drops leading separators
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_':
			b.WriteByte(c)
			prevSep = false
		case c == '.':
			if !prevSep {
				b.WriteByte('.')
			}
			prevSep = true
		default:
			if !prevSep {
				b.WriteByte('-')
			}
			prevSep = true
		}
	}
	out := b.String()
	if len(out) > maxRefPartRunes {
		out = out[:maxRefPartRunes]
	}
	for {
		trimmed := strings.TrimSuffix(strings.Trim(out, ".-"), ".lock")
		if trimmed == out {
			return out
		}
		out = trimmed
	}
}

// forges maps a known forge host to its compare page, given the
// repository's path (org/repo), the base and the head branch.
var forges = map[string]func(repoPath, base, head string) string{
	"github.com": func(p, base, head string) string {
		return "https://github.com/" + p + "/compare/" + refURL(base) + "..." + refURL(head) + "?expand=1"
	},
	"gitlab.com": func(p, base, head string) string {
		return "https://gitlab.com/" + p + "/-/compare/" + refURL(base) + "..." + refURL(head)
	},
	"codeberg.org": func(p, base, head string) string {
		return "https://codeberg.org/" + p + "/compare/" + refURL(base) + "..." + refURL(head)
	},
	"bitbucket.org": func(p, base, head string) string {
		return "https://bitbucket.org/" + p + "/branches/compare/" + refURL(head) + "%0D" + refURL(base)
	},
}

// refURL escapes a branch name for a compare URL, keeping its slashes.
func refURL(b string) string {
	parts := strings.Split(b, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// CompareURL is the page of a known forge (github.com, gitlab.com,
// codeberg.org, bitbucket.org) that compares head with base in the
// repository at repoURL, "" for any other host or a URL that is not
// https://host/org/repo[.git].
func CompareURL(repoURL, base, head string) string {
	u, err := url.Parse(repoURL)
	if err != nil || u.Scheme != "https" || u.User != nil || u.Port() != "" || u.RawQuery != "" || u.Fragment != "" {
		return ""
	}
	f, ok := forges[strings.ToLower(u.Hostname())]
	if !ok {
		return ""
	}
	p := strings.TrimSuffix(strings.Trim(u.Path, "/"), ".git")
	segs := strings.Split(p, "/")
	if len(segs) < 2 {
		return ""
	}
	for i, s := range segs {
		if s == "" || s == "." || s == ".." {
			return ""
		}
		segs[i] = url.PathEscape(s)
	}
	return f(strings.Join(segs, "/"), base, head)
}
