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
// of its message, and the Watcher looks for it in the audit index before
// writing, so a window's start and end are each recorded once, whoever
// led when it happened (a replica that takes over waits Settle before its
// first step, for its index to hold its predecessor's last records, and a
// step stops writing once Active says no). A step looks back Lookback
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
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/limit"
)

// FreezeLister reads the stored freezes (implemented by *freeze.Store).
type FreezeLister interface {
	List(ctx context.Context) (freeze.List, error)
}

// Records reads and appends audit records (implemented by *audit.Store,
// whose index every replica keeps).
type Records interface {
	List(ctx context.Context, f audit.Filter) (audit.Page, error)
	Append(ctx context.Context, r audit.Record) (audit.Record, error)
}

// Subject is the actor subject of the records: the schedule, not a person.
const Subject = "freeze-schedule"

// Defaults of a Watcher.
const (
	DefaultEvery    = 10 * time.Second
	DefaultLookback = 15 * time.Minute
	// stepTimeout bounds one step's reads and writes.
	stepTimeout = 30 * time.Second
	// maxPages bounds the pages of the freezes' records one step reads.
	maxPages = 30
)

// Watcher records scheduled freeze windows starting and ending.
type Watcher struct {
	Freezes FreezeLister
	Records Records
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
}

// DefaultSettle is a Watcher's default Settle.
const DefaultSettle = 5 * time.Second

// Run steps every Every until ctx ends, while Active says so, starting
// Settle after Active turned to yes.
func (w *Watcher) Run(ctx context.Context) {
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
	held, err := w.recorded(ctx, since, at)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range edges {
		verb := Verb(e)
		if held[verb][e.Key()] {
			continue
		}
		if !w.active() {
			return n, nil // the Lease moved on meanwhile: the next holder records the rest
		}
		if _, err := w.Records.Append(ctx, Record(e)); err != nil {
			return n, fmt.Errorf("freezewatch: record %s of freeze window %s: %w", verb, e.Key(), err)
		}
		n++
		w.log().Info("freezewatch: recorded", "verb", verb, "window", e.Key())
	}
	return n, nil
}

// recorded returns the window keys on record per verb in [since, until]:
// an unfreeze record's key (a window ended by hand, freeze.Store.End)
// counts as its freeze-end, so the end of a window a person ended is not
// recorded a second time by the schedule.
func (w *Watcher) recorded(ctx context.Context, since, until time.Time) (map[audit.Verb]map[string]bool, error) {
	out := map[audit.Verb]map[string]bool{audit.VerbFreezeStart: {}, audit.VerbFreezeEnd: {}}
	// One read of the freezes' stream; KeyOf keeps the window records.
	f := audit.Filter{Cluster: freeze.RecordCluster, Environment: freeze.RecordEnvironment, Since: since, Until: until, Limit: audit.MaxLimit}
	for range maxPages {
		page, err := w.Records.List(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("freezewatch: read the freeze records: %w", err)
		}
		for _, r := range page.Records {
			if k, ok := KeyOf(r); ok {
				v := r.Verb
				if v == audit.VerbUnfreeze {
					v = audit.VerbFreezeEnd
				}
				out[v][k] = true
			}
		}
		if page.Continue == "" {
			break
		}
		f.Continue = page.Continue
	}
	return out, nil
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
