package templates

import (
	"strconv"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/notify"
)

// NotificationsProps is the Notifications section of an App's or an
// environment's page: its subscriptions, each with its delivery log, and
// the form that adds one.
type NotificationsProps struct {
	// Configured is false when the console has no notifications (no
	// namespace of its own); the section says so.
	Configured bool
	// Hosts is the delivery allowlist: empty, nothing is sent.
	Hosts []string
	// Scope names what the subscriptions are about ("checkout", "the
	// environment prod"), for headings.
	Scope         string
	Subscriptions []SubscriptionRow
	// Error says the subscriptions could not be read.
	Error string
	// CanEdit draws the form and the buttons (roles.Notify here).
	CanEdit bool
	CSRF    string
	// CreateURL receives the form.
	CreateURL string
	// Triggers are the form's choices.
	Triggers []notify.TriggerType
	Now      time.Time
}

// SubscriptionRow is one subscription as the section shows it: its URL
// redacted, its Secret by name and key only.
type SubscriptionRow struct {
	ID, Provider, URL, Secret, Author string
	Triggers                          []notify.Trigger
	Created                           time.Time
	TestURL, DeleteURL                string
	// Log is its delivery log, newest first (at most notify.LogEntries).
	Log []notify.LogEntry
	// LogError says the log could not be read.
	LogError string
}

// deliveryStatus is a delivery's status code, "–" when none came back.
func deliveryStatus(code int) string {
	if code == 0 {
		return orDash("")
	}
	return strconv.Itoa(code)
}

// latencyText is a delivery's latency.
func latencyText(ms int64) string { return strconv.FormatInt(ms, 10) + " ms" }

// joinHosts lists the allowlist for the form's hint.
func joinHosts(hosts []string) string { return strings.Join(hosts, ", ") }

// notificationsCount is the Notifications section's count: its
// subscriptions ("" when there are none to read).
func notificationsCount(p NotificationsProps) string {
	if !p.Configured || p.Error != "" {
		return ""
	}
	return itoa(len(p.Subscriptions))
}
