package kubeview

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hanzoai/deploy-web/objrules"
)

// facetFleet returns a cache whose application list holds rows, as the
// fleet would after computing them.
func facetFleet(rows []AppRow) *Cache {
	c := &Cache{}
	f := newFleet(c)
	changes := make([]rowChange, len(rows))
	for i, r := range rows {
		changes[i] = rowChange{key: r.Key(), row: &fleetRow{AppRow: r, json: encodeRow(&r)}}
	}
	f.apply(changes)
	c.fleet = f
	return c
}

func nonZeroCounts(c Counts) Counts {
	out := Counts{Fleet: c.Fleet, Total: c.Total, Drift: c.Drift, Health: map[objrules.HealthStatus]int{}, Sync: map[SyncStatus]int{}}
	for k, v := range c.Health {
		if v != 0 {
			out.Health[k] = v
		}
	}
	for k, v := range c.Sync {
		if v != 0 {
			out.Sync[k] = v
		}
	}
	return out
}

// TestApplicationsFacetCounts checks that each facet counts the Apps that
// match every other active filter: namespace, search and the other facets.
func TestApplicationsFacetCounts(t *testing.T) {
	row := func(ns, name string, h objrules.HealthStatus, s SyncStatus, drift int) AppRow {
		return AppRow{Namespace: ns, Name: name, Health: objrules.Health{Status: h}, Sync: Sync{Status: s, Drifted: drift > 0}, Drift: drift}
	}
	const (
		H, P, D, M = objrules.HealthHealthy, objrules.HealthProgressing, objrules.HealthDegraded, objrules.HealthMissing
		S, O, U    = SyncSynced, SyncOutOfSync, SyncUnknown
	)
	c := facetFleet([]AppRow{
		row("storefront", "web", H, S, 0),
		row("storefront", "cart", H, S, 1),
		row("storefront", "checkout", D, O, 0),
		row("storefront", "catalog", P, O, 2),
		row("payments", "billing", H, S, 0),
		row("payments", "ledger", D, O, 1),
		row("payments", "reports", M, U, 0),
	})
	type hm = map[objrules.HealthStatus]int
	type sm = map[SyncStatus]int
	tests := []struct {
		name        string
		q           Query
		want        Counts
		wantMatched int
	}{
		{"no filter: the fleet's totals", Query{},
			Counts{Fleet: 7, Total: 7, Health: hm{H: 3, D: 2, P: 1, M: 1}, Sync: sm{S: 3, O: 3, U: 1}, Drift: 3}, 7},
		{"namespace narrows every facet", Query{Namespace: "storefront"},
			Counts{Fleet: 7, Total: 4, Health: hm{H: 2, D: 1, P: 1}, Sync: sm{S: 2, O: 2}, Drift: 2}, 4},
		{"a health filter narrows sync and drift, not health", Query{Namespace: "storefront", Health: H},
			Counts{Fleet: 7, Total: 4, Health: hm{H: 2, D: 1, P: 1}, Sync: sm{S: 2}, Drift: 1}, 2},
		{"a sync filter narrows health and drift, not sync", Query{Sync: O},
			Counts{Fleet: 7, Total: 7, Health: hm{D: 2, P: 1}, Sync: sm{S: 3, O: 3, U: 1}, Drift: 2}, 3},
		{"the drift filter narrows health and sync, not drift", Query{Drift: true},
			Counts{Fleet: 7, Total: 7, Health: hm{H: 1, P: 1, D: 1}, Sync: sm{S: 1, O: 2}, Drift: 3}, 3},
		{"search is a scope filter", Query{Search: "C"},
			Counts{Fleet: 7, Total: 3, Health: hm{H: 1, D: 1, P: 1}, Sync: sm{S: 1, O: 2}, Drift: 2}, 3},
		{"every filter at once", Query{Namespace: "payments", Health: D, Drift: true},
			Counts{Fleet: 7, Total: 3, Health: hm{D: 1}, Sync: sm{O: 1}, Drift: 1}, 1},
		{"health and sync together", Query{Health: H, Sync: S},
			Counts{Fleet: 7, Total: 7, Health: hm{H: 3}, Sync: sm{S: 3}, Drift: 1}, 3},
		{"nothing in scope", Query{Search: "zzz"},
			Counts{Fleet: 7, Total: 0, Health: hm{}, Sync: sm{}, Drift: 0}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := c.Applications(tt.q)
			if err != nil {
				t.Fatalf("Applications(%+v) error = %v", tt.q, err)
			}
			if diff := cmp.Diff(tt.want, nonZeroCounts(p.Counts)); diff != "" {
				t.Errorf("Applications(%+v).Counts mismatch (-want +got):\n%s", tt.q, diff)
			}
			if p.Matched != tt.wantMatched {
				t.Errorf("Applications(%+v).Matched = %d, want %d", tt.q, p.Matched, tt.wantMatched)
			}
			// The active chip of a facet counts exactly the matching rows.
			if tt.q.Health != "" && p.Counts.Health[tt.q.Health] != p.Matched {
				t.Errorf("Applications(%+v).Counts.Health[%s] = %d, want Matched %d", tt.q, tt.q.Health, p.Counts.Health[tt.q.Health], p.Matched)
			}
			if tt.q.Sync != "" && p.Counts.Sync[tt.q.Sync] != p.Matched {
				t.Errorf("Applications(%+v).Counts.Sync[%s] = %d, want Matched %d", tt.q, tt.q.Sync, p.Counts.Sync[tt.q.Sync], p.Matched)
			}
			if tt.q.Drift && p.Counts.Drift != p.Matched {
				t.Errorf("Applications(%+v).Counts.Drift = %d, want Matched %d", tt.q, p.Counts.Drift, p.Matched)
			}
		})
	}
}
