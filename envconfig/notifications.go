package envconfig

import (
	"fmt"
	"slices"

	"github.com/hanzoai/deploy-web/internal/hostlist"
)

// Notifications configures the console's notifications (package notify):
// the top-level `notifications:` key of the environments file, beside the
// environments, since the console reads that file and the registry
// allowlist lives there too. Plans and applies ignore it.
type Notifications struct {
	// Hosts are the only hosts a notification may be sent to, each a host
	// or host:port matched exactly (ASCII letter case aside) against a
	// subscription's URL and every address dialled, redirects included
	// (they are not followed). Empty: nothing is sent, and the pages say
	// so. Operator-trusted: a subscription never adds one.
	Hosts []string `json:"hosts"`
	// Keys are the only Secret keys a subscription may name, each with
	// the provider, URL prefix and scope it may be used for (NotificationKey,
	// decided by notify.CheckKey when a subscription is saved and before
	// every delivery). A key not listed cannot be named at all.
	Keys []NotificationKey `json:"keys"`
}

// validate checks every host of n (hostlist.Check) and refuses
// duplicates, naming each mistake's path.
func (n *Notifications) validate(bad func(field, format string, a ...any)) {
	if n == nil {
		return
	}
	seen := map[string]int{}
	for i, h := range n.Hosts {
		f := fmt.Sprintf("notifications.hosts[%d]", i)
		if err := hostlist.Check(h); err != nil {
			bad(f, "%v", err)
			continue
		}
		c := hostlist.Canonical(h)
		if j, dup := seen[c]; dup {
			bad(f, "%q is the same host as notifications.hosts[%d]", h, j)
			continue
		}
		seen[c] = i
	}
	keys := map[SecretRef]int{}
	for i, k := range n.Keys {
		f := fmt.Sprintf("notifications.keys[%d]", i)
		for _, fe := range ValidateNotificationKey(k, n.Hosts) {
			bad(f+"."+fe.Field, "%s", fe.Message)
		}
		if j, dup := keys[k.SecretRef]; dup {
			bad(f+".secretRef", "Secret %s key %s is also declared by notifications.keys[%d]: one declaration per key", k.SecretRef.Name, k.SecretRef.Key, j)
			continue
		}
		keys[k.SecretRef] = i
	}
}

// NotificationKeys returns the Secret keys subscriptions may name (nil
// without a notifications key).
func (c *Config) NotificationKeys() []NotificationKey {
	if c == nil || c.Notifications == nil {
		return nil
	}
	return slices.Clone(c.Notifications.Keys)
}

// NotificationHosts returns the notifications allowlist (nil without a
// notifications key).
func (c *Config) NotificationHosts() []string {
	if c == nil || c.Notifications == nil {
		return nil
	}
	return append([]string(nil), c.Notifications.Hosts...)
}
