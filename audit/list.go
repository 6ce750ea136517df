package audit

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Filter selects records. Empty fields match everything. Actor is an
// email (any case) or, for an actor without one, a subject. Namespace
// with App selects one App's records (App alone matches the name in any
// namespace). Since and Until bound the record's time, both inclusive. Limit is the page size
// (DefaultLimit when 0, at most MaxLimit); Continue is the token of the
// previous page.
type Filter struct {
	Actor       string
	Verb        Verb
	Cluster     string
	Environment string
	Namespace   string
	App         string
	Outcome     Outcome
	Since       time.Time
	Until       time.Time
	Limit       int
	Continue    string
}

// Page sizes.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// Page is one page of records, newest first; Continue is "" on the last.
type Page struct {
	Records  []Record `json:"records"`
	Continue string   `json:"continue,omitempty"`
}

func (f *Filter) match(e *entry) bool {
	r := &e.env.Record
	switch {
	case f.Actor != "" && r.Actor.Key() != f.Actor && r.Actor.Key() != (Actor{Email: f.Actor}).Key(): // an email in any case
		return false
	case f.Verb != "" && r.Verb != f.Verb,
		f.Outcome != "" && r.Outcome != f.Outcome,
		f.Cluster != "" && r.Cluster != f.Cluster,
		f.Environment != "" && r.Environment != f.Environment,
		f.Namespace != "" && r.Namespace != f.Namespace,
		f.App != "" && r.App != f.App:
		return false
	}
	return true
}

// cursor is a position in newest-first order: after the record of time t
// and name.
type cursor struct {
	t    time.Time
	name string
}

func (c cursor) token() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.t.UnixNano(), 10) + "/" + c.name))
}

// ErrBadContinue is a Continue token this server did not write (or
// cannot read any more): the caller starts from the first page.
var ErrBadContinue = errors.New("audit: continue token")

// parseCursor reads a Continue token; anything else (hostile input
// included) is an error.
func parseCursor(tok string) (cursor, error) {
	bad := fmt.Errorf("%w %.40q is not one this server wrote: start from the first page", ErrBadContinue, tok)
	if len(tok) > 128 {
		return cursor{}, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return cursor{}, bad
	}
	ns, name, ok := strings.Cut(string(b), "/")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil {
		return cursor{}, bad
	}
	if _, _, err := parseID(name[min(len(namePrefix), len(name)):]); err != nil || !strings.HasPrefix(name, namePrefix) {
		return cursor{}, bad
	}
	return cursor{t: time.Unix(0, n).UTC(), name: name}, nil
}

// list pages the index. The whole index is in memory, bounded by
// retention (streams × Keep records); a page scans from its cursor (or
// Until) to its Limit-th match, and stops at Since.
func (ix *index) list(f Filter) (Page, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	var from *cursor
	if f.Continue != "" {
		c, err := parseCursor(f.Continue)
		if err != nil {
			return Page{}, err
		}
		from = &c
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	all := ix.sorted
	i := 0
	if from != nil {
		// The first entry after the cursor in newest-first order.
		i = searchFirst(all, func(e *entry) bool {
			if c := e.when().Compare(from.t); c != 0 {
				return c < 0
			}
			return e.name < from.name
		})
	}
	if !f.Until.IsZero() {
		j := searchFirst(all, func(e *entry) bool { return !e.when().After(f.Until) })
		i = max(i, j)
	}
	var p Page
	last := -1
	for ; i < len(all); i++ {
		e := all[i]
		if !f.Since.IsZero() && e.when().Before(f.Since) {
			break
		}
		if !f.match(e) {
			continue
		}
		if len(p.Records) == limit {
			p.Continue = cursor{t: all[last].when(), name: all[last].name}.token()
			break
		}
		p.Records = append(p.Records, ix.recordLocked(e))
		last = i
	}
	return p, nil
}

// searchFirst is the first index of sorted all where ok turns true (ok is
// monotone over the order).
func searchFirst(all []*entry, ok func(*entry) bool) int {
	lo, hi := 0, len(all)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ok(all[m]) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// List returns one page of the records f selects, newest first, each with
// its chain verified. With a started index (Start) it is served from
// memory; without, the record heads' metadata is read with paged List
// calls first.
func (s *Store) List(ctx context.Context, f Filter) (Page, error) {
	ix := s.idx.Load()
	if ix == nil {
		var err error
		if ix, err = s.load(ctx, indexSelector); err != nil {
			return Page{}, err
		}
	}
	return ix.list(f)
}

// Verify returns the records whose chain is broken (edited, next to a
// deleted record, or unreadable), newest first, at most MaxLimit.
func (s *Store) Verify(ctx context.Context) ([]Record, error) {
	ix := s.idx.Load()
	if ix == nil {
		var err error
		if ix, err = s.load(ctx, indexSelector); err != nil {
			return nil, err
		}
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var out []Record
	for _, e := range ix.sorted {
		if c := ix.chainLocked(e); !c.OK {
			out = append(out, ix.recordLocked(e))
			if len(out) == MaxLimit {
				break
			}
		}
	}
	return out, nil
}

// Selectors of what the index reads.
const (
	indexSelector = LabelManagedBy + "=" + managedBy + "," + LabelComponent + " in (" + ComponentRecord + "," + ComponentStream + ")"
	partSelector  = LabelManagedBy + "=" + managedBy + "," + LabelComponent + "=" + ComponentPart
)

func streamSelector(stream string) string {
	return indexSelector + "," + LabelStream + "=" + stream
}

// Bounds of a direct read: pages of listPage objects, at most maxScan in
// all.
const (
	listPage = 500
	maxScan  = 100_000
)

// load reads what selector selects into a fresh index, page by page.
func (s *Store) load(ctx context.Context, selector string) (*index, error) {
	g, err := s.signingKey(ctx)
	if err != nil {
		return nil, err
	}
	ix := newIndex(g)
	err = s.scan(ctx, selector, func(m metav1.Object) { ix.put(m) })
	return ix, err
}

// scan calls fn for each ConfigMap's metadata selector selects.
func (s *Store) scan(ctx context.Context, selector string, fn func(metav1.Object)) error {
	opts := metav1.ListOptions{LabelSelector: selector, Limit: listPage}
	seen := 0
	for {
		l, err := s.meta.Resource(configMaps).Namespace(s.ns).List(ctx, opts)
		if err != nil {
			return fmt.Errorf("audit: list records in %s: %w", s.ns, err)
		}
		for i := range l.Items {
			fn(&l.Items[i])
		}
		seen += len(l.Items)
		if l.Continue == "" {
			return nil
		}
		if seen >= maxScan {
			return fmt.Errorf("audit: more than %d records in %s to read without the index: start the index (Store.Start)", maxScan, s.ns)
		}
		opts.Continue = l.Continue
	}
}
