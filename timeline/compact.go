package timeline

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/hanzoai/deploy-web/internal/limit"
)

// Limits bound what the store keeps of each App.
type Limits struct {
	// PerApp is the most entries kept per App (newest kept); default 500.
	PerApp int
	// MaxAge is how long an entry is kept; default 30 days. An entry is
	// dropped when its shard is next written or the App next records;
	// reads never return older ones.
	MaxAge time.Duration
	// FlapWindow folds flaps: a flap back to a state left less than
	// FlapWindow ago becomes one entry with a count; default 5 minutes.
	FlapWindow time.Duration
	// Quiet bounds a repeat episode: a restart, OOM kill, crash loop or
	// Warning (of the same message) of the same container or object folds
	// into the episode's entry (its count grows, Last moves on) while less
	// than Quiet has passed since its last occurrence and the App's health
	// has not changed since the episode began; default 10 minutes (a crash
	// loop's back-off is at most 5).
	Quiet time.Duration
	// FoldWrite is the longest a fold waits to be written: a fold changes
	// the index at once but does not make its shard pending; the shard is
	// written when it is written for another reason, when the episode ends
	// (Quiet passed), or FoldWrite after the first unwritten fold, so a
	// crash-looping App costs at most one write per FoldWrite and a count
	// is never lost by more than that; default 15 minutes.
	FoldWrite time.Duration
}

// Default limits.
const (
	DefaultPerApp     = 500
	DefaultMaxAge     = 30 * 24 * time.Hour
	DefaultFlapWindow = 5 * time.Minute
	DefaultQuiet      = 10 * time.Minute
	DefaultFoldWrite  = 15 * time.Minute
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
	l.Quiet = limit.Or(l.Quiet, DefaultQuiet)
	l.FoldWrite = limit.Or(l.FoldWrite, DefaultFoldWrite)
	return l
}

// appLog is the entries of one App, oldest first.
type appLog struct {
	app     App
	entries []rec
}

// rec is an entry as the index holds it: without its App (the log's),
// with times in Unix milliseconds, its kind as one byte and its count as
// 4: 104 bytes instead of an Entry's 200 (3,000,000 of them for 10,000
// Apps over 30 days; see BenchmarkStorage).
type rec struct {
	at, last int64 // last is 0 when nothing was folded
	from, to string
	msg, ref string
	rev      string
	count    int32
	kind     kindCode
}

// kindCode is a Kind as the index holds it: its place in kinds plus one
// (0 is none).
type kindCode uint8

// codeOf returns k's code, 0 for a kind not in the set.
func codeOf(k Kind) kindCode {
	for i, v := range kinds {
		if v == k {
			return kindCode(i + 1)
		}
	}
	return 0
}

// kind returns the Kind of c ("" for 0).
func (c kindCode) kind() Kind {
	if c == 0 || int(c) > len(kinds) {
		return ""
	}
	return kinds[c-1]
}

// MaxCount is the largest Count an entry holds: folding more repeats, or
// reading a larger count from a shard, stays at it.
const MaxCount = math.MaxInt32

// addCount is a+b, at most MaxCount (counts are at least 1).
func addCount(a, b int32) int32 { return int32(min(int64(a)+int64(b), MaxCount)) }

// recOf returns the record of a normalized entry.
func recOf(e *Entry) rec {
	r := rec{at: e.Time.UnixMilli(), count: int32(min(max(e.Count, 1), MaxCount)), kind: codeOf(e.Kind), from: e.From, to: e.To,
		msg: e.Message, ref: e.Ref, rev: e.Revision}
	if !e.Last.IsZero() {
		r.last = e.Last.UnixMilli()
	}
	return r
}

// entry returns the record as an entry of app.
func (r *rec) entry(app App) Entry {
	e := Entry{Time: time.UnixMilli(r.at).UTC(), App: app, Kind: r.kind.kind(), From: r.from, To: r.to, Message: r.msg, Ref: r.ref,
		Revision: r.rev, Count: int(r.count)}
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
	kind     kindCode
	from, to string
	ref      string
}

// keyOf is r's key. A restart's To is left out: it grows as the episode
// folds repeats, and two replicas' copies of one episode are one entry.
func keyOf(r *rec) entryKey {
	to := r.to
	if r.kind.kind() == KindRestart {
		to = ""
	}
	return entryKey{r.at, r.kind, r.from, to, r.ref}
}

func compareRecs(a, b *rec) int {
	return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.kind.kind(), b.kind.kind()), cmp.Compare(a.from, b.from),
		cmp.Compare(a.to, b.to), cmp.Compare(a.ref, b.ref))
}

// flapKinds are the state kinds whose flaps fold (A->B, B->A, A->B).
func flapKind(k Kind) bool { return k == KindHealth || k == KindSync || k == KindDrift }

// repeatKind are the kinds whose repeats of the same ref fold.
func repeatKind(k Kind) bool {
	return k == KindRestart || k == KindOOM || k == KindCrashLoop || k == KindWarning
}

// change is what adding an entry did to a log.
type change int

const (
	// unchanged: the entry was held already (or counted in a fold).
	unchanged change = iota
	// folded: a repeat grew the count of its episode's entry; the shard
	// need not be written at once (Limits.FoldWrite).
	folded
	// changed: an entry was added, a flap folded or entries dropped; the
	// shard is to be written.
	changed
)

// add records a normalized entry: folded into an earlier one when it
// repeats or flaps, ignored when already held (same time, kind, states
// and ref, or a repeat inside an episode's span), else inserted in time
// order. Then the limits are applied at now. It reports what changed.
func (l *appLog) add(e rec, lim Limits, now time.Time) change {
	n := len(l.entries)
	c := changed
	switch {
	case repeatKind(e.kind.kind()) && l.counted(&e):
		c = unchanged
	case n > 0 && e.at < l.entries[n-1].at:
		if !l.insert(e) {
			c = unchanged
		}
	case n > 0 && keyOf(&l.entries[n-1]) == keyOf(&e):
		c = unchanged
	default:
		if c = l.fold(e, lim); c == unchanged {
			l.entries = append(l.entries, e)
			c = changed
		}
	}
	if l.trim(lim, now) {
		return changed
	}
	return c
}

// counted reports whether a repeat is inside the span of an entry that
// folded it already (the same Warning Event read again after a restart
// of the console): first occurrence <= e <= last.
func (l *appLog) counted(e *rec) bool {
	for i := len(l.entries) - 1; i >= 0; i-- {
		x := &l.entries[i]
		if x.last != 0 && sameRepeat(x, e) && x.at <= e.at && e.at <= x.last {
			return true
		}
	}
	return false
}

// sameRepeat reports whether e repeats x: the same kind and ref and, for
// a Warning, the same message.
func sameRepeat(x, e *rec) bool {
	return x.kind == e.kind && x.ref == e.ref && (e.kind.kind() != KindWarning || x.msg == e.msg)
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

// fold folds e, newer than every entry held, into an earlier entry: a
// flap inside FlapWindow (changed), or a repeat inside its episode
// (folded; see Limits.Quiet). Unchanged: e is not folded.
func (l *appLog) fold(e rec, lim Limits) change {
	if repeatKind(e.kind.kind()) {
		return l.foldRepeat(e, lim)
	}
	if !flapKind(e.kind.kind()) {
		return unchanged
	}
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
	if prev < 0 {
		return unchanged
	}
	p, x := &l.entries[prev], &l.entries[last]
	if p.from != e.from || p.to != e.to || x.from != e.to || x.to != e.from {
		return unchanged
	}
	// A->B (p), B->A (x), A->B (e): p now says A->B, e.count times
	// more, last at e; x goes, so the newest entry still ends in B.
	p.count = addCount(p.count, e.count)
	p.last = e.at
	l.entries = slices.Delete(l.entries, last, last+1)
	return changed
}

// foldRepeat folds a restart, OOM kill, crash loop or Warning into the
// entry of its episode: the newest entry it repeats (sameRepeat), if that
// one's last occurrence is at most Quiet before e and no health entry
// came after it (a change of health ends the episode).
func (l *appLog) foldRepeat(e rec, lim Limits) change {
	quiet := lim.Quiet.Milliseconds()
	for i := len(l.entries) - 1; i >= 0; i-- {
		x := &l.entries[i]
		if x.kind.kind() == KindHealth {
			return unchanged
		}
		if !sameRepeat(x, &e) {
			continue
		}
		if e.at-x.lastAt() > quiet {
			return unchanged
		}
		x.count = addCount(x.count, e.count)
		x.last = e.at
		x.to = e.to // a restart's count grows
		return folded
	}
	return unchanged
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
				x.last, x.to, changed = e.last, e.to, true // a restart's count as of its last repeat
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
