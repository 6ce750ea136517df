package freeze

import (
	"iter"
	"slices"
	"time"
)

// Window is one frozen span: from Start (inclusive) to End (exclusive).
type Window struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// Contains reports whether t is inside w.
func (w Window) Contains(t time.Time) bool { return !t.Before(w.Start) && t.Before(w.End) }

// Windows yields f's frozen spans in order of their starts: one for a
// one-off freeze, one per occurrence (cut at End) for a recurring one. An
// invalid rule yields nothing; Validate refuses it before it is stored.
func (f *Freeze) Windows() iter.Seq[Window] {
	return func(yield func(Window) bool) {
		if f.RRule == "" {
			if f.End.After(f.Start) {
				yield(Window{Start: f.Start, End: f.End})
			}
			return
		}
		r, err := f.rule()
		if err != nil {
			return
		}
		for occ := range r.occurrences(f.dtstart(), f.End) {
			end := occ.Add(time.Duration(f.Duration))
			if end.After(f.End) {
				end = f.End
			}
			if !yield(Window{Start: occ, End: end}) {
				return
			}
		}
	}
}

// WindowAt returns the window of f that contains t (of overlapping ones,
// the one that ends last).
func (f *Freeze) WindowAt(t time.Time) (Window, bool) {
	var best Window
	found := false
	for w := range f.Windows() {
		if w.Start.After(t) {
			break
		}
		if w.Contains(t) && (!found || w.End.After(best.End)) {
			best, found = w, true
		}
	}
	return best, found
}

// NextWindow returns f's first window that starts after t.
func (f *Freeze) NextWindow(t time.Time) (Window, bool) {
	for w := range f.Windows() {
		if w.Start.After(t) {
			return w, true
		}
	}
	return Window{}, false
}

// Lapsed reports whether nothing of f is frozen at or after t: it can be
// pruned.
func (f *Freeze) Lapsed(t time.Time) bool {
	if !t.Before(f.End) {
		return true
	}
	for w := range f.Windows() {
		if w.End.After(t) {
			return false
		}
	}
	return true
}

// Touches reports whether an action on t falls under f's scope (an empty
// target field is "all of them").
func (f *Freeze) Touches(t Target) bool { return f.Scope.Touches(t) }

// List is the freezes in force, as the Store returns them.
type List []Freeze

// maxChain bounds how many back-to-back windows Active follows to find
// when a target opens.
const maxChain = 2 * MaxOccurrences

// Active reports whether t is frozen at now: the freeze that holds it
// (of several, the one whose current window ends last) and when t opens,
// following windows that start as others end (start is inclusive, end
// exclusive, so a freeze from 18:00 continues one until 18:00).
func (l List) Active(now time.Time, t Target) (f *Freeze, opensAt time.Time, ok bool) {
	var touching []*Freeze
	for i := range l {
		if l[i].Touches(t) {
			touching = append(touching, &l[i])
		}
	}
	for _, c := range touching {
		if w, in := c.WindowAt(now); in && (f == nil || w.End.After(opensAt)) {
			f, opensAt = c, w.End
		}
	}
	if f == nil {
		return nil, time.Time{}, false
	}
	for range maxChain {
		extended := false
		for _, c := range touching {
			if w, in := c.WindowAt(opensAt); in && w.End.After(opensAt) {
				opensAt, extended = w.End, true
			}
		}
		if !extended {
			break
		}
	}
	return f, opensAt, true
}

// Scheduled is a freeze's next window.
type Scheduled struct {
	Freeze Freeze `json:"freeze"`
	Window Window `json:"window"`
}

// DefaultUpcoming is how far ahead Upcoming looks when given no horizon.
const DefaultUpcoming = 24 * time.Hour

// Upcoming lists the freezes whose next window starts after now and
// within the horizon (DefaultUpcoming when within <= 0), soonest first;
// the caller keeps those that Touch its target.
func (l List) Upcoming(now time.Time, within time.Duration) []Scheduled {
	if within <= 0 {
		within = DefaultUpcoming
	}
	var out []Scheduled
	for i := range l {
		if w, ok := l[i].NextWindow(now); ok && !w.Start.After(now.Add(within)) {
			out = append(out, Scheduled{Freeze: l[i], Window: w})
		}
	}
	slices.SortStableFunc(out, func(a, b Scheduled) int { return a.Window.Start.Compare(b.Window.Start) })
	return out
}
