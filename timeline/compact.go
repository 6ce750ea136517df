package timeline

import (
	"cmp"
	"slices"
	"time"
)

// Limits bound what the store keeps of each App.
type Limits struct {
	// PerApp is the most entries kept per App (newest kept); default 500.
	PerApp int
	// MaxAge is how long an entry is kept; default 30 days. An entry is
	// dropped when its shard is next written or the App next records;
	// reads never return older ones.
	MaxAge time.Duration
	// FlapWindow folds repeats: a flap back to a state left less than
	// FlapWindow ago, or a repeat of a restart, OOM kill, crash loop or
	// warning of the same container or object, becomes one entry with a
	// count; default 5 minutes.
	FlapWindow time.Duration
}

// Default limits.
const (
	DefaultPerApp     = 500
	DefaultMaxAge     = 30 * 24 * time.Hour
	DefaultFlapWindow = 5 * time.Minute
)

func (l Limits) withDefaults() Limits {
	if l.PerApp <= 0 {
		l.PerApp = DefaultPerApp
	}
	if l.MaxAge <= 0 {
		l.MaxAge = DefaultMaxAge
	}
	if l.FlapWindow <= 0 {
		l.FlapWindow = DefaultFlapWindow
	}
	return l
}

// appLog is the entries of one App, oldest first.
type appLog struct {
	app     App
	entries []Entry
}

// entryKey identifies an entry across replicas and restarts: two stores
// that recorded or read the same entry agree on it.
type entryKey struct {
	time     int64
	kind     Kind
	from, to string
	ref      string
}

func keyOf(e *Entry) entryKey {
	return entryKey{e.Time.UnixMilli(), e.Kind, e.From, e.To, e.Ref}
}

func compareEntries(a, b *Entry) int {
	return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.From, b.From),
		cmp.Compare(a.To, b.To), cmp.Compare(a.Ref, b.Ref))
}

// flapKinds are the state kinds whose flaps fold (A->B, B->A, A->B).
func flapKind(k Kind) bool { return k == KindHealth || k == KindSync || k == KindDrift }

// repeatKind are the kinds whose repeats of the same ref fold.
func repeatKind(k Kind) bool {
	return k == KindRestart || k == KindOOM || k == KindCrashLoop || k == KindWarning
}

// add records a normalized entry: folded into an earlier one when it
// repeats or flaps inside the window, ignored when already held (same
// time, kind, states and ref), else inserted in time order. Then the
// limits are applied at now. It reports whether the log changed.
func (l *appLog) add(e Entry, lim Limits, now time.Time) bool {
	n := len(l.entries)
	changed := true
	switch {
	case n > 0 && e.Time.Before(l.entries[n-1].Time):
		changed = l.insert(e)
	case n > 0 && keyOf(&l.entries[n-1]) == keyOf(&e):
		changed = false
	case !l.fold(e, lim):
		l.entries = append(l.entries, e)
	}
	return l.trim(lim, now) || changed
}

// insert places an out-of-order entry (no folding) unless it is held.
func (l *appLog) insert(e Entry) bool {
	i, found := slices.BinarySearchFunc(l.entries, &e, func(x Entry, t *Entry) int { return compareEntries(&x, t) })
	if found {
		return false
	}
	l.entries = slices.Insert(l.entries, i, e)
	return true
}

// fold folds e, newer than every entry held, into an earlier entry when it
// flaps or repeats inside the window.
func (l *appLog) fold(e Entry, lim Limits) bool {
	last, prev := -1, -1 // the newest two entries of e's kind (and ref)
	for i := len(l.entries) - 1; i >= 0 && prev < 0; i-- {
		x := &l.entries[i]
		if x.Kind != e.Kind || x.Ref != e.Ref {
			continue
		}
		if e.Time.Sub(x.Time) > lim.FlapWindow {
			break
		}
		if last < 0 {
			last = i
		} else {
			prev = i
		}
	}
	switch {
	case flapKind(e.Kind) && prev >= 0:
		p, x := &l.entries[prev], &l.entries[last]
		if p.From != e.From || p.To != e.To || x.From != e.To || x.To != e.From {
			return false
		}
		// A->B (p), B->A (x), A->B (e): p now says A->B, e.Count times
		// more, last at e; x goes, so the newest entry still ends in B.
		p.Count += e.Count
		p.Last = e.Time
		l.entries = slices.Delete(l.entries, last, last+1)
		return true
	case repeatKind(e.Kind) && last >= 0:
		x := &l.entries[last]
		if e.Kind == KindWarning && x.Message != e.Message {
			return false
		}
		x.Count += e.Count
		x.Last = e.Time
		x.To = e.To // a restart's count grows
		return true
	}
	return false
}

// trim drops entries older than MaxAge at now and the oldest past PerApp.
func (l *appLog) trim(lim Limits, now time.Time) bool {
	cut := 0
	oldest := now.Add(-lim.MaxAge)
	for cut < len(l.entries) && l.entries[cut].LastTime().Before(oldest) {
		cut++
	}
	cut = max(cut, len(l.entries)-lim.PerApp)
	if cut <= 0 {
		return false
	}
	l.entries = slices.Delete(l.entries, 0, cut)
	return true
}

// merge adds entries read from a shard (written by this or another
// replica): the union, an entry held on both sides keeping the larger
// count and later Last, then the limits. It reports whether the log
// changed.
func (l *appLog) merge(in []Entry, lim Limits, now time.Time) bool {
	if len(in) == 0 {
		return false
	}
	held := make(map[entryKey]int, len(l.entries))
	for i := range l.entries {
		held[keyOf(&l.entries[i])] = i
	}
	changed := false
	for _, e := range in {
		if i, ok := held[keyOf(&e)]; ok {
			x := &l.entries[i]
			if e.Count > x.Count {
				x.Count, changed = e.Count, true
			}
			if e.Last.After(x.Last) {
				x.Last, changed = e.Last, true
			}
			continue
		}
		l.entries = append(l.entries, e)
		held[keyOf(&e)] = len(l.entries) - 1
		changed = true
	}
	if changed {
		slices.SortStableFunc(l.entries, func(a, b Entry) int { return compareEntries(&a, &b) })
	}
	return l.trim(lim, now) || changed
}
