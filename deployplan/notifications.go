package deployplan

import (
	"fmt"

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
}

// NotificationHosts returns the notifications allowlist (nil without a
// notifications key).
func (c *Config) NotificationHosts() []string {
	if c == nil || c.Notifications == nil {
		return nil
	}
	return append([]string(nil), c.Notifications.Hosts...)
}
