package timeline

import (
	"time"
)

// Coverage returns since when the store's record of app is complete:
// this store has observed the App without a break since then (its first
// Observe after this start, or after the App's last Forget) and has
// dropped none of its entries since (a log at Limits.PerApp dropped its
// oldest, so the record starts at the oldest entry held; nothing is held
// past MaxAge). Zero: the store has not observed the App.
//
// Entries read from the shards reach further back, but not without a
// break: while no replica of this start observed the App (the console was
// down), a state it entered and left again was recorded by nobody, so a
// reader that must prove a state held (the promotion's soak) counts from
// Coverage, not from the oldest entry.
func (s *Store) Coverage(app App) time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	since, ok := s.observed[app]
	if !ok {
		return time.Time{}
	}
	if l := s.logs[app]; l != nil && len(l.entries) >= s.lim.PerApp {
		since = maxTime(since, time.UnixMilli(l.entries[0].at).UTC())
	}
	return maxTime(since, s.opts.Now().Add(-s.lim.MaxAge))
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Span is a state an App held over [From, To), one of the states of a
// state kind (KindHealth's codes, KindDrift's DriftDrifted and
// DriftClean, KindSync's verdicts).
type Span struct {
	From, To time.Time
	State    string
	// Flapped is set over a folded flap (an entry with Count > 1, from
	// its Time to its Last): the App went back and forth between Flapped
	// and State in the span, ending in State.
	Flapped string
}

// Spans returns the spans of kind k's states over [since, until) from an
// App's entries (oldest first, those before since included, so the state
// held at since is known): each entry of kind k starts its To, held until
// the next; before the first, its From; cur (the state now) when there is
// no entry of kind k at all. A folded flap is a span of its own with
// Flapped set. Spans are clipped to [since, until); empty ones are left
// out. Entries of other kinds are ignored.
func Spans(entries []Entry, k Kind, cur string, since, until time.Time) []Span {
	var out []Span
	add := func(from, to time.Time, state, flapped string) {
		from, to = maxTime(from, since), minTime(to, until)
		if !from.Before(to) {
			return
		}
		out = append(out, Span{From: from, To: to, State: state, Flapped: flapped})
	}
	at, state, seen := since, cur, false
	for i := range entries {
		e := &entries[i]
		if e.Kind != k {
			continue
		}
		if !seen {
			state, seen = e.From, true
		}
		add(at, e.Time, state, "")
		at, state = e.Time, e.To
		if e.Count > 1 && e.Last.After(e.Time) {
			add(e.Time, e.Last, e.To, e.From)
			at = e.Last
		}
	}
	add(at, until, state, "")
	return out
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
