// Package auditfeed turns audit records into notifications: the records
// of failed applies and auto-syncs, promotion requests and freezes, read
// from the audit index on the replica that sends (notify.Sender), become
// notify.Events. It is the one place records become events: no handler
// notifies. (Apart from package notify, so that notify does not import
// the audit trail and its dependencies.)
package auditfeed

import (
	"cmp"
	"context"
	"time"

	"github.com/hanzoai/deploy-web/audit"
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

// RecordLister reads audit records (implemented by audit.Store, whose
// index every replica keeps).
type RecordLister interface {
	List(ctx context.Context, f audit.Filter) (audit.Page, error)
}

// Feed finds the records appended since it last looked, on any
// replica (it reads the audit index, not the appends of its own), and
// passes on the events they are.
type Feed struct {
	Records RecordLister
	// Every is the period of a look (10s).
	Every time.Duration
	// Lookback is how far back a look reaches (1h): a record whose time
	// (its action's start) is older when it appears is not seen.
	Lookback time.Duration
	// Active says whether to look (the Sender's Leading: only the
	// replica that sends needs to).
	Active func() bool
	// Link is the console's page of a record's event (nil: no link).
	Link func(notify.Event) string
	Now  func() time.Time

	seen map[string]time.Time // record id -> record time
}

// maxAuditPages bounds the pages one look reads.
const maxAuditPages = 10

// Run looks every Every until ctx ends, handing each new record's event
// to send. Its first look only notes the records there are: what
// happened before the console started is not announced.
func (f *Feed) Run(ctx context.Context, send func(notify.Event)) {
	every := cmp.Or(f.Every, 10*time.Second)
	f.look(ctx, nil)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if f.Active == nil || f.Active() {
				f.look(ctx, send)
			}
		}
	}
}

// look reads the records of the last Lookback and passes on those not
// seen before (none when send is nil); it forgets ids past Lookback.
func (f *Feed) look(ctx context.Context, send func(notify.Event)) {
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	since := now().Add(-cmp.Or(f.Lookback, time.Hour))
	if f.seen == nil {
		f.seen = map[string]time.Time{}
	}
	filter := audit.Filter{Since: since, Limit: audit.MaxLimit}
	var fresh []audit.Record
	for range maxAuditPages {
		page, err := f.Records.List(ctx, filter)
		if err != nil {
			return // the next look tries again; nothing is marked seen
		}
		for _, r := range page.Records {
			if _, ok := f.seen[r.ID]; !ok {
				fresh = append(fresh, r)
			}
		}
		if page.Continue == "" {
			break
		}
		filter.Continue = page.Continue
	}
	// Oldest first, as they happened (a page is newest first).
	for i := len(fresh) - 1; i >= 0; i-- {
		r := fresh[i]
		f.seen[r.ID] = r.Time
		if send == nil {
			continue
		}
		if ev, ok := Event(r); ok {
			if f.Link != nil {
				ev.Link = f.Link(ev)
			}
			send(ev)
		}
	}
	for id, t := range f.seen {
		if t.Before(since) {
			delete(f.seen, id)
		}
	}
}
