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
	entries []rec
}

// rec is an entry as the index holds it: without its App (the log's) and
// with times in Unix milliseconds, 120 bytes instead of an Entry's 200
// (3,000,000 of them for 10,000 Apps over 30 days).
type rec struct {
	at, last int64 // last is 0 when nothing was folded
	count    int
	kind     Kind
	from, to string
	msg, ref string
	rev      string
}

// recOf returns the record of a normalized entry.
func recOf(e *Entry) rec {
	r := rec{at: e.Time.UnixMilli(), count: e.Count, kind: e.Kind, from: e.From, to: e.To, msg: e.Message, ref: e.Ref, rev: e.Revision}
	if !e.Last.IsZero() {
		r.last = e.Last.UnixMilli()
	}
	return r
}

// entry returns the record as an entry of app.
func (r *rec) entry(app App) Entry {
	e := Entry{Time: time.UnixMilli(r.at).UTC(), App: app, Kind: r.kind, From: r.from, To: r.to, Message: r.msg, Ref: r.ref, Revision: r.rev, Count: r.count}
	if r.last != 0 {
		e.Last = time.UnixMilli(r.last).UTC()
	}
	return e
}

// lastAt is the time of the last occurrence, in Unix milliseconds.
func (r *rec) lastAt() int64 { return max(r.at, r.last) }

// list returns the log as entries, oldest first.
func (l *appLog) list() []Entry {
	out := make([]Entry, len(l.entries))
	for i := range l.entries {
		out[i] = l.entries[i].entry(l.app)
	}
	return out
}

// entryKey identifies an entry across replicas and restarts: two stores
// that recorded or read the same entry agree on it.
type entryKey struct {
	time     int64
	kind     Kind
	from, to string
	ref      string
}

func keyOf(r *rec) entryKey { return entryKey{r.at, r.kind, r.from, r.to, r.ref} }

func compareRecs(a, b *rec) int {
	return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.kind, b.kind), cmp.Compare(a.from, b.from),
		cmp.Compare(a.to, b.to), cmp.Compare(a.ref, b.ref))
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
func (l *appLog) add(e rec, lim Limits, now time.Time) bool {
	n := len(l.entries)
	changed := true
	switch {
	case n > 0 && e.at < l.entries[n-1].at:
		changed = l.insert(e)
	case n > 0 && keyOf(&l.entries[n-1]) == keyOf(&e):
		changed = false
	case !l.fold(e, lim):
		l.entries = append(l.entries, e)
	}
	return l.trim(lim, now) || changed
}

// insert places an out-of-order entry (no folding) unless it is held.
func (l *appLog) insert(e rec) bool {
	i, found := slices.BinarySearchFunc(l.entries, &e, func(x rec, t *rec) int { return compareRecs(&x, t) })
	if found {
		return false
	}
	l.entries = slices.Insert(l.entries, i, e)
	return true
}

// fold folds e, newer than every entry held, into an earlier entry when it
// flaps or repeats inside the window.
func (l *appLog) fold(e rec, lim Limits) bool {
	window := lim.FlapWindow.Milliseconds()
	last, prev := -1, -1 // the newest two entries of e's kind (and ref)
	for i := len(l.entries) - 1; i >= 0 && prev < 0; i-- {
		x := &l.entries[i]
		if x.kind != e.kind || x.ref != e.ref {
			continue
		}
		if e.at-x.at > window {
			break
		}
		if last < 0 {
			last = i
		} else {
			prev = i
		}
	}
	switch {
	case flapKind(e.kind) && prev >= 0:
		p, x := &l.entries[prev], &l.entries[last]
		if p.from != e.from || p.to != e.to || x.from != e.to || x.to != e.from {
			return false
		}
		// A->B (p), B->A (x), A->B (e): p now says A->B, e.count times
		// more, last at e; x goes, so the newest entry still ends in B.
		p.count += e.count
		p.last = e.at
		l.entries = slices.Delete(l.entries, last, last+1)
		return true
	case repeatKind(e.kind) && last >= 0:
		x := &l.entries[last]
		if e.kind == KindWarning && x.msg != e.msg {
			return false
		}
		x.count += e.count
		x.last = e.at
		x.to = e.to // a restart's count grows
		return true
	}
	return false
}

// trim drops entries older than MaxAge at now and the oldest past PerApp.
func (l *appLog) trim(lim Limits, now time.Time) bool {
	cut := 0
	oldest := now.Add(-lim.MaxAge).UnixMilli()
	for cut < len(l.entries) && l.entries[cut].lastAt() < oldest {
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
// count and later last, then the limits. It reports whether the log
// changed.
func (l *appLog) merge(in []rec, lim Limits, now time.Time) bool {
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
			if e.count > x.count {
				x.count, changed = e.count, true
			}
			if e.last > x.last {
				x.last, changed = e.last, true
			}
			continue
		}
		l.entries = append(l.entries, e)
		held[keyOf(&e)] = len(l.entries) - 1
		changed = true
	}
	if changed {
		slices.SortStableFunc(l.entries, func(a, b rec) int { return compareRecs(&a, &b) })
	}
	return l.trim(lim, now) || changed
}
