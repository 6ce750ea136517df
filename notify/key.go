package notify

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/hanzoai/deploy-web/internal/hostlist"
	"github.com/hanzoai/deploy-web/internal/scope"
)

// Key declares one Secret key a subscription may name (an entry of
// notifications.keys in the environments file): the provider it is for,
// the URL prefix its messages go to and the Apps a subscription using it
// may be about. A subscription naming a key that no entry declares, or
// using it elsewhere, is refused when it is saved and again before every
// delivery (CheckKey), so that a person who may create subscriptions
// cannot send another team's HMAC key or Slack path to a URL of their
// choosing.
type Key struct {
	SecretRef SecretRef `json:"secretRef"`
	Provider  Provider  `json:"provider"`
	// URLPrefix is where the key's messages may go: a subscription's URL
	// must have the same scheme and host (a default port aside) and start
	// with the prefix's path and query, ending there or at a '/' or '?'
	// (https://hooks.example/team-a matches https://hooks.example/team-a/x,
	// not https://hooks.example/team-ab).
	URLPrefix string `json:"urlPrefix"`
	// Scope is where subscriptions using the key may be: the roles file's
	// shape (package scope), compared as roles compare a grant with an
	// action (scope.Scope.Covers) against the subscription's target. Empty:
	// anywhere.
	Scope scope.Scope `json:"scope,omitzero"`
}

// ValidateKey checks one declaration against hosts (the delivery
// allowlist) and returns its mistakes, each naming its field relative to
// the entry ("urlPrefix", "scope.apps[0]").
func ValidateKey(k Key, hosts []string) []*FieldError {
	var errs []*FieldError
	bad := func(field, format string, a ...any) {
		errs = append(errs, &FieldError{Field: field, Message: fmt.Sprintf(format, a...)})
	}
	if len(validation.IsDNS1123Subdomain(k.SecretRef.Name)) > 0 {
		bad("secretRef.name", "%q is not a Secret name", k.SecretRef.Name)
	}
	if len(validation.IsConfigMapKey(k.SecretRef.Key)) > 0 {
		bad("secretRef.key", "%q is not a Secret key (letters, digits, '-', '_' and '.')", k.SecretRef.Key)
	}
	if !knownProvider(k.Provider) {
		bad("provider", "%q is not a provider: webhook, slack or teams", k.Provider)
	}
	if err := checkURL(k.URLPrefix, hosts); err != nil {
		bad("urlPrefix", "%v", err)
	} else if err := checkPath(k.URLPrefix); err != nil {
		bad("urlPrefix", "%v", err)
	}
	if err := k.Scope.Validate("scope"); err != nil {
		field, msg, _ := strings.Cut(err.Error(), ": ")
		bad(field, "%s", msg)
	}
	return errs
}

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
func CheckKey(keys []Key, sub Subscription, t scope.Target) error {
	ref := sub.SecretRef
	if ref == nil {
		return nil
	}
	name := fmt.Sprintf("Secret %s key %s", ref.Name, ref.Key)
	var k *Key
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
		u.Scheme != p.Scheme || hostKey(u) != hostKey(p) || checkPath(raw) != nil {
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

// checkPath refuses a URL whose decoded path has a "." or ".." segment or
// a backslash: a receiver may resolve them to another path than the one
// the prefix names.
func checkPath(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %v", errors.Unwrap(err))
	}
	if strings.Contains(u.Path, `\`) {
		return errors.New(`has a backslash in its path`)
	}
	for seg := range strings.SplitSeq(u.Path, "/") {
		if seg == "." || seg == ".." {
			return errors.New(`has a "." or ".." segment in its path`)
		}
	}
	return nil
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

func knownProvider(p Provider) bool {
	switch p {
	case ProviderWebhook, ProviderSlack, ProviderTeams:
		return true
	}
	return false
}
