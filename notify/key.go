package notify

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/hostlist"
	"github.com/hanzoai/deploy-web/internal/scope"
)

// KeyError is a subscription refused because of the Secret key it names:
// Forbidden when no declaration lets it be used for the subscription's
// target (the key is not declared, or its scope does not cover the
// target), otherwise a mismatch with the declaration (its provider or URL
// prefix). Message is the public text: it names the key and what is
// wrong, never the Secret's value.
type KeyError struct {
	Forbidden bool
	Message   string
}

func (e *KeyError) Error() string { return "notify: " + e.Message }

// CheckKey is the one decision on the Secret key a subscription names:
// nil when sub names none, or names a key declared in keys whose scope
// covers t (the roles target of sub's scope) and whose provider and URL
// prefix sub uses; else a *KeyError. Scope comes first, so that the
// declaration of a key outside the person's reach is not told.
func CheckKey(keys []envconfig.NotificationKey, sub Subscription, t scope.Target) error {
	ref := sub.SecretRef
	if ref == nil {
		return nil
	}
	name := fmt.Sprintf("Secret %s key %s", ref.Name, ref.Key)
	var k *envconfig.NotificationKey
	for i := range keys {
		if keys[i].SecretRef == *ref {
			k = &keys[i]
			break
		}
	}
	switch {
	case k == nil:
		return &KeyError{Forbidden: true, Message: name + " is not declared in notifications.keys: ask an administrator to declare it with its provider, URL prefix and scope"}
	case !k.Scope.Covers(t):
		return &KeyError{Forbidden: true, Message: fmt.Sprintf("%s may not be used for a subscription of %s (notifications.keys)", name, t)}
	case sub.Provider != k.Provider:
		return &KeyError{Message: fmt.Sprintf("%s is declared for provider %s, not %q", name, k.Provider, sub.Provider)}
	case !URLHasPrefix(sub.URL, k.URLPrefix):
		return &KeyError{Message: fmt.Sprintf("%s sends only to URLs under %s (notifications.keys): this URL is not one", name, RedactedURL(k.URLPrefix))}
	}
	return nil
}

// URLHasPrefix reports whether raw lies under prefix: the same scheme and
// host (ASCII case and a default port aside), no "." or ".." segment (nor
// a backslash) in its decoded path, and its path and query starting with
// the prefix's, ending there or at a '/' or '?' unless the prefix ends
// with '/', '?', '&' or '='.
func URLHasPrefix(raw, prefix string) bool {
	u, err := url.Parse(raw)
	p, perr := url.Parse(prefix)
	if err != nil || perr != nil || u.Opaque != "" || p.Opaque != "" || u.User != nil || u.Fragment != "" ||
		u.Scheme != p.Scheme || hostKey(u) != hostKey(p) || envconfig.CheckURLPath(raw) != nil {
		return false
	}
	got, want := u.RequestURI(), p.RequestURI()
	rest, ok := strings.CutPrefix(got, want)
	switch {
	case !ok:
		return false
	case rest == "" || strings.ContainsAny(want[len(want)-1:], "/?&="):
		return true
	}
	return rest[0] == '/' || rest[0] == '?'
}

// hostKey is u's host as compared: canonical (hostlist), without the
// scheme's default port.
func hostKey(u *url.URL) string {
	h := u.Host
	switch u.Scheme {
	case "https":
		h = strings.TrimSuffix(h, ":443")
	case "http":
		h = strings.TrimSuffix(h, ":80")
	}
	return hostlist.Canonical(h)
}
