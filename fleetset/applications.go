package fleetset

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
)

// Lister is one cluster's application list (implemented by
// kubeview.Cache). Each call returns a page of its own: Applications
// names the rows' cluster in it (kubeview makes new rows on every call).
type Lister interface {
	Applications(kubeview.Query) (kubeview.Page, error)
}

// Member is one cluster of the set.
type Member struct {
	Name string
	Apps Lister
}

// ErrUnknownCluster is returned for a cluster filter that names no member.
var ErrUnknownCluster = errors.New("fleetset: unknown cluster")

// Applications is the application list over every member: q applied to
// each, rows naming their cluster; cluster ("" for all) filters the rows
// and is a facet like health and sync: Counts.Cluster counts per cluster
// the Apps that match every other filter.
//
// With one member the member's own page is returned (its paging and
// continue tokens). With several, the rows are merged (by namespace, name,
// then cluster; the health and deploy sorts order first by their key) and
// paged here, with continue tokens of this package. Each member's list is
// already in that order (without the cluster), so a page needs only the
// first offset+limit rows of each member, not every row.
func Applications(members []Member, cluster string, q kubeview.Query) (kubeview.Page, error) {
	if cluster != "" && !slices.ContainsFunc(members, func(m Member) bool { return m.Name == cluster }) {
		return kubeview.Page{}, fmt.Errorf("%w %q", ErrUnknownCluster, cluster)
	}
	if len(members) == 1 {
		m := members[0]
		p, err := m.Apps.Applications(q)
		if err != nil {
			return kubeview.Page{}, fmt.Errorf("cluster %s: %w", m.Name, err)
		}
		for i := range p.Rows { // the page is this call's own (Lister)
			p.Rows[i].Cluster = m.Name
		}
		p.Counts.Cluster = map[string]int{m.Name: p.Matched}
		return p, nil
	}
	offset := max(q.Offset, 0)
	if q.After != "" {
		n, err := ParseOffsetToken(continuePrefix, q.After)
		if err != nil {
			return kubeview.Page{}, err
		}
		offset = n
	}
	all := q
	all.Offset, all.Limit, all.After = 0, 0, ""
	if q.Limit > 0 {
		all.Limit = offset + q.Limit
	}
	out := kubeview.Page{Counts: kubeview.Counts{Health: map[objrules.HealthStatus]int{}, Sync: map[kubeview.SyncStatus]int{}, Cluster: map[string]int{}}}
	// Each row keeps its cached JSON (kubeview.Page.Encoded), which
	// serves it whatever its cluster.
	type row struct {
		kubeview.AppRow
		enc kubeview.RowJSON
	}
	var rows []row
	for _, m := range members {
		p, err := m.Apps.Applications(all)
		if err != nil {
			return kubeview.Page{}, fmt.Errorf("cluster %s: %w", m.Name, err)
		}
		out.Version += p.Version
		out.Counts.Fleet += p.Counts.Fleet
		out.Counts.Cluster[m.Name] = p.Matched
		if cluster != "" && m.Name != cluster {
			continue
		}
		out.Counts.Add(p.Counts)
		for i, r := range p.Rows {
			r.Cluster = m.Name
			var enc kubeview.RowJSON
			if i < len(p.Encoded) {
				enc = p.Encoded[i]
			}
			rows = append(rows, row{r, enc})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return kubeview.CompareRows(q.Sort, &a.AppRow, &b.AppRow) })
	// Matched counts every match, not only the rows fetched.
	for name, n := range out.Counts.Cluster {
		if cluster == "" || name == cluster {
			out.Matched += n
		}
	}
	start, end := kubeview.PageBounds(offset, q.Limit, len(rows))
	out.Offset = start
	out.Rows = make([]kubeview.AppRow, 0, end-start)
	out.Encoded = make([]kubeview.RowJSON, 0, end-start)
	for _, r := range rows[start:end] {
		out.Rows = append(out.Rows, r.AppRow)
		out.Encoded = append(out.Encoded, r.enc)
	}
	if q.Limit > 0 && start+q.Limit < out.Matched {
		out.Continue = OffsetToken(continuePrefix, end)
	}
	return out, nil
}

// continuePrefix marks this package's continue tokens (an offset into the
// merged list).
const continuePrefix = "set."

// OffsetToken is a continue token naming offset n of a list whose tokens
// start with prefix (this package's "set.", or another list's own).
func OffsetToken(prefix string, n int) string { return prefix + strconv.Itoa(n) }

// ParseOffsetToken reads an OffsetToken of prefix; anything else (another
// list's token, a number with a sign, leading zeros or more than 9 digits)
// is kubeview.ErrBadContinue.
func ParseOffsetToken(prefix, tok string) (int, error) {
	s, ok := strings.CutPrefix(tok, prefix)
	if !ok || len(s) > 9 {
		return 0, kubeview.ErrBadContinue
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strconv.Itoa(n) != s {
		return 0, kubeview.ErrBadContinue
	}
	return n, nil
}
