package handlers

import (
	"context"
	"github.com/hanzoai/deploy-web/fleetset"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/roles"
)

// visibleContinuePrefix marks the continue tokens of a filtered list
// (visibleApplications), so a token of the unfiltered list is refused.
const visibleContinuePrefix = "vis."

// applicationsFor is the application list as the signed-in person may see
// it: the whole list for one who may view every App; otherwise only the
// Apps Allow(View) allows, with the counts, the page and the continue token
// computed over those rows alone (a count never tells of an App the
// person may not see).
//
// keep, when not nil, is a filter the caches do not know (the fleet's
// frozen filter), applied with the roles' before paging.
func (s *Server) applicationsFor(ctx context.Context, cluster string, q kubeview.Query, keep func(kubeview.AppRow) bool) (kubeview.Page, error) {
	g := s.grantsOf(ctx)
	if keep == nil && g.Allow(roles.View, roles.Target{}).Allowed {
		return s.applications(cluster, q)
	}
	visible := func(r kubeview.AppRow) bool {
		return (keep == nil || keep(r)) && s.mayView(g, r.Cluster, r.Namespace, r.Name)
	}
	offset := max(q.Offset, 0)
	if q.After != "" {
		n, err := fleetset.ParseOffsetToken(visibleContinuePrefix, q.After)
		if err != nil {
			return kubeview.Page{}, err
		}
		offset = n
	}
	// Every App in the query's scope (namespace, search; all clusters for
	// the cluster counts), before the facets.
	base := kubeview.Query{Namespace: q.Namespace, Search: q.Search, Sort: q.Sort}
	all, err := s.applications("", base)
	if err != nil {
		return kubeview.Page{}, err
	}
	out := kubeview.Page{Version: all.Version, Counts: kubeview.Counts{Health: map[objrules.HealthStatus]int{}, Sync: map[kubeview.SyncStatus]int{}, Cluster: map[string]int{}}}
	if base.Namespace == "" && base.Search == "" {
		out.Counts.Fleet = countVisible(all.Rows, visible)
	} else {
		fleet, err := s.applications("", kubeview.Query{})
		if err != nil {
			return kubeview.Page{}, err
		}
		out.Counts.Fleet = countVisible(fleet.Rows, visible)
	}
	var rows []kubeview.AppRow
	for _, r := range all.Rows {
		if !visible(r) {
			continue
		}
		okHealth := q.Health == "" || r.Health.Status == q.Health
		okSync := q.Sync == "" || r.Sync.Status == q.Sync
		okDrift := !q.Drift || r.Drift > 0
		if okHealth && okSync && okDrift {
			out.Counts.Cluster[r.Cluster]++
		}
		if cluster != "" && r.Cluster != cluster {
			continue
		}
		out.Counts.Total++
		if okSync && okDrift {
			out.Counts.Health[r.Health.Status]++
		}
		if okHealth && okDrift {
			out.Counts.Sync[r.Sync.Status]++
		}
		if okHealth && okSync && r.Drift > 0 {
			out.Counts.Drift++
		}
		if okHealth && okSync && okDrift {
			rows = append(rows, r)
		}
	}
	out.Matched = len(rows)
	start := min(offset, len(rows))
	end := len(rows)
	if q.Limit > 0 {
		end = min(start+q.Limit, len(rows))
	}
	out.Rows, out.Offset = rows[start:end], start
	if end < len(rows) && q.Limit > 0 {
		out.Continue = fleetset.OffsetToken(visibleContinuePrefix, end)
	}
	return out, nil
}

// mayView is the fleet's visibility rule, of the list and the search
// alike: whether g allows viewing the App name in namespace of cluster.
func (s *Server) mayView(g roles.Grants, cluster, namespace, name string) bool {
	return g.Allow(roles.View, roles.Target{Cluster: cluster, Environment: s.appEnv(cluster, namespace), Namespace: namespace, App: name}).Allowed
}

// countVisible counts the rows visible allows.
func countVisible(rows []kubeview.AppRow, visible func(kubeview.AppRow) bool) int {
	n := 0
	for _, r := range rows {
		if visible(r) {
			n++
		}
	}
	return n
}
