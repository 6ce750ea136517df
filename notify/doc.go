// Package notify delivers messages about an App to the places people read:
// a generic webhook (signed with HMAC-SHA256), a Slack incoming webhook or
// a Microsoft Teams workflow. It keeps the subscriptions in a ConfigMap,
// reads credentials from Secrets it never shows, sends only to listed
// hosts, deduplicates per (subscription, App, trigger, revision), keeps a
// bounded delivery log per subscription, and sends from one replica only
// (the holder of a Lease).
//
// The caller feeds Events (Sender.Notify) from every replica; the replica
// that holds the Lease delivers them, the others drop them. Events come
// from the timeline's transitions (TimelineFeed: degraded, recovered,
// drift) and from the audit records (package notify/auditfeed: failed
// applies and auto-syncs, promotion requests, freezes); see
// docs/notifications.md.
package notify
