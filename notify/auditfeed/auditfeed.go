// Package auditfeed turns audit records into notifications: the records
// of failed applies and auto-syncs, promotion requests and freezes, read
// from the audit index on the replica that sends (notify.Sender), become
// notify.Events. It is the one place records become events: no handler
// notifies. It subscribes to the one feed of records (audit/recordfeed). (Apart from package notify, so that notify does not import
// the audit trail and its dependencies.)
package auditfeed

import (
	"cmp"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/audit/recordfeed"
	"github.com/hanzoai/deploy-web/freeze/freezewatch"
	"github.com/hanzoai/deploy-web/notify"
)

// Event returns the event an audit record is, if any: a failed apply
// is apply-failed; an automatic apply (auto-sync or self-heal) that failed
// or was refused (a blocked plan nobody watched) is auto-sync-failed; a
// promotion request, promotion-requested; a freeze created or a scheduled
// window of one starting (freeze/freezewatch's records), freeze-start; a
// freeze ended early or a window ending, freeze-end; a day-2 action that
// was done (restart, scale, ...), operated. Everything else,
// refused console actions included (their user saw the refusal), is
// none. The revision
// deduplicated on is the record's commit, else a scheduled window's key
// (freezewatch.KeyOf), else its id.
func Event(r audit.Record) (notify.Event, bool) {
	ok := r.Outcome == audit.OutcomeSucceeded
	var t notify.TriggerType
	switch {
	case r.Verb == audit.VerbApply && (r.Outcome == audit.OutcomeFailed || r.Outcome == audit.OutcomeInterrupted):
		t = notify.TriggerApplyFailed
	case (r.Verb == audit.VerbAutoSync || r.Verb == audit.VerbSelfHeal) && !ok:
		t = notify.TriggerAutoSyncFailed
	case r.Verb == audit.VerbPromoteRequest && ok:
		t = notify.TriggerPromotionRequested
	case (r.Verb == audit.VerbFreeze || r.Verb == audit.VerbFreezeStart) && ok:
		t = notify.TriggerFreezeStart
	case (r.Verb == audit.VerbUnfreeze || r.Verb == audit.VerbFreezeEnd) && ok:
		t = notify.TriggerFreezeEnd
	case r.Verb == audit.VerbOperate && ok:
		t = notify.TriggerOperated
	default:
		return notify.Event{}, false
	}
	// A scheduled window's records deduplicate on the window (its key),
	// so that a window is announced once even if two replicas recorded it.
	window, _ := freezewatch.KeyOf(r)
	return notify.Event{Trigger: t, App: r.App, Cluster: r.Cluster, Namespace: r.Namespace, Environment: r.Environment,
		Revision: cmp.Or(r.Commit, window, r.ID), From: r.Before, To: r.After, Message: r.Message, Time: r.Time}, true
}

// Subscription is the notifications' subscription to the records feed
// (audit/recordfeed): while active says so (the Sender's Leading: only
// the replica that sends takes them; the records of a Lease handover come
// when it turns active), each record that is an event goes to send, its
// Link set by link (nil: none). What happened before the console started
// is not announced (no backfill).
func Subscription(active func() bool, link func(notify.Event) string, send func(notify.Event)) recordfeed.Subscription {
	return recordfeed.Subscription{Name: "notify", Active: active, Deliver: func(recs []audit.Record) {
		for _, r := range recs {
			if ev, ok := Event(r); ok {
				if link != nil {
					ev.Link = link(ev)
				}
				send(ev)
			}
		}
	}}
}
