// Package freezewatch puts a scheduled freeze's windows on record: when a
// window of a stored freeze starts or ends by itself (a recurring freeze's
// occurrence, a one-off freeze created ahead of its start, any freeze
// reaching its end), it appends one audit record, verb freeze-start or
// freeze-end, which the audit-fed notifications (freeze-start,
// freeze-end) and the timeline read like any other record.
//
// One replica records: the Watcher acts only while Active says so (the
// notification sender's Lease). Each record carries its window's key
// (freeze.Edge.Key: the freeze's id and the window's start) at the start
// of its message; the Watcher learns the keys on record from the one
// feed of audit records (audit/recordfeed, which every replica's Watcher
// subscribes to) and has it pass before writing, so a window's start and
// end are each recorded once, whoever led when it happened (a replica
// that takes over waits Settle before its first step, for its index to
// hold its predecessor's last records, and a step stops writing once
// Active says no). A step looks back Lookback
// (15 minutes), so an edge that fell in a leader handover (at most the
// Lease's 15 s) or while the console was down for less than that is
// recorded late, not lost.
// It never imports the handlers: package freeze holds the stream's names.
package freezewatch

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/audit/recordfeed"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/limit"
)

// FreezeLister reads the stored freezes (implemented by *freeze.Store).
type FreezeLister interface {
	List(ctx context.Context) (freeze.List, error)
}

// Records appends audit records (implemented by *audit.Store).
type Records interface {
	Append(ctx context.Context, r audit.Record) (audit.Record, error)
}

// Feed is the one feed of audit records (implemented by
// *recordfeed.Feed): the Watcher learns from it which windows are on
// record, whichever replica wrote them, and has it pass before a step, so
// that a step acts on the index as it is.
type Feed interface {
	Subscribe(s recordfeed.Subscription)
	Pass(ctx context.Context) error
}

// Subject is the actor subject of the records: the schedule, not a person.
const Subject = "freeze-schedule"

// Defaults of a Watcher.
const (
	DefaultEvery    = 10 * time.Second
	DefaultLookback = 15 * time.Minute
	// stepTimeout bounds one step's reads and writes.
	stepTimeout = 30 * time.Second
)

// Watcher records scheduled freeze windows starting and ending.
type Watcher struct {
	Freezes FreezeLister
	Records Records
	// Feed is the records feed it subscribes to (on its first Run or
	// Step; every replica's Watcher subscribes, active or not, so that
	// the one that takes over knows its predecessor's records).
	Feed Feed
	// Active says whether this replica records (nil: always).
	Active func() bool
	// Every is the period of a step (DefaultEvery); Lookback how far
	// back a step finds edges not yet recorded (DefaultLookback).
	Every, Lookback time.Duration
	// Settle is how long Run waits, once Active says yes after no, before
	// its first step (DefaultSettle; real time): the audit index of a
	// replica that just took over catches up with the records its
	// predecessor wrote last.
	Settle time.Duration
	Now    func() time.Time
	Log    *slog.Logger

	subscribe sync.Once
	mu        sync.Mutex
	// held are the windows on record: verb -> window key -> the record's
	// time (forgotten past Lookback).
	held map[audit.Verb]map[string]time.Time
}

// DefaultSettle is a Watcher's default Settle.
const DefaultSettle = 5 * time.Second

// Run steps every Every until ctx ends, while Active says so, starting
// Settle after Active turned to yes.
func (w *Watcher) Run(ctx context.Context) {
	w.subscribeOnce()
	t := time.NewTicker(limit.Or(w.Every, DefaultEvery))
	defer t.Stop()
	var activeSince time.Time // zero while not active
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !w.active() {
			activeSince = time.Time{}
			continue
		}
		if activeSince.IsZero() {
			activeSince = time.Now()
		}
		if time.Since(activeSince) < limit.Or(w.Settle, DefaultSettle) {
			continue
		}
		if _, err := w.Step(ctx); err != nil && ctx.Err() == nil {
			w.log().Warn("freezewatch: scheduled freeze windows not recorded; retrying on the next step", "err", err)
		}
	}
}

// Step records the window starts and ends of the last Lookback that are
// not on record yet, oldest first, and returns how many it recorded.
func (w *Watcher) Step(ctx context.Context) (int, error) {
	w.subscribeOnce()
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	at := now()
	since := at.Add(-limit.Or(w.Lookback, DefaultLookback))
	list, err := w.Freezes.List(ctx)
	if err != nil {
		return 0, fmt.Errorf("freezewatch: read the freezes: %w", err)
	}
	edges := list.Edges(since, at)
	if len(edges) == 0 {
		return 0, nil
	}
	if err := w.Feed.Pass(ctx); err != nil {
		return 0, fmt.Errorf("freezewatch: read the freeze records: %w", err)
	}
	w.forget(since)
	n := 0
	for _, e := range edges {
		verb := Verb(e)
		if w.isHeld(verb, e.Key()) {
			continue
		}
		if !w.active() {
			return n, nil // the Lease moved on meanwhile: the next holder records the rest
		}
		rec, err := w.Records.Append(ctx, Record(e))
		if err != nil {
			return n, fmt.Errorf("freezewatch: record %s of freeze window %s: %w", verb, e.Key(), err)
		}
		w.observe([]audit.Record{rec})
		n++
		w.log().Info("freezewatch: recorded", "verb", verb, "window", e.Key())
	}
	return n, nil
}

// subscribeOnce subscribes the Watcher to its Feed, with a backfill of
// its Lookback.
func (w *Watcher) subscribeOnce() {
	w.subscribe.Do(func() {
		w.Feed.Subscribe(recordfeed.Subscription{Name: "freezewatch", Backfill: limit.Or(w.Lookback, DefaultLookback), Deliver: w.observe})
	})
}

// observe notes the windows on record in recs: an unfreeze record's key
// (a window ended by hand, freeze.Store.End) counts as its freeze-end, so
// the end of a window a person ended is not recorded a second time by the
// schedule.
func (w *Watcher) observe(recs []audit.Record) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held == nil {
		w.held = map[audit.Verb]map[string]time.Time{audit.VerbFreezeStart: {}, audit.VerbFreezeEnd: {}}
	}
	for _, r := range recs {
		if k, ok := KeyOf(r); ok {
			v := r.Verb
			if v == audit.VerbUnfreeze {
				v = audit.VerbFreezeEnd
			}
			w.held[v][k] = r.Time
		}
	}
}

// isHeld says whether the window key is on record with verb.
func (w *Watcher) isHeld(verb audit.Verb, key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.held[verb][key]
	return ok
}

// forget drops the windows recorded before since (no step looks at their
// edges again), so held stays bounded by the windows of a Lookback.
func (w *Watcher) forget(since time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, keys := range w.held {
		for k, at := range keys {
			if at.Before(since) {
				delete(keys, k)
			}
		}
	}
}

func (w *Watcher) active() bool { return w.Active == nil || w.Active() }

func (w *Watcher) log() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}

// Verb is the audit verb of an edge.
func Verb(e freeze.Edge) audit.Verb {
	if e.End {
		return audit.VerbFreezeEnd
	}
	return audit.VerbFreezeStart
}

// Record is the audit record of an edge: at the edge's time, in the
// freezes' stream, its message starting with the window's key in
// brackets ("[fz-0123abcd@2026-12-04T17:00:00Z] scheduled freeze ...").
func Record(e freeze.Edge) audit.Record {
	f := &e.Freeze
	what := "started, frozen until " + freeze.Stamp(e.Window.End)
	if e.End {
		what = "ended"
	}
	return audit.Record{Time: e.At(), Actor: audit.Actor{Subject: Subject}, Verb: Verb(e),
		Cluster: freeze.RecordCluster, Environment: freeze.RecordEnvironment, Outcome: audit.OutcomeSucceeded,
		Message:  "[" + e.Key() + "] scheduled window of freeze " + f.ID + " of " + f.Scope.String() + " " + what + ": " + f.Reason,
		Blockers: []string{}}
}

// KeyOf returns the window key a record of this package carries, or an
// unfreeze record of a window ended by hand (UnfreezeMessage), false for
// any other record (another verb or stream, or no key first in its
// message: a reason cannot forge one, it comes after).
func KeyOf(r audit.Record) (string, bool) {
	if (r.Verb != audit.VerbFreezeStart && r.Verb != audit.VerbFreezeEnd && r.Verb != audit.VerbUnfreeze) ||
		r.Cluster != freeze.RecordCluster || r.Environment != freeze.RecordEnvironment {
		return "", false
	}
	rest, ok := strings.CutPrefix(r.Message, "[")
	if !ok {
		return "", false
	}
	key, _, ok := strings.Cut(rest, "]")
	return key, ok && key != ""
}

// UnfreezeMessage is the message of the unfreeze record of a freeze a
// person ended (freeze.Store.End), msg their words: it starts with the key
// of the window it ended in, when it was in one, so that the schedule
// records no freeze-end of that window and notifications announce its end
// once (they deduplicate on the key).
func UnfreezeMessage(ended *freeze.Edge, msg string) string {
	if ended == nil {
		return msg
	}
	return "[" + ended.Key() + "] " + msg
}
