package search

import (
	"cmp"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Index is one cluster's Apps with the objects of their trees, kept for
// the search (a Source): kubeview updates it as events change an App's
// tree, a search reads it without an API call.
//
// The Apps are kept in key order (namespace, then name: the fleet list's
// order) in chunks of at most chunkMax Apps. A chunk folds its Apps'
// names, kinds, label pairs and images into one string per field (each
// App a segment of it, see digestOf), so a search finds the Apps that may
// match a term by one substring scan (strings.Index, vectorised) of each
// chunk instead of a test per App, and tests object by object only the
// Apps the scan lets through. A chunk is never modified once published:
// an update builds new chunks for the ones it touches (a copy of at most
// chunkMax Apps' segments) and swaps the list, so a search reads a
// consistent snapshot without holding the lock while it walks.
//
// The zero Index is empty and ready to use.
type Index struct {
	mu     sync.RWMutex
	chunks []*chunk
}

// Chunk bounds: an update copies a chunk's text (at most chunkMax Apps'
// segments) and hashes its trigrams; a split leaves halves of chunkMax/2.
const chunkMax = 32

// chunk is a run of Apps in key order and their digests, one column per
// field.
type chunk struct {
	apps []App
	cols [numFields]column
	// stale counts the Apps put in since the filters were last hashed
	// from the text (newChunk).
	stale int
}

// Fields of a digest.
const (
	fieldNames = iota
	fieldKinds
	fieldLabels
	fieldImages
	numFields
)

// column is one field of a chunk's digests: the Apps' segments back to
// back; ends[i] is where App i's ends (it starts at ends[i-1], or 0).
type column struct {
	text string
	ends []int
	// grams is a filter of the trigrams of text (a bit per hashed
	// trigram): a needle one of whose trigrams has its bit clear is not
	// in text, and the chunk is skipped without a scan.
	grams trigrams
}

// segment returns App i's part of the column.
func (c *column) segment(i int) string {
	start := 0
	if i > 0 {
		start = c.ends[i-1]
	}
	return c.text[start:c.ends[i]]
}

// digest returns App i's digest: slices of the chunk's columns.
func (c *chunk) digest(i int) Digest {
	return Digest{
		names:  c.cols[fieldNames].segment(i),
		kinds:  c.cols[fieldKinds].segment(i),
		labels: c.cols[fieldLabels].segment(i),
		images: c.cols[fieldImages].segment(i),
	}
}

// AppKey names an App of a cluster.
type AppKey struct{ Namespace, Name string }

func (a *App) key() AppKey { return AppKey{a.Namespace, a.Name} }

func compareKeys(a, b AppKey) int {
	return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

// indexOp is one App of an update: its new objects, or nil to drop it.
type indexOp struct {
	key AppKey
	app *App
}

// Update puts the Apps of set into the index (replacing the ones with the
// same key) and takes the Apps of drop out of it, in one step: a search
// sees all of it or none. The Apps' Objects are kept as they are (never
// modified). A key in both set and drop is dropped.
func (x *Index) Update(set []App, drop []AppKey) {
	if len(set)+len(drop) == 0 {
		return
	}
	ops := make([]indexOp, 0, len(set)+len(drop))
	for i := range set {
		ops = append(ops, indexOp{key: set[i].key(), app: &set[i]})
	}
	for _, k := range drop {
		ops = append(ops, indexOp{key: k})
	}
	// Stable: of two ops on one key the later (a drop) wins below.
	slices.SortStableFunc(ops, func(a, b indexOp) int { return compareKeys(a.key, b.key) })

	x.mu.Lock()
	defer x.mu.Unlock()
	old := x.chunks
	out := make([]*chunk, 0, len(old)+1)
	ci := 0 // next old chunk not yet copied
	for len(ops) > 0 {
		// The chunk the first op falls in: the first whose last App is
		// not before it, else the last chunk (the op appends).
		t := ci + sort.Search(len(old)-ci, func(j int) bool {
			c := old[ci+j]
			return compareKeys(c.apps[len(c.apps)-1].key(), ops[0].key) >= 0
		})
		if t == len(old) && len(old) > 0 {
			t = len(old) - 1 // past every chunk: the last one grows
		}
		out = append(out, old[ci:t]...)
		var target *chunk
		if t < len(old) {
			target = old[t]
		}
		// The ops falling in target: up to its last key (all the rest
		// for the last chunk).
		n := len(ops)
		if t < len(old)-1 {
			last := target.apps[len(target.apps)-1].key()
			n = sort.Search(len(ops), func(j int) bool { return compareKeys(ops[j].key, last) > 0 })
		}
		out = append(out, rebuild(target, ops[:n])...)
		ops = ops[n:]
		ci = min(t+1, len(old))
	}
	out = append(out, old[ci:]...)
	x.chunks = out
}

// entry is an App and its digest's segments while a chunk is rebuilt;
// fresh when the update brings it (its trigrams are not in the old
// chunk's filters).
type entry struct {
	app   App
	segs  [numFields]string
	fresh bool
}

// rebuild merges ops (sorted by key) into c (nil for none) and returns
// the chunks that replace it: none when it is left empty, more than one
// when it grew past chunkMax.
func rebuild(c *chunk, ops []indexOp) []*chunk {
	var olds int
	if c != nil {
		olds = len(c.apps)
	}
	merged := make([]entry, 0, olds+len(ops))
	i := 0
	for _, op := range ops {
		for i < olds && compareKeys(c.apps[i].key(), op.key) < 0 {
			merged = append(merged, c.entry(i))
			i++
		}
		if i < olds && compareKeys(c.apps[i].key(), op.key) == 0 {
			i++ // replaced or dropped
		}
		if len(merged) > 0 && merged[len(merged)-1].app.key() == op.key {
			merged = merged[:len(merged)-1] // a later op on the same key wins
		}
		if op.app != nil {
			merged = append(merged, entry{app: *op.app, segs: digestOf(op.app.Objects), fresh: true})
		}
	}
	for ; i < olds; i++ {
		merged = append(merged, c.entry(i))
	}
	if len(merged) == 0 {
		return nil
	}
	pieces := (len(merged) + chunkMax - 1) / chunkMax
	if len(merged) > chunkMax {
		pieces = (len(merged) + chunkMax/2 - 1) / (chunkMax / 2)
	}
	if pieces == 1 {
		return []*chunk{newChunk(merged, c)}
	}
	out := make([]*chunk, 0, pieces)
	size := (len(merged) + pieces - 1) / pieces
	for len(merged) > 0 {
		n := min(size, len(merged))
		out = append(out, newChunk(merged[:n], nil))
		merged = merged[n:]
	}
	return out
}

func (c *chunk) entry(i int) entry {
	e := entry{app: c.apps[i]}
	for f := range e.segs {
		e.segs[f] = c.cols[f].segment(i)
	}
	return e
}

// newChunk copies the entries' segments into fresh columns (so the old
// chunk's text is not kept alive by a slice of it). With base (the chunk
// the entries replace), a column's trigram filter is base's with the
// fresh entries' trigrams added: the bits of the Apps replaced or dropped
// stay set (the filter may let the chunk through for nothing, never rule
// it out wrongly) until the fresh entries since the last full hash
// outnumber the chunk's Apps, or the text outgrows the filter's size.
func newChunk(es []entry, base *chunk) *chunk {
	c := &chunk{apps: make([]App, len(es))}
	fresh := 0
	for i := range es {
		c.apps[i] = es[i].app
		if es[i].fresh {
			fresh++
		}
	}
	if base != nil {
		c.stale = base.stale + fresh
	}
	for f := range c.cols {
		size := 0
		for i := range es {
			size += len(es[i].segs[f])
		}
		var b strings.Builder
		b.Grow(size)
		ends := make([]int, len(es))
		for i := range es {
			b.WriteString(es[i].segs[f])
			ends[i] = b.Len()
		}
		text := b.String()
		col := column{text: text, ends: ends}
		if base != nil && c.stale <= len(es) && trigramBits(len(text)) == base.cols[f].grams.size() {
			col.grams = base.cols[f].grams.clone()
			for i := range es {
				if es[i].fresh {
					col.grams.add(es[i].segs[f])
				}
			}
		} else {
			col.grams = newTrigrams(text)
		}
		c.cols[f] = col
	}
	if c.stale > len(es) {
		c.stale = 0 // hashed anew above
	}
	return c
}

// SearchApps yields, in key order, the Apps that may match q (every App
// with an object that matches; maybe more), until yield returns false
// (Source).
func (x *Index) SearchApps(q *Query, yield func(App) bool) {
	x.mu.RLock()
	chunks := x.chunks
	x.mu.RUnlock()
	field, needle := q.scan()
	for _, c := range chunks {
		if !q.mayHoldNamespace(c) || !c.mayHoldNeedles(q) {
			continue
		}
		if !c.search(q, field, needle, yield) {
			return
		}
	}
}

// mayHoldNamespace reports whether c's Apps may be in a namespace q asks
// for (its Apps run from the first's namespace to the last's).
func (q *Query) mayHoldNamespace(c *chunk) bool {
	first, last := c.apps[0].Namespace, c.apps[len(c.apps)-1].Namespace
	return anyOf(q.Namespaces, func(ns string) bool { return first <= ns && ns <= last })
}

// search yields c's Apps that may match q; false when yield said stop.
// With a needle, only the Apps whose field segment holds it are looked
// at: one scan of the column finds the next.
func (c *chunk) search(q *Query, field int, needle string, yield func(App) bool) bool {
	may := func(i int) bool {
		d := c.digest(i)
		return anyOf(q.Namespaces, func(ns string) bool { return ns == c.apps[i].Namespace }) && q.mayMatch(&d)
	}
	if needle == "" {
		for i := range c.apps {
			if may(i) && !yield(c.apps[i]) {
				return false
			}
		}
		return true
	}
	col := &c.cols[field]
	for pos := 0; pos < len(col.text); {
		j := strings.Index(col.text[pos:], needle)
		if j < 0 {
			break
		}
		p := pos + j
		i, _ := slices.BinarySearch(col.ends, p+1) // the App whose segment holds p
		if p+len(needle) > col.ends[i] {
			pos = p + 1 // across two Apps' segments: not a hit
			continue
		}
		if may(i) && !yield(c.apps[i]) {
			return false
		}
		pos = col.ends[i]
	}
	return true
}

// mayHoldNeedles reports whether c's columns may hold every needle q
// needs (its trigram filters), and the only kind term's: false only when
// one of them is in none of c's Apps.
func (c *chunk) mayHoldNeedles(q *Query) bool {
	for _, n := range q.digest.required {
		if !c.cols[n.field].grams.mayHold(n.needle) {
			return false
		}
	}
	return len(q.digest.kinds) != 1 || c.cols[fieldKinds].grams.mayHold(q.digest.kinds[0])
}

// trigrams is a bit set of hashed trigrams (3 consecutive bytes) of a
// text: a Bloom filter with one hash, sized by the text (two bits per
// byte, at least 64 bits), so at most about 40% of its bits are set.
type trigrams struct {
	bits  []uint64
	shift uint // 64 - log2(len(bits)*64)
}

// maxTrigramBits bounds a filter (a chunk's column of 64 Apps is well
// under it).
const maxTrigramBits = 1 << 20

// trigramBits is the size of the filter of a text of n bytes.
func trigramBits(n int) int {
	size := 64
	for size < 2*n && size < maxTrigramBits {
		size *= 2
	}
	return size
}

func newTrigrams(text string) trigrams {
	n := trigramBits(len(text))
	t := trigrams{bits: make([]uint64, n/64), shift: uint(64 - bits.TrailingZeros(uint(n)))}
	t.add(text)
	return t
}

// add sets the bits of text's trigrams. Within one App's segment is
// enough: a needle never spans two.
func (t *trigrams) add(text string) {
	for i := 0; i+3 <= len(text); i++ {
		h := t.hash(text[i], text[i+1], text[i+2])
		t.bits[h/64] |= 1 << (h % 64)
	}
}

func (t *trigrams) size() int { return len(t.bits) * 64 }

func (t *trigrams) clone() trigrams {
	return trigrams{bits: slices.Clone(t.bits), shift: t.shift}
}

func (t *trigrams) hash(a, b, c byte) uint64 {
	return (uint64(a)<<16 | uint64(b)<<8 | uint64(c)) * 0x9E3779B97F4A7C15 >> t.shift
}

// mayHold reports whether text may hold s: false when a trigram of s is
// not in text. A needle under 3 bytes may be anywhere.
func (t *trigrams) mayHold(s string) bool {
	for i := 0; i+3 <= len(s); i++ {
		h := t.hash(s[i], s[i+1], s[i+2])
		if t.bits[h/64]&(1<<(h%64)) == 0 {
			return false
		}
	}
	return true
}
