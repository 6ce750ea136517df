// Package recordfeed is the one feed of audit records: it reads the audit
// index (every replica keeps one, so a record any replica appended is
// seen) and hands each record to every subscriber once, oldest first. The
// timeline (deploy and rollback markers), the notifications (failed
// applies, promotion requests, freezes: notify/auditfeed) and the freeze
// watcher (which windows are on record: freeze/freezewatch) subscribe; a
// new reader of the records subscribes too, it does not poll the index.
//
// The rules, each in one place here:
//
//   - The bound: one pass reads at most MaxRecords records (pages of
//     audit.MaxLimit, each within pageTimeout), newest first, so a hostile
//     or runaway record set costs one bounded read a pass; the records past
//     the bound are not delivered (logged).
//   - The cursor: a pass reads the records whose time (its action's start)
//     is at or after the last successful pass's start less Window. A
//     record is new the first time a pass reads it; ids stay known while
//     in the window, so a record is delivered once however many passes
//     read it. A failed read moves nothing: the next pass reads from the
//     same cursor. A record whose time is older than Window when it first
//     appears (an action that ran longer) is not delivered.
//   - Resume: a feed keeps nothing across a restart; the audit index is
//     the record. A subscription says how far back its first delivery
//     reaches (Backfill): the timeline's whole age, the freeze watcher's
//     lookback, none for notifications (what happened before the console
//     started is not announced; a record that appears after the
//     subscription is, whatever its time). Each subscriber's own
//     deduplication (the timeline store's entries, the delivery logs, the
//     window keys) covers a record delivered before and after a restart.
//   - Leases: a subscription's Active says whether it takes deliveries now
//     (nil: always). The records first read while it was not active are
//     delivered when it turns active, while still in the window, so a
//     Lease handover loses none (the subscriber deduplicates on its keys).
package recordfeed

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/internal/limit"
)

// Defaults of a Feed.
const (
	// DefaultEvery is the period of a pass.
	DefaultEvery = 10 * time.Second
	// DefaultWindow is how far before its cursor a pass reads.
	DefaultWindow = time.Hour
	// MaxRecords bounds the records one pass reads.
	MaxRecords = 20 * audit.MaxLimit
	// pageTimeout bounds one page's read.
	pageTimeout = 30 * time.Second
)

// Subscription is a reader of the records.
type Subscription struct {
	// Name names the subscriber in logs.
	Name string
	// Backfill is how far back before Subscribe its first delivery
	// reaches (0: only records that appear after it subscribed).
	Backfill time.Duration
	// Active says whether it takes deliveries now (nil: always).
	Active func() bool
	// Deliver takes new records, oldest first (by time, then id). It
	// runs on the pass's goroutine and must not block for long nor call
	// the feed back.
	Deliver func(recs []audit.Record)
}

// Options of a Feed.
type Options struct {
	// Every is the period of Run's passes (DefaultEvery).
	Every time.Duration
	// Window is how far before its cursor a pass reads (DefaultWindow).
	Window time.Duration
	// MaxRecords bounds one pass's read (MaxRecords, at most MaxRecords).
	MaxRecords int
	Now        func() time.Time
	Log        *slog.Logger
}

// Feed reads the audit records and delivers them to its subscribers.
type Feed struct {
	records audit.Lister
	o       Options

	mu     sync.Mutex // serialises passes and guards the fields below
	pass   uint64     // the number of the last successful pass
	cursor time.Time  // the start of the last successful pass
	seen   map[string]seen
	subs   []*sub
}

// seen is what the feed knows of a record in its window.
type seen struct {
	at   time.Time // the record's time
	pass uint64    // the pass that first read it
}

type sub struct {
	Subscription
	since     time.Time // Subscribe's time less Backfill
	primed    uint64    // the first pass after Subscribe (0: none yet)
	delivered uint64    // the last pass delivered (0: none)
}

// New returns a feed of records.
func New(records audit.Lister, o Options) *Feed {
	o.Every = limit.Or(o.Every, DefaultEvery)
	o.Window = limit.Or(o.Window, DefaultWindow)
	if o.MaxRecords <= 0 || o.MaxRecords > MaxRecords {
		o.MaxRecords = MaxRecords
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Feed{records: records, o: o, seen: map[string]seen{}}
}

// Subscribe adds s: from the next pass on, it is delivered the records
// since Backfill before now, and every record that appears after.
func (f *Feed) Subscribe(s Subscription) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.subs = append(f.subs, &sub{Subscription: s, since: f.o.Now().Add(-max(s.Backfill, 0))})
}

// Run passes at once and then every Every until ctx ends.
func (f *Feed) Run(ctx context.Context) {
	t := time.NewTicker(f.o.Every)
	defer t.Stop()
	for {
		if err := f.Pass(ctx); err != nil && ctx.Err() == nil {
			f.o.Log.Warn("recordfeed: audit records not read; the next pass reads from the same cursor", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// item is a record of one pass.
type item struct {
	r        *audit.Record
	first    uint64 // the pass that first read it
	backfill bool   // older than the window: for new subscriptions' backfill only
}

// Pass reads the records once and delivers the new ones (a subscriber
// that must be current before it acts, like the freeze watcher before a
// write, calls it; Run calls it every Every). On a read error it delivers
// nothing and moves nothing.
func (f *Feed) Pass(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	start := f.o.Now()
	cursor := f.cursor
	if cursor.IsZero() || cursor.After(start) {
		cursor = start
	}
	window := cursor.Add(-f.o.Window)
	since := window
	for _, s := range f.subs {
		if s.primed == 0 && s.since.Before(since) {
			since = s.since
		}
	}
	recs, truncated, err := f.read(ctx, since)
	if err != nil {
		return err
	}
	if truncated {
		f.o.Log.Warn("recordfeed: more audit records than one pass reads; the oldest of them are not delivered",
			"max", f.o.MaxRecords, "since", since)
	}
	pass := f.pass + 1
	slices.SortStableFunc(recs, func(a, b audit.Record) int {
		return cmp.Or(a.Time.Compare(b.Time), strings.Compare(a.ID, b.ID))
	})
	items := make([]item, 0, len(recs))
	inPass := make(map[string]bool, len(recs))
	for i := range recs {
		r := &recs[i]
		if r.ID == "" || inPass[r.ID] {
			continue // a record without an id cannot be told apart; a page repeated it
		}
		inPass[r.ID] = true
		if r.Time.Before(window) {
			items = append(items, item{r: r, backfill: true})
			continue
		}
		s, ok := f.seen[r.ID]
		if !ok {
			s = seen{at: r.Time, pass: pass}
			f.seen[r.ID] = s
		}
		items = append(items, item{r: r, first: s.pass})
	}
	for _, s := range f.subs {
		priming := s.primed == 0
		if priming {
			s.primed = pass
		}
		if s.Active != nil && !s.Active() {
			continue
		}
		var out []audit.Record
		for _, it := range items {
			if s.takes(it, priming) {
				out = append(out, *it.r)
			}
		}
		s.delivered = pass
		if len(out) > 0 {
			s.Deliver(out)
		}
	}
	f.pass, f.cursor = pass, start
	f.forget(start.Add(-f.o.Window))
	return nil
}

// takes says whether s is delivered it on this pass (priming: the
// subscription's first pass).
func (s *sub) takes(it item, priming bool) bool {
	switch {
	case it.backfill:
		return priming && !it.r.Time.Before(s.since)
	case it.first <= s.delivered:
		return false // delivered before
	case it.first <= s.primed && it.r.Time.Before(s.since):
		return false // there before the subscription, older than its backfill
	}
	return true
}

// forget drops the ids older than cutoff (no pass reads them again as new),
// and the oldest past 2×MaxRecords (a flood of records within the
// window), so the feed's memory is bounded whatever the records.
func (f *Feed) forget(cutoff time.Time) {
	for id, s := range f.seen {
		if s.at.Before(cutoff) {
			delete(f.seen, id)
		}
	}
	if over := len(f.seen) - 2*f.o.MaxRecords; over > 0 {
		type idAt struct {
			id string
			at time.Time
		}
		all := make([]idAt, 0, len(f.seen))
		for id, s := range f.seen {
			all = append(all, idAt{id, s.at})
		}
		slices.SortFunc(all, func(a, b idAt) int { return cmp.Or(a.at.Compare(b.at), strings.Compare(a.id, b.id)) })
		for _, e := range all[:over] {
			delete(f.seen, e.id)
		}
	}
}

// read returns the records since since, newest first, at most MaxRecords
// in at most MaxRecords/audit.MaxLimit+1 pages; truncated when the bound
// stopped it.
func (f *Feed) read(ctx context.Context, since time.Time) (recs []audit.Record, truncated bool, err error) {
	flt := audit.Filter{Since: since, Limit: audit.MaxLimit}
	for range f.o.MaxRecords/audit.MaxLimit + 1 {
		pctx, cancel := context.WithTimeout(ctx, pageTimeout)
		p, err := f.records.List(pctx, flt)
		cancel()
		if err != nil {
			return nil, false, fmt.Errorf("recordfeed: read the audit records since %s: %w", since.UTC().Format(time.RFC3339), err)
		}
		room := f.o.MaxRecords - len(recs)
		if len(p.Records) > room {
			return append(recs, p.Records[:room]...), true, nil
		}
		recs = append(recs, p.Records...)
		if p.Continue == "" {
			return recs, false, nil
		}
		if len(recs) == f.o.MaxRecords {
			return recs, true, nil
		}
		flt.Continue = p.Continue
	}
	return recs, true, nil
}
