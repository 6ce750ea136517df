package kubeview

import (
	"cmp"
	"encoding/base64"
	"errors"
	"github.com/hanzoai/deploy-web/objrules"
	"slices"
	"strconv"
	"strings"
)

// Sort orders of the application list.
const (
	SortName     = "name"
	SortHealth   = "health"
	SortDeployed = "deployed"
)

// Query selects and orders applications. Zero values select everything,
// sorted by namespace and name.
type Query struct {
	Namespace string
	Health    objrules.HealthStatus
	Sync      SyncStatus
	// Drift, when true, selects the Apps with drifted objects.
	Drift bool
	// Search is a case-insensitive substring of the App's name.
	Search string
	// Sort is SortName (default), SortHealth (worst first) or SortDeployed
	// (newest first).
	Sort string
	// Offset and Limit page the result; Limit 0 means no limit.
	Offset, Limit int
	// After is a continue token from an earlier page (name order only);
	// when set it replaces Offset.
	After string
}

// Page is one page of the application list.
type Page struct {
	Rows []AppRow
	// Matched counts the rows that match the query (all pages).
	Matched int
	Offset  int
	// Continue is the token of the next page, "" on the last one.
	Continue string
	// Counts are the facet counts of the query (see Counts).
	Counts Counts
	// Version changes whenever any row changes.
	Version uint64
	// Encoded holds each row's JSON as the fleet encoded it when it
	// computed the row (Encoded[i] is Rows[i]'s, whatever its Cluster);
	// AppendRowJSON writes a row from it. A Page made elsewhere may leave
	// it out.
	Encoded []RowJSON
}

// ErrBadContinue is returned for a continue token that was not issued here.
var ErrBadContinue = errors.New("kubeview: invalid continue token")

// Applications returns one page of the application list, from the cache.
func (c *Cache) Applications(q Query) (Page, error) {
	all, counts, version := c.fleet.snapshot()
	search := strings.ToLower(q.Search)
	var tok continueToken
	if q.After != "" {
		var err error
		if tok, err = parseContinue(q.After); err != nil {
			return Page{}, err
		}
	}
	faceted := q.Namespace != "" || search != "" || q.Health != "" || q.Sync != "" || q.Drift
	resort := q.Sort == SortHealth || q.Sort == SortDeployed
	// The fleet's sorted rows are shared: filtering and sorting work on a
	// copy, the unfiltered name order pages the shared slice itself.
	matched := all
	if faceted || resort {
		matched = make([]*fleetRow, 0, min(len(all), 1024))
	}
	if faceted {
		counts = Counts{Fleet: counts.Fleet, Health: map[objrules.HealthStatus]int{}, Sync: map[SyncStatus]int{}}
	}
	for _, r := range all {
		if !faceted {
			if resort {
				matched = append(matched, r)
			}
			continue
		}
		if q.Namespace != "" && r.Namespace != q.Namespace ||
			search != "" && !strings.Contains(strings.ToLower(r.Name), search) {
			continue
		}
		okHealth := q.Health == "" || r.Health.Status == q.Health
		okSync := q.Sync == "" || r.Sync.Status == q.Sync
		okDrift := !q.Drift || r.Drift > 0
		counts.tally(&r.AppRow, okHealth, okSync, okDrift)
		if okHealth && okSync && okDrift {
			matched = append(matched, r)
		}
	}
	if resort {
		slices.SortFunc(matched, func(a, b *fleetRow) int { return CompareRows(q.Sort, &a.AppRow, &b.AppRow) })
	}
	p := Page{Matched: len(matched), Counts: counts, Version: version}
	start := max(q.Offset, 0)
	switch {
	case q.After == "":
	case tok.byKey && (q.Sort == "" || q.Sort == SortName):
		// Resume after the last row seen, even if rows came or went.
		start, _ = slices.BinarySearchFunc(matched, tok, func(r *fleetRow, t continueToken) int {
			if cmp.Or(cmp.Compare(r.Namespace, t.namespace), cmp.Compare(r.Name, t.name)) <= 0 {
				return -1
			}
			return 1
		})
	case !tok.byKey:
		start = tok.offset
	default:
		return Page{}, ErrBadContinue
	}
	start, end := PageBounds(start, q.Limit, len(matched))
	p.Offset = start
	p.Rows = make([]AppRow, 0, end-start)
	p.Encoded = make([]RowJSON, 0, end-start)
	for _, r := range matched[start:end] {
		p.Rows = append(p.Rows, r.AppRow)
		p.Encoded = append(p.Encoded, r.json)
	}
	if end < len(matched) && q.Limit > 0 {
		if q.Sort == "" || q.Sort == SortName {
			last := matched[end-1]
			p.Continue = continueToken{byKey: true, namespace: last.Namespace, name: last.Name}.String()
		} else {
			p.Continue = continueToken{offset: end}.String()
		}
	}
	return p, nil
}

// tally counts a row of the query's scope into each facet whose other
// filters it passes: okHealth, okSync and okDrift say which filters the row
// passes.
func (c *Counts) tally(r *AppRow, okHealth, okSync, okDrift bool) {
	c.Total++
	if okSync && okDrift {
		c.Health[r.Health.Status]++
	}
	if okHealth && okDrift {
		c.Sync[r.Sync.Status]++
	}
	if okHealth && okSync && r.Drift > 0 {
		c.Drift++
	}
}

// Add adds the facet counts of o (another cluster's, for the same query)
// to c: Total, Drift and the Health and Sync counts. Fleet and Cluster are
// the caller's: they count whatever the cluster filter.
func (c *Counts) Add(o Counts) {
	c.Total += o.Total
	c.Drift += o.Drift
	if c.Health == nil {
		c.Health = map[objrules.HealthStatus]int{}
	}
	for h, n := range o.Health {
		c.Health[h] += n
	}
	if c.Sync == nil {
		c.Sync = map[SyncStatus]int{}
	}
	for s, n := range o.Sync {
		c.Sync[s] += n
	}
}

// CompareRows is the order of the application list under sort: SortHealth
// worst first and SortDeployed newest first, then (and for SortName) by
// namespace, name and cluster. The fleet keeps its rows in name order;
// package fleetset merges the lists of several clusters with it.
func CompareRows(sort string, a, b *AppRow) int {
	first := 0
	switch sort {
	case SortHealth:
		first = cmp.Compare(b.Health.Status.Rank(), a.Health.Status.Rank())
	case SortDeployed:
		first = b.LastDeployed.Compare(a.LastDeployed)
	}
	return cmp.Or(first, cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Cluster, b.Cluster))
}

// PageBounds returns the rows [start, end) of a page of a list of n rows
// that starts at row start (clamped to the list) and holds at most limit
// rows (0: no limit).
func PageBounds(start, limit, n int) (int, int) {
	start = min(max(start, 0), n)
	if limit > 0 {
		return start, min(start+limit, n)
	}
	return start, n
}

// Changed returns a channel closed at the next change of the application list.
func (c *Cache) Changed() <-chan struct{} {
	c.fleet.mu.RLock()
	defer c.fleet.mu.RUnlock()
	return c.fleet.changed
}

// continueToken resumes a listing: after a row (name order) or at an offset.
type continueToken struct {
	byKey           bool
	namespace, name string
	offset          int
}

func (t continueToken) String() string {
	if t.byKey {
		return base64.RawURLEncoding.EncodeToString([]byte("k:" + t.namespace + "/" + t.name))
	}
	return base64.RawURLEncoding.EncodeToString([]byte("o:" + strconv.Itoa(t.offset)))
}

func parseContinue(s string) (continueToken, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return continueToken{}, ErrBadContinue
	}
	v := string(b)
	switch {
	case strings.HasPrefix(v, "k:"):
		ns, name, ok := strings.Cut(v[2:], "/")
		if !ok || ns == "" || name == "" {
			return continueToken{}, ErrBadContinue
		}
		return continueToken{byKey: true, namespace: ns, name: name}, nil
	case strings.HasPrefix(v, "o:"):
		n, err := strconv.Atoi(v[2:])
		if err != nil || n < 0 {
			return continueToken{}, ErrBadContinue
		}
		return continueToken{offset: n}, nil
	}
	return continueToken{}, ErrBadContinue
}
