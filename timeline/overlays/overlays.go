// Package overlays works out the freezes and auto-sync pauses that cover an
// App over a range (timeline.Overlay), when its timeline is drawn or asked
// for: freezes from the freezes the console shows (the gate's snapshot:
// the stored ones, lapsed ones until they are pruned), pauses from the
// audit records of the App's environments. It sits beside timeline, not
// in it, because it reads the freeze and audit packages, which are above
// the timeline (as timeline/recordentries does).
package overlays

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/gitops"
	"github.com/hanzoai/deploy-web/timeline"
)

// Max bounds the spans of each kind one timeline shows (the newest are
// kept).
const Max = 100

// Freezes are the windows of the freezes of l that hold target t
// (freeze.Freeze.Touches, the gate's own rule) and overlap [since,
// until), oldest first, at most limit (the newest), and whether some were
// left out. A window is given whole; the chart cuts it to the range.
// It holds at most 2*limit spans at a time (the store's 200 freezes of up
// to 1000 windows each could overlap a range with many more).
func Freezes(l freeze.List, t freeze.Target, since, until time.Time, limit int) ([]timeline.Overlay, bool) {
	var out []timeline.Overlay
	cut := false
	for i := range l {
		f := &l[i]
		if !f.Touches(t) {
			continue
		}
		for w := range f.Windows() {
			if !w.Start.Before(until) {
				break
			}
			if !w.End.After(since) {
				continue
			}
			out = append(out, timeline.Overlay{Kind: timeline.OverlayFreeze, Start: w.Start.UTC(), End: w.End.UTC(), Reason: f.Reason,
				By: f.Author.String(), Ticket: f.Ticket, Ref: f.ID, Scope: f.Scope.String()})
			if len(out) >= 2*limit {
				out, _ = newest(out, limit)
				cut = true
			}
		}
	}
	out, more := newest(out, limit)
	return out, cut || more
}

// newest sorts spans oldest first and keeps the newest limit.
func newest(spans []timeline.Overlay, limit int) ([]timeline.Overlay, bool) {
	slices.SortStableFunc(spans, func(a, b timeline.Overlay) int {
		return cmp.Or(a.Start.Compare(b.Start), a.End.Compare(b.End), strings.Compare(a.Ref, b.Ref))
	})
	if len(spans) > limit {
		return slices.Clip(spans[len(spans)-limit:]), true
	}
	return spans, false
}

// pauseOfRecord reads the pause a succeeded pause record says: until when
// and why (gitops.PauseMessage: "auto-sync of dev paused until
// 2026-12-03T06:00:00Z: reason"); false for a message of another form.
func pauseOfRecord(r *audit.Record) (until time.Time, reason string, ok bool) {
	_, rest, ok := strings.Cut(r.Message, gitops.PausedUntilWords)
	if !ok {
		return time.Time{}, "", false
	}
	stamp, reason, _ := strings.Cut(rest, ": ")
	until, err := time.Parse(time.RFC3339, stamp)
	if err != nil {
		return time.Time{}, "", false
	}
	return until, reason, true
}

// Pauses are the auto-sync pauses of the environments envs that overlap
// [since, until), from their pause and resume records (any order): a
// pause lasts from its record until the time it names, the environment's
// next resume, or its next pause (which replaces it). Oldest first, at
// most limit (the newest), and whether some were left out. Refused and
// failed records changed nothing and are skipped.
func Pauses(recs []audit.Record, envs []string, since, until time.Time, limit int) ([]timeline.Overlay, bool) {
	recs = slices.Clone(recs)
	slices.SortStableFunc(recs, func(a, b audit.Record) int { return cmp.Or(a.Time.Compare(b.Time), strings.Compare(a.ID, b.ID)) })
	open := map[string]*timeline.Overlay{}
	var out []timeline.Overlay
	closeAt := func(env string, at time.Time, ended bool) {
		p := open[env]
		if p == nil {
			return
		}
		delete(open, env)
		if at.Before(p.End) {
			p.End, p.Ended = at, ended
		}
		if p.End.After(since) && p.Start.Before(until) {
			out = append(out, *p)
		}
	}
	for i := range recs {
		r := &recs[i]
		if r.Outcome != audit.OutcomeSucceeded || !slices.Contains(envs, r.Environment) {
			continue
		}
		switch r.Verb {
		case audit.VerbPause:
			pu, reason, ok := pauseOfRecord(r)
			if !ok {
				continue
			}
			closeAt(r.Environment, r.Time, false)
			open[r.Environment] = &timeline.Overlay{Kind: timeline.OverlayPause, Start: r.Time, End: pu, Reason: reason,
				By: r.Actor.String(), Ref: r.Environment, Scope: r.Environment}
		case audit.VerbResume:
			closeAt(r.Environment, r.Time, true)
		}
	}
	for _, env := range envs {
		if p := open[env]; p != nil {
			closeAt(env, p.End, false)
		}
	}
	return newest(out, limit)
}

// pauseLookback is how far before a range pause records are read: a
// pause lasts at most autosync.MaxPause, so one that started earlier is
// over before the range.
const pauseLookback = autosync.MaxPause

// maxPauseRecordPages bounds the pages of pause records one timeline reads.
const maxPauseRecordPages = 4

// FreezeList is what a Reader reads the freezes from (implemented by
// *freeze.Gate).
type FreezeList interface {
	Snapshot(ctx context.Context) (freeze.List, time.Time, error)
}

// RecordList is what a Reader reads the pause records from (implemented
// by *audit.Store).
type RecordList interface {
	List(ctx context.Context, f audit.Filter) (audit.Page, error)
}

// Reader reads the spans of an App.
type Reader struct {
	// Freezes are the freezes (nil: none shown).
	Freezes FreezeList
	// Records are the audit records (nil: no pause shown).
	Records RecordList
	// ReadWait bounds each read of a page of records.
	ReadWait time.Duration
	Log      *slog.Logger
}

// Of are the freezes and pauses that cover the App of freeze target t,
// whose namespace is deployed by the environments envs, over [since,
// until), oldest first (by start), and whether some were left out.
// Freezes that cannot be read, or pause records, leave their spans out
// (the page still shows the entries; the log says why).
func (r Reader) Of(ctx context.Context, t freeze.Target, envs []string, since, until time.Time) ([]timeline.Overlay, bool) {
	var spans []timeline.Overlay
	var cut bool
	if r.Freezes != nil {
		l, _, err := r.Freezes.Snapshot(ctx)
		if err != nil {
			r.Log.Warn("timeline: freezes not read; the timeline shows no freeze", "err", err)
		} else {
			spans, cut = Freezes(l, t, since, until, Max)
		}
	}
	if r.Records == nil || len(envs) == 0 {
		return spans, cut
	}
	var recs []audit.Record
	for _, verb := range []audit.Verb{audit.VerbPause, audit.VerbResume} {
		flt := audit.Filter{Verb: verb, Outcome: audit.OutcomeSucceeded, Cluster: t.Cluster, Namespace: t.Namespace, Since: since.Add(-pauseLookback), Until: until, Limit: audit.MaxLimit}
		for range maxPauseRecordPages {
			rctx, cancel := context.WithTimeout(ctx, r.ReadWait)
			p, err := r.Records.List(rctx, flt)
			cancel()
			if err != nil {
				r.Log.Warn("timeline: pause records not read; the timeline shows no pause", "err", err)
				return spans, cut
			}
			recs = append(recs, p.Records...)
			if p.Continue == "" {
				break
			}
			flt.Continue = p.Continue
		}
	}
	pauses, pcut := Pauses(recs, envs, since, until, Max)
	spans = append(spans, pauses...)
	slices.SortStableFunc(spans, func(a, b timeline.Overlay) int { return a.Start.Compare(b.Start) })
	return spans, cut || pcut
}
