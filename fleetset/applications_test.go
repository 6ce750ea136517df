package fleetset

import (
	stdcmp "cmp"
	"encoding/base64"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
)

// fakeLister answers a query over fixed rows like kubeview does: filters,
// faceted counts, name order, paging by Offset and Limit.
type fakeLister struct {
	rows    []kubeview.AppRow
	version uint64
	err     error
	queries []kubeview.Query
}

func (f *fakeLister) Applications(q kubeview.Query) (kubeview.Page, error) {
	f.queries = append(f.queries, q)
	if f.err != nil {
		return kubeview.Page{}, f.err
	}
	p := kubeview.Page{Version: f.version, Counts: kubeview.Counts{Fleet: len(f.rows), Health: map[objrules.HealthStatus]int{}, Sync: map[kubeview.SyncStatus]int{}}}
	var matched []kubeview.AppRow
	for _, r := range f.rows {
		if q.Namespace != "" && r.Namespace != q.Namespace {
			continue
		}
		p.Counts.Total++
		if q.Health == "" || r.Health.Status == q.Health {
			p.Counts.Sync[r.Sync.Status]++
		}
		p.Counts.Health[r.Health.Status]++
		if q.Health != "" && r.Health.Status != q.Health {
			continue
		}
		matched = append(matched, r)
	}
	// kubeview's order: namespace and name, then stable by the sort's key.
	slices.SortFunc(matched, func(a, b kubeview.AppRow) int {
		return stdcmp.Or(stdcmp.Compare(a.Namespace, b.Namespace), stdcmp.Compare(a.Name, b.Name))
	})
	switch q.Sort {
	case kubeview.SortHealth:
		slices.SortStableFunc(matched, func(a, b kubeview.AppRow) int {
			switch {
			case a.Health.Status.Worse(b.Health.Status):
				return -1
			case b.Health.Status.Worse(a.Health.Status):
				return 1
			}
			return 0
		})
	case kubeview.SortDeployed:
		slices.SortStableFunc(matched, func(a, b kubeview.AppRow) int { return b.LastDeployed.Compare(a.LastDeployed) })
	}
	p.Matched = len(matched)
	end := len(matched)
	if q.Limit > 0 {
		end = min(q.Offset+q.Limit, end)
	}
	p.Rows = append([]kubeview.AppRow{}, matched[min(q.Offset, end):end]...)
	return p, nil
}

func row(ns, name string, h objrules.HealthStatus, deployed int) kubeview.AppRow {
	return kubeview.AppRow{Namespace: ns, Name: name, Health: objrules.Health{Status: h}, Sync: kubeview.Sync{Status: kubeview.SyncSynced},
		LastDeployed: time.Unix(int64(deployed), 0)}
}

func keys(rows []kubeview.AppRow) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Cluster+"/"+r.Namespace+"/"+r.Name)
	}
	return out
}

func TestApplications(t *testing.T) {
	us := &fakeLister{version: 5, rows: []kubeview.AppRow{
		row("shop", "web", objrules.HealthHealthy, 3), row("shop", "cart", objrules.HealthDegraded, 1), row("pay", "ledger", objrules.HealthHealthy, 2),
	}}
	eu := &fakeLister{version: 7, rows: []kubeview.AppRow{
		row("shop", "web", objrules.HealthProgressing, 4), row("shop", "search", objrules.HealthHealthy, 0),
	}}
	members := []Member{{"eu-west", eu}, {"us", us}}
	for _, tt := range []struct {
		name        string
		cluster     string
		q           kubeview.Query
		wantKeys    []string
		wantMatched int
		wantCounts  kubeview.Counts
		wantCont    string
	}{
		{
			name:     "everything, by namespace, name, cluster",
			wantKeys: []string{"us/pay/ledger", "us/shop/cart", "eu-west/shop/search", "eu-west/shop/web", "us/shop/web"}, wantMatched: 5,
			wantCounts: kubeview.Counts{Fleet: 5, Total: 5, Health: map[objrules.HealthStatus]int{"Healthy": 3, "Degraded": 1, "Progressing": 1}, Sync: map[kubeview.SyncStatus]int{"Synced": 5},
				Cluster: map[string]int{"eu-west": 2, "us": 3}},
		},
		{
			name: "one cluster: its rows, every cluster counted", cluster: "eu-west",
			wantKeys: []string{"eu-west/shop/search", "eu-west/shop/web"}, wantMatched: 2,
			wantCounts: kubeview.Counts{Fleet: 5, Total: 2, Health: map[objrules.HealthStatus]int{"Healthy": 1, "Progressing": 1}, Sync: map[kubeview.SyncStatus]int{"Synced": 2},
				Cluster: map[string]int{"eu-west": 2, "us": 3}},
		},
		{
			name: "a facet counts per cluster the rows of the other filters", q: kubeview.Query{Health: objrules.HealthHealthy},
			wantKeys: []string{"us/pay/ledger", "eu-west/shop/search", "us/shop/web"}, wantMatched: 3,
			wantCounts: kubeview.Counts{Fleet: 5, Total: 5, Health: map[objrules.HealthStatus]int{"Healthy": 3, "Degraded": 1, "Progressing": 1}, Sync: map[kubeview.SyncStatus]int{"Synced": 3},
				Cluster: map[string]int{"eu-west": 1, "us": 2}},
		},
		{
			name: "worst first, stable over the name order", q: kubeview.Query{Sort: kubeview.SortHealth},
			wantKeys: []string{"us/shop/cart", "eu-west/shop/web", "us/pay/ledger", "eu-west/shop/search", "us/shop/web"}, wantMatched: 5,
		},
		{
			name: "newest deploy first", q: kubeview.Query{Sort: kubeview.SortDeployed},
			wantKeys: []string{"eu-west/shop/web", "us/shop/web", "us/pay/ledger", "us/shop/cart", "eu-west/shop/search"}, wantMatched: 5,
		},
		{
			name: "a page and its continue token", q: kubeview.Query{Limit: 2},
			wantKeys: []string{"us/pay/ledger", "us/shop/cart"}, wantMatched: 5, wantCont: "set.2",
		},
		{
			name: "the next page", q: kubeview.Query{Limit: 2, After: "set.2"},
			wantKeys: []string{"eu-west/shop/search", "eu-west/shop/web"}, wantMatched: 5, wantCont: "set.4",
		},
		{
			name: "worst first, second page", q: kubeview.Query{Sort: kubeview.SortHealth, Offset: 2, Limit: 2},
			wantKeys: []string{"us/pay/ledger", "eu-west/shop/search"}, wantMatched: 5, wantCont: "set.4",
		},
		{
			name: "newest first, after a token", q: kubeview.Query{Sort: kubeview.SortDeployed, After: "set.1", Limit: 3},
			wantKeys: []string{"us/shop/web", "us/pay/ledger", "us/shop/cart"}, wantMatched: 5, wantCont: "set.4",
		},
		{
			name: "one cluster's second page", cluster: "us", q: kubeview.Query{Offset: 2, Limit: 2},
			wantKeys: []string{"us/shop/web"}, wantMatched: 3,
		},
		{
			name: "an offset past the end", q: kubeview.Query{Offset: 50, Limit: 2},
			wantKeys: nil, wantMatched: 5,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Applications(members, tt.cluster, tt.q)
			if err != nil {
				t.Fatalf("Applications() error = %v", err)
			}
			if diff := cmp.Diff(tt.wantKeys, keys(got.Rows)); diff != "" {
				t.Errorf("Applications() rows mismatch (-want +got):\n%s", diff)
			}
			if got.Matched != tt.wantMatched || got.Continue != tt.wantCont || got.Version != 12 {
				t.Errorf("Applications() matched, continue, version = %d, %q, %d, want %d, %q, 12", got.Matched, got.Continue, got.Version, tt.wantMatched, tt.wantCont)
			}
			if tt.wantCounts.Health != nil {
				if diff := cmp.Diff(tt.wantCounts, got.Counts); diff != "" {
					t.Errorf("Applications() counts mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
	// A page asks each member for the rows up to its end only.
	us.queries, eu.queries = nil, nil
	if _, err := Applications(members, "", kubeview.Query{Offset: 100, Limit: 100, Sort: kubeview.SortHealth}); err != nil {
		t.Fatal(err)
	}
	if q := us.queries[0]; q.Offset != 0 || q.Limit != 200 || q.After != "" || q.Sort != kubeview.SortHealth {
		t.Errorf("query to a member = %+v, want offset 0, limit 200, the sort", q)
	}
	for _, tok := range []string{"abc", "set.", "set.-1", "set.01", "set.1e3", "set.9999999999", "set. 1", base64.RawURLEncoding.EncodeToString([]byte("o:1"))} {
		if _, err := Applications(members, "", kubeview.Query{After: tok, Limit: 1}); !errors.Is(err, kubeview.ErrBadContinue) {
			t.Errorf("Applications(after %q) error = %v, want ErrBadContinue", tok, err)
		}
	}
	if _, err := Applications(members, "ap-south", kubeview.Query{}); !errors.Is(err, ErrUnknownCluster) {
		t.Errorf("Applications(unknown cluster) error = %v, want ErrUnknownCluster", err)
	}
	bad := &fakeLister{err: errors.New("boom")}
	if _, err := Applications([]Member{{"us", us}, {"eu", bad}}, "", kubeview.Query{}); err == nil || err.Error() != "cluster eu: boom" {
		t.Errorf("Applications(a member fails) error = %v, want it naming the cluster", err)
	}
}

// TestApplicationsOneCluster: one member's own page passes through (its
// paging and tokens), rows named, the member's rows not modified.
func TestApplicationsOneCluster(t *testing.T) {
	us := &fakeLister{version: 3, rows: []kubeview.AppRow{row("shop", "web", objrules.HealthHealthy, 1), row("shop", "cart", objrules.HealthHealthy, 1)}}
	q := kubeview.Query{Limit: 1, After: "their-token"}
	got, err := Applications([]Member{{"us", us}}, "", q)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]kubeview.Query{q}, us.queries); diff != "" {
		t.Errorf("query passed to the member mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"us/shop/cart"}, keys(got.Rows)); diff != "" {
		t.Errorf("rows mismatch (-want +got):\n%s", diff)
	}
	if got.Counts.Cluster["us"] != 2 || us.rows[0].Cluster != "" {
		t.Errorf("Counts.Cluster = %v, member row cluster = %q, want us: 2 and the member's rows untouched", got.Counts.Cluster, us.rows[0].Cluster)
	}
}
