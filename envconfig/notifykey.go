package envconfig

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/hanzoai/deploy-web/internal/hostlist"
	"github.com/hanzoai/deploy-web/internal/loopback"
	"github.com/hanzoai/deploy-web/internal/scope"
)

// NotificationKey declares one Secret key a subscription may name (an entry of
// notifications.keys in the environments file): the provider it is for,
// the URL prefix its messages go to and the Apps a subscription using it
// may be about. A subscription naming a key that no entry declares, or
// using it elsewhere, is refused when it is saved and again before every
// delivery (CheckKey), so that a person who may create subscriptions
// cannot send another team's HMAC key or Slack path to a URL of their
// choosing.
type NotificationKey struct {
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

// ValidateNotificationKey checks one declaration against hosts (the delivery
// allowlist) and returns its mistakes, each naming its field relative to
// the entry ("urlPrefix", "scope.apps[0]").
func ValidateNotificationKey(k NotificationKey, hosts []string) []*FieldError {
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
	if !KnownProvider(k.Provider) {
		bad("provider", "%q is not a provider: webhook, slack or teams", k.Provider)
	}
	if err := CheckNotificationURL(k.URLPrefix, hosts); err != nil {
		bad("urlPrefix", "%v", err)
	} else if err := CheckURLPath(k.URLPrefix); err != nil {
		bad("urlPrefix", "%v", err)
	}
	if err := k.Scope.Validate("scope"); err != nil {
		field, msg, _ := strings.Cut(err.Error(), ": ")
		bad(field, "%s", msg)
	}
	return errs
}

// Provider is the kind of receiver, which fixes the payload.
type Provider string

// The providers.
const (
	ProviderWebhook Provider = "webhook"
	ProviderSlack   Provider = "slack"
	ProviderTeams   Provider = "teams"
)

// SecretRef names a key of a Secret in deploy-web's own namespace. For a
// webhook it holds the HMAC key; for Slack and Teams, the secret part of
// the URL, appended to URL verbatim. Its value is never shown, logged or
// returned; the reference itself is not secret.
type SecretRef struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// CheckNotificationURL says what is wrong with a receiver URL: https (http only to a
// loopback host), a listed host, no userinfo, no fragment.
func CheckNotificationURL(raw string, hosts []string) error {
	if raw == "" {
		return errors.New("empty: the receiver's https:// URL")
	}
	if len(raw) > MaxURLLength {
		return fmt.Errorf("longer than %d bytes", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %v", errors.Unwrap(err))
	}
	switch {
	case u.Scheme != "https" && !(u.Scheme == "http" && loopback.Host(u.Hostname())):
		return fmt.Errorf("scheme %q: use https:// (plain http:// only to localhost)", u.Scheme)
	case u.Host == "":
		return errors.New("no host")
	case u.User != nil:
		return errors.New("has userinfo: put credentials in the Secret (secretRef)")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return errors.New("has a fragment (#...)")
	case !URLListed(hosts, u):
		return fmt.Errorf("host %q is not in notifications.hosts: ask an administrator to list it", u.Host)
	}
	return nil
}

// MaxURLLength is the longest receiver URL (a subscription's, a key's
// urlPrefix).
const MaxURLLength = 2048

// URLListed reports whether u's host is listed: as the URL spells it, or,
// for https on port 443 spelled out (Teams Workflows URLs are), as the
// bare host, which dialAllowed lists on 443 too.
func URLListed(hosts []string, u *url.URL) bool {
	if hostlist.Lists(hosts, u.Host) {
		return true
	}
	bare, _ := strings.CutSuffix(u.Host, ":443")
	return u.Scheme == "https" && bare != u.Host && hostlist.Lists(hosts, bare)
}

// CheckURLPath refuses a URL whose decoded path has a "." or ".." segment or
// a backslash: a receiver may resolve them to another path than the one
// the prefix names.
func CheckURLPath(raw string) error {
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

// KnownProvider reports whether p is one of the providers.
func KnownProvider(p Provider) bool {
	switch p {
	case ProviderWebhook, ProviderSlack, ProviderTeams:
		return true
	}
	return false
}
