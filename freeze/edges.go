package freeze

import (
	"cmp"
	"slices"
	"time"
)

// The audit stream of freeze records: freezes belong to no cluster or
// environment, so their records share one stream of these names (the
// handlers' records of a freeze created or ended, and the records of
// scheduled windows starting and ending).
const (
	RecordCluster     = "(fleet)"
	RecordEnvironment = "(freezes)"
)

// Edge is a moment a freeze's window starts or ends by itself, as its
// schedule says: what nobody does by hand, so what needs recording.
type Edge struct {
	Freeze Freeze
	Window Window
	// End says the edge is the window's end (at Window.End), else its
	// start (at Window.Start).
	End bool
}

// At is when the edge happens.
func (e Edge) At() time.Time {
	if e.End {
		return e.Window.End
	}
	return e.Window.Start
}

// Key identifies the window an edge belongs to, across replicas and
// restarts: the freeze's id and the window's start in UTC
// ("fz-0123abcd@2026-12-04T17:00:00Z"). A window's start and end share it.
func (e Edge) Key() string {
	return e.Freeze.ID + "@" + e.Window.Start.UTC().Format(time.RFC3339)
}

// MaxEdges bounds the edges Edges returns.
const MaxEdges = 1000

// Edges returns the starts and ends of l's windows in (after, upTo],
// oldest first (a start before an end at the same instant; then by key),
// at most MaxEdges (the oldest). A start at or before the freeze's
// creation (to the second) is none: the freeze started when it was
// created, and its creation is its record. The walk is bounded: each freeze's windows are
// at most MaxOccurrences and are read only until one starts after upTo.
func (l List) Edges(after, upTo time.Time) []Edge {
	var out []Edge
	for i := range l {
		f := &l[i]
		for w := range f.Windows() {
			if w.Start.After(upTo) {
				break
			}
			// Created is stored to the second.
			if w.Start.After(after) && (f.Created.IsZero() || w.Start.Truncate(time.Second).After(f.Created)) {
				out = append(out, Edge{Freeze: *f, Window: w})
			}
			if w.End.After(after) && !w.End.After(upTo) {
				out = append(out, Edge{Freeze: *f, Window: w, End: true})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Edge) int {
		return cmp.Or(a.At().Compare(b.At()), cmp.Compare(boolInt(a.End), boolInt(b.End)), cmp.Compare(a.Key(), b.Key()))
	})
	return out[:min(len(out), MaxEdges)]
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
