package audit

import (
	"cmp"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/internal/sign"
)

// index holds the record heads and stream heads of a namespace, parsed,
// without manifests: what List, the chain and retention read.
type index struct {
	mu      sync.RWMutex
	records map[string]*entry           // by name
	streams map[string]map[int64]*entry // stream -> seq -> entry
	heads   map[string]*streamState     // stream -> state; nil value: unreadable or unsigned
	// seen is the highest sequence number put per stream, never lowered:
	// what this process knows was written, whatever is deleted later.
	seen map[string]int64
	sig  *sign.Key
	// sorted is every entry, newest first, kept in order as entries come
	// and go (a binary search and a copy), so a page never sorts.
	sorted []*entry
}

func newIndex(g *sign.Key) *index {
	return &index{records: map[string]*entry{}, streams: map[string]map[int64]*entry{}, heads: map[string]*streamState{},
		seen: map[string]int64{}, sig: g}
}

// put adds or replaces a record head or stream head.
func (ix *index) put(m metav1.Object) {
	switch m.GetLabels()[LabelComponent] {
	case ComponentRecord:
		e := entryOf(m, ix.sig)
		if e.stream == "" {
			return // not a record name: not ours
		}
		ix.mu.Lock()
		defer ix.mu.Unlock()
		ix.dropLocked(m.GetName())
		if e.bad == "" {
			// Only a signed record raises the mark: an unsigned one
			// with a high number must not flag the real newest.
			ix.seen[e.stream] = max(ix.seen[e.stream], e.seq)
		}
		ix.records[e.name] = e
		if ix.streams[e.stream] == nil {
			ix.streams[e.stream] = map[int64]*entry{}
		}
		ix.streams[e.stream][e.seq] = e
		i := searchFirst(ix.sorted, func(o *entry) bool { return newestFirst(o, e) >= 0 })
		ix.sorted = slices.Insert(ix.sorted, i, e)
	case ComponentStream:
		stream, ok := streamOfHeadName(m.GetName())
		if !ok {
			return
		}
		st := streamStateOf(m, ix.sig)
		ix.mu.Lock()
		defer ix.mu.Unlock()
		ix.heads[stream] = st
	}
}

// drop removes an object by name.
func (ix *index) drop(m metav1.Object) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if m.GetLabels()[LabelComponent] == ComponentStream {
		if stream, ok := streamOfHeadName(m.GetName()); ok {
			delete(ix.heads, stream)
		}
		return
	}
	ix.dropLocked(m.GetName())
}

func (ix *index) dropLocked(name string) {
	old, ok := ix.records[name]
	if !ok {
		return
	}
	delete(ix.records, name)
	if byseq := ix.streams[old.stream]; byseq[old.seq] == old {
		delete(byseq, old.seq)
		if len(byseq) == 0 {
			delete(ix.streams, old.stream)
		}
	}
	for i := searchFirst(ix.sorted, func(o *entry) bool { return newestFirst(o, old) >= 0 }); i < len(ix.sorted); i++ {
		if ix.sorted[i] == old {
			ix.sorted = slices.Delete(ix.sorted, i, i+1)
			break
		}
	}
}

func streamOfHeadName(name string) (string, bool) {
	s := name[min(len(namePrefix), len(name)):]
	if len(s) != 16 || name != streamHeadName(s) || !isLowerHex(s) {
		return "", false
	}
	return s, true
}

func isLowerHex(s string) bool {
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// chainLocked is e's chain against the index's neighbours of e (which
// need not be the index's own entry: Get passes the head it just read).
func (ix *index) chainLocked(e *entry) Chain {
	byseq := ix.streams[e.stream]
	head, ok := ix.heads[e.stream]
	if !ok {
		head = nil
	}
	return link(e, byseq[e.seq-1], byseq[e.seq+1], head, ix.seen[e.stream])
}

// recordLocked is e as a Record with its chain; slices are copied, so the
// caller may keep or change it.
func (ix *index) recordLocked(e *entry) Record {
	r := e.env.Record
	r.ID = idOf(e)
	if e.bad != "" && r.Time.IsZero() {
		r.Time = e.created
	}
	r.Actor.Groups = slices.Clone(r.Actor.Groups)
	r.Blockers = slices.Clone(r.Blockers)
	r.Objects = slices.Clone(r.Objects)
	c := ix.chainLocked(e)
	r.Chain = &c
	r.Manifests = nil
	return r
}

// when is the time an entry sorts by: its record's time, or, for a head
// that cannot be read, when it was created.
func (e *entry) when() time.Time {
	if t := e.env.Record.Time; !t.IsZero() {
		return t
	}
	return e.created
}

// newestFirst orders entries by time, then name, newest first.
func newestFirst(a, b *entry) int {
	if c := b.when().Compare(a.when()); c != 0 {
		return c
	}
	return cmp.Compare(b.name, a.name)
}

// newest is the newest record of stream, nil when it has none.
func (ix *index) newest(stream string) *entry {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var n *entry
	for _, e := range ix.streams[stream] {
		if n == nil || e.seq > n.seq {
			n = e
		}
	}
	return n
}

// streamSnapshot is one stream for retention: its entries by ascending
// sequence number and its head.
type streamSnapshot struct {
	stream  string
	head    *streamState
	entries []*entry
}

// snapshot copies every stream that has a readable head.
func (ix *index) snapshot() []streamSnapshot {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var out []streamSnapshot
	for stream, st := range ix.heads {
		if st == nil {
			continue
		}
		ss := streamSnapshot{stream: stream, head: st}
		for _, e := range ix.streams[stream] {
			ss.entries = append(ss.entries, e)
		}
		slices.SortFunc(ss.entries, func(a, b *entry) int { return cmp.Compare(a.seq, b.seq) })
		out = append(out, ss)
	}
	slices.SortFunc(out, func(a, b streamSnapshot) int { return cmp.Compare(a.stream, b.stream) })
	return out
}

// referencedParts is the set of part names the index's records name.
func (ix *index) referencedParts() map[string]bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := map[string]bool{}
	for _, e := range ix.records {
		for _, p := range e.env.Manifests.Parts {
			out[p.Name] = true
		}
	}
	return out
}
