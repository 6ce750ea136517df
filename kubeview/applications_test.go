package kubeview_test

import (
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
)

// genApp is a generated App with the row the cache should compute for it.
type genApp struct {
	fix      fixApp
	health   objrules.HealthStatus
	sync     kubeview.SyncStatus
	deployed time.Time // zero without a Deployment
}

func (g genApp) key() string { return g.fix.key() }

var (
	genNamespaces = []string{"prod", "stage", "dev"}
	genPrefixes   = []string{"web", "api", "worker", "billing"}
)

// genFleet returns n Apps spread over genNamespaces, cycling through five
// states (healthy, rollout in progress, paused, no Deployment, progress
// deadline exceeded), with deploy times in an order unrelated to the names.
func genFleet(n int) []genApp {
	out := make([]genApp, n)
	for i := range n {
		name := fmt.Sprintf("%s-%04d", genPrefixes[i%len(genPrefixes)], i)
		f := fixApp{ns: genNamespaces[i%len(genNamespaces)], name: name,
			deployed: fixT0.Add(time.Duration((i*37)%n) * time.Minute)}
		g := genApp{fix: f}
		switch i % 5 {
		case 0:
			g.health, g.sync = objrules.HealthHealthy, kubeview.SyncSynced
		case 1:
			g.fix.replicas = 3
			g.fix.versions = []fixVersion{{image: img(name, "1.1.0"), ready: 2}, {image: img(name, "1.2.0"), ready: 1}}
			g.health, g.sync = objrules.HealthProgressing, kubeview.SyncOutOfSync
		case 2:
			g.fix.dep = func(d *appsv1.Deployment) { d.Spec.Paused = true }
			g.health, g.sync = objrules.HealthSuspended, kubeview.SyncSynced
		case 3:
			g.fix.noDeployment = true
			g.health, g.sync = objrules.HealthMissing, kubeview.SyncUnknown
		case 4:
			g.fix.replicas = 3
			g.fix.versions = []fixVersion{{image: img(name, "1.1.0"), ready: 3}, {image: img(name, "1.2.0"), notReady: 1}}
			g.fix.dep = func(d *appsv1.Deployment) {
				d.Status.Conditions[1] = appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}
			}
			g.health, g.sync = objrules.HealthDegraded, kubeview.SyncOutOfSync
		}
		if !g.fix.noDeployment {
			g.deployed = g.fix.deployed
		}
		out[i] = g
	}
	return out
}

func genFixtures(gen []genApp) []fixApp {
	out := make([]fixApp, len(gen))
	for i, g := range gen {
		out[i] = g.fix
	}
	return out
}

// healthRankTest is HEALTH.md's order, best to worst.
var healthRankTest = map[objrules.HealthStatus]int{
	objrules.HealthHealthy: 0, objrules.HealthSuspended: 1, objrules.HealthProgressing: 2,
	objrules.HealthMissing: 3, objrules.HealthDegraded: 4, objrules.HealthUnknown: 5,
}

// wantQuery is the model of Applications: the keys of the apps q selects,
// in q's order, before paging, ties broken by namespace then name.
func wantQuery(gen []genApp, q kubeview.Query) []string {
	var sel []genApp
	for _, g := range gen {
		if q.Namespace != "" && g.fix.ns != q.Namespace ||
			q.Health != "" && g.health != q.Health ||
			q.Sync != "" && g.sync != q.Sync ||
			!strings.Contains(g.fix.name, strings.ToLower(q.Search)) {
			continue
		}
		sel = append(sel, g)
	}
	slices.SortFunc(sel, func(a, b genApp) int {
		var c int
		switch q.Sort {
		case kubeview.SortHealth:
			c = cmp.Compare(healthRankTest[b.health], healthRankTest[a.health])
		case kubeview.SortDeployed:
			c = b.deployed.Compare(a.deployed)
		}
		return cmp.Or(c, cmp.Compare(a.fix.ns, b.fix.ns), cmp.Compare(a.fix.name, b.fix.name))
	})
	keys := make([]string, len(sel))
	for i, g := range sel {
		keys[i] = g.key()
	}
	return keys
}

func pageKeys(p kubeview.Page) []string {
	keys := make([]string, len(p.Rows))
	for i, r := range p.Rows {
		keys[i] = r.Key()
	}
	return keys
}

func TestApplicationsQuery(t *testing.T) {
	const n = 120
	gen := genFleet(n)
	env := newTestEnv(t, genNamespaces, genFixtures(gen)...)

	t.Run("rows match the generated states", func(t *testing.T) {
		rows := rowsByKey(t, env.cache)
		for _, g := range gen {
			r, ok := rows[g.key()]
			if !ok {
				t.Errorf("no row %s", g.key())
				continue
			}
			if r.Health.Status != g.health || r.Sync.Status != g.sync || !r.LastDeployed.Equal(g.deployed) {
				t.Errorf("row %s = %s/%s deployed %v, want %s/%s deployed %v", g.key(), r.Health.Status, r.Sync.Status, r.LastDeployed, g.health, g.sync, g.deployed)
			}
		}
	})

	tests := []struct {
		name         string
		q            kubeview.Query
		wantOffset   int
		wantLen      int  // rows on the page; -1 for all matched from the offset
		wantContinue bool // a continue token is expected
		empty        bool // the query selects nothing
	}{
		{name: "everything by namespace then name", q: kubeview.Query{}, wantLen: -1},
		{name: "namespace", q: kubeview.Query{Namespace: "stage"}, wantLen: -1},
		{name: "unknown namespace", q: kubeview.Query{Namespace: "nope"}, wantLen: -1, empty: true},
		{name: "health", q: kubeview.Query{Health: objrules.HealthDegraded}, wantLen: -1},
		{name: "sync", q: kubeview.Query{Sync: kubeview.SyncOutOfSync}, wantLen: -1},
		{name: "health and namespace", q: kubeview.Query{Health: objrules.HealthMissing, Namespace: "dev"}, wantLen: -1},
		{name: "search is case-insensitive", q: kubeview.Query{Search: "WEB"}, wantLen: -1},
		{name: "search is a substring", q: kubeview.Query{Search: "er-00"}, wantLen: -1},
		{name: "search matching nothing", q: kubeview.Query{Search: "zzz"}, wantLen: -1, empty: true},
		{name: "all filters", q: kubeview.Query{Namespace: "prod", Health: objrules.HealthHealthy, Sync: kubeview.SyncSynced, Search: "Api"}, wantLen: -1},
		{name: "sort name", q: kubeview.Query{Sort: kubeview.SortName}, wantLen: -1},
		{name: "sort health, worst first", q: kubeview.Query{Sort: kubeview.SortHealth}, wantLen: -1},
		{name: "sort deployed, newest first", q: kubeview.Query{Sort: kubeview.SortDeployed}, wantLen: -1},
		{name: "sort health with a filter", q: kubeview.Query{Sort: kubeview.SortHealth, Sync: kubeview.SyncOutOfSync}, wantLen: -1},
		{name: "first page", q: kubeview.Query{Limit: 10}, wantLen: 10, wantContinue: true},
		{name: "middle page", q: kubeview.Query{Offset: 10, Limit: 7}, wantOffset: 10, wantLen: 7, wantContinue: true},
		{name: "last page is short", q: kubeview.Query{Offset: n - 3, Limit: 10}, wantOffset: n - 3, wantLen: 3},
		{name: "page ending exactly at the end", q: kubeview.Query{Offset: n - 10, Limit: 10}, wantOffset: n - 10, wantLen: 10},
		{name: "offset past the end", q: kubeview.Query{Offset: n + 5, Limit: 10}, wantOffset: n, wantLen: 0},
		{name: "negative offset", q: kubeview.Query{Offset: -4, Limit: 5}, wantOffset: 0, wantLen: 5, wantContinue: true},
		{name: "offset without limit", q: kubeview.Query{Offset: 100}, wantOffset: 100, wantLen: -1},
		{name: "paged health sort", q: kubeview.Query{Sort: kubeview.SortHealth, Offset: 20, Limit: 15}, wantOffset: 20, wantLen: 15, wantContinue: true},
		{name: "paged deployed sort with filter", q: kubeview.Query{Sort: kubeview.SortDeployed, Namespace: "prod", Offset: 5, Limit: 5}, wantOffset: 5, wantLen: 5, wantContinue: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all := wantQuery(gen, tt.q)
			if got := len(all) == 0; got != tt.empty {
				t.Fatalf("model selects %d apps; the case expects none: %t", len(all), tt.empty)
			}
			want := all[tt.wantOffset:]
			if tt.wantLen >= 0 {
				want = want[:tt.wantLen]
			}
			p, err := env.cache.Applications(tt.q)
			if err != nil {
				t.Fatalf("Applications(%+v) error = %v", tt.q, err)
			}
			if diff := gocmp.Diff(want, pageKeys(p)); diff != "" {
				t.Errorf("Applications(%+v) rows mismatch (-want +got):\n%s", tt.q, diff)
			}
			if p.Matched != len(all) {
				t.Errorf("Applications(%+v).Matched = %d, want %d", tt.q, p.Matched, len(all))
			}
			if p.Offset != tt.wantOffset {
				t.Errorf("Applications(%+v).Offset = %d, want %d", tt.q, p.Offset, tt.wantOffset)
			}
			if got := p.Continue != ""; got != tt.wantContinue {
				t.Errorf("Applications(%+v).Continue = %q, want a token: %t", tt.q, p.Continue, tt.wantContinue)
			}
			if p.Counts.Fleet != n {
				t.Errorf("Applications(%+v).Counts.Fleet = %d, want %d (the whole fleet)", tt.q, p.Counts.Fleet, n)
			}
			if scope := len(wantQuery(gen, kubeview.Query{Namespace: tt.q.Namespace, Search: tt.q.Search})); p.Counts.Total != scope {
				t.Errorf("Applications(%+v).Counts.Total = %d, want %d (namespace and search)", tt.q, p.Counts.Total, scope)
			}
		})
	}
}

// TestApplicationsContinue pages with continue tokens while the fleet
// changes.
func TestApplicationsContinue(t *testing.T) {
	const n = 60
	gen := genFleet(n)
	env := newTestEnv(t, genNamespaces, genFixtures(gen)...)
	c := env.cache

	t.Run("name order pages through everything", func(t *testing.T) {
		q := kubeview.Query{Limit: 7}
		var got []string
		for pages := 0; ; pages++ {
			if pages > n {
				t.Fatalf("more than %d pages", n)
			}
			p, err := c.Applications(q)
			if err != nil {
				t.Fatalf("Applications(%+v) error = %v", q, err)
			}
			if len(p.Rows) > q.Limit {
				t.Fatalf("Applications(%+v) has %d rows, want at most %d", q, len(p.Rows), q.Limit)
			}
			got = append(got, pageKeys(p)...)
			if p.Continue == "" {
				break
			}
			q.After = p.Continue
		}
		if diff := gocmp.Diff(wantQuery(gen, kubeview.Query{}), got); diff != "" {
			t.Errorf("pages mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("offset tokens page other sorts", func(t *testing.T) {
		for _, sort := range []string{kubeview.SortHealth, kubeview.SortDeployed} {
			q := kubeview.Query{Sort: sort, Limit: 9, Namespace: "prod"}
			var got []string
			for pages := 0; ; pages++ {
				if pages > n {
					t.Fatalf("more than %d pages", n)
				}
				p, err := c.Applications(q)
				if err != nil {
					t.Fatalf("Applications(%+v) error = %v", q, err)
				}
				if want := len(got); p.Offset != want {
					t.Errorf("Applications(%+v).Offset = %d, want %d", q, p.Offset, want)
				}
				got = append(got, pageKeys(p)...)
				if p.Continue == "" {
					break
				}
				q.After = p.Continue
			}
			if diff := gocmp.Diff(wantQuery(gen, kubeview.Query{Sort: sort, Namespace: "prod"}), got); diff != "" {
				t.Errorf("sort %s: pages mismatch (-want +got):\n%s", sort, diff)
			}
		}
	})

	t.Run("a name token is refused by another sort", func(t *testing.T) {
		p, err := c.Applications(kubeview.Query{Limit: 5})
		if err != nil || p.Continue == "" {
			t.Fatalf("Applications(Limit 5) = continue %q, %v, want a token", p.Continue, err)
		}
		q := kubeview.Query{Sort: kubeview.SortHealth, Limit: 5, After: p.Continue}
		if _, err := c.Applications(q); !errors.Is(err, kubeview.ErrBadContinue) {
			t.Errorf("Applications(%+v) error = %v, want ErrBadContinue", q, err)
		}
	})

	t.Run("the token replaces the offset", func(t *testing.T) {
		p1, err := c.Applications(kubeview.Query{Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		q := kubeview.Query{Limit: 5, Offset: 40, After: p1.Continue}
		p2, err := c.Applications(q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(wantQuery(gen, kubeview.Query{})[5:10], pageKeys(p2)); diff != "" {
			t.Errorf("Applications(%+v) rows mismatch (-want +got):\n%s", q, diff)
		}
	})

	t.Run("garbage tokens", func(t *testing.T) {
		b64 := base64.RawURLEncoding.EncodeToString
		for _, tok := range []string{
			"!!!", "a b", b64([]byte("x:1")), b64([]byte("o:-1")), b64([]byte("o:abc")),
			b64([]byte("k:noslash")), b64([]byte("k:/web")), b64([]byte("k:prod/")), b64([]byte("k:")),
		} {
			for _, sort := range []string{"", kubeview.SortHealth} {
				q := kubeview.Query{Sort: sort, Limit: 5, After: tok}
				if _, err := c.Applications(q); !errors.Is(err, kubeview.ErrBadContinue) {
					t.Errorf("Applications(%+v) error = %v, want ErrBadContinue", q, err)
				}
			}
		}
	})

	// Runs last: it changes the fleet.
	t.Run("name order resumes after the last key when rows come and go", func(t *testing.T) {
		ctx := t.Context()
		p1, err := c.Applications(kubeview.Query{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		last := p1.Rows[len(p1.Rows)-1]
		first := p1.Rows[0]
		before := fixApp{ns: first.Namespace, name: "0-before", noDeployment: true} // sorts before the first row
		after := fixApp{ns: last.Namespace, name: last.Name + "-a", noDeployment: true}
		for _, f := range []fixApp{before, after} {
			if _, err := env.dyn.Resource(appcr.Resource).Namespace(f.ns).Create(ctx, f.appObject(), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// The last row seen goes away too.
		if err := env.dyn.Resource(appcr.Resource).Namespace(last.Namespace).Delete(ctx, last.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitPage(t, c, kubeview.Query{}, "two Apps added and one deleted", func(p kubeview.Page) bool {
			_, hasBefore := findRow(p, before.key())
			_, hasAfter := findRow(p, after.key())
			_, hasLast := findRow(p, last.Key())
			return hasBefore && hasAfter && !hasLast
		})

		p2, err := c.Applications(kubeview.Query{Limit: 10, After: p1.Continue})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		all, err := c.Applications(kubeview.Query{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range all.Rows {
			if cmp.Or(cmp.Compare(r.Namespace, last.Namespace), cmp.Compare(r.Name, last.Name)) > 0 {
				want = append(want, r.Key())
			}
		}
		want = want[:10]
		if want[0] != after.key() {
			t.Fatalf("model: first key after %s = %s, want %s", last.Key(), want[0], after.key())
		}
		if diff := gocmp.Diff(want, pageKeys(p2)); diff != "" {
			t.Errorf("page after %s mismatch (-want +got):\n%s", last.Key(), diff)
		}
		if p2.Offset != 10 { // "0-before" and the 9 rows left of page 1 come first
			t.Errorf("page 2 Offset = %d, want 10", p2.Offset)
		}
	})
}

// TestListHelpers: the order, paging, offset tokens and count merging
// that the fleet and package fleetset share.
func TestListHelpers(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := func(cluster, ns, name string, h objrules.HealthStatus, deployed int) *kubeview.AppRow {
		return &kubeview.AppRow{Cluster: cluster, Namespace: ns, Name: name, Health: objrules.Health{Status: h}, LastDeployed: t0.Add(time.Duration(deployed) * time.Hour)}
	}
	order := []struct {
		sort string
		a, b *kubeview.AppRow
		want int
	}{
		{kubeview.SortName, r("", "a", "z", objrules.HealthDegraded, 0), r("", "b", "a", objrules.HealthHealthy, 0), -1},
		{kubeview.SortName, r("us", "a", "x", "", 0), r("eu", "a", "x", "", 0), 1},
		{kubeview.SortHealth, r("", "b", "b", objrules.HealthDegraded, 0), r("", "a", "a", objrules.HealthHealthy, 0), -1},
		{kubeview.SortHealth, r("", "b", "b", objrules.HealthHealthy, 0), r("", "a", "a", objrules.HealthHealthy, 0), 1},
		{kubeview.SortDeployed, r("", "b", "b", "", 2), r("", "a", "a", "", 1), -1},
		{kubeview.SortDeployed, r("", "a", "a", "", 1), r("", "a", "a", "", 1), 0},
	}
	for _, tt := range order {
		if got := kubeview.CompareRows(tt.sort, tt.a, tt.b); got != tt.want {
			t.Errorf("CompareRows(%q, %s/%s/%s, %s/%s/%s) = %d, want %d", tt.sort, tt.a.Cluster, tt.a.Namespace, tt.a.Name, tt.b.Cluster, tt.b.Namespace, tt.b.Name, got, tt.want)
		}
	}
	bounds := []struct{ start, limit, n, wantStart, wantEnd int }{
		{0, 0, 5, 0, 5}, {2, 2, 5, 2, 4}, {4, 2, 5, 4, 5}, {7, 2, 5, 5, 5}, {-3, 2, 5, 0, 2}, {0, 3, 0, 0, 0},
	}
	for _, tt := range bounds {
		if s, e := kubeview.PageBounds(tt.start, tt.limit, tt.n); s != tt.wantStart || e != tt.wantEnd {
			t.Errorf("PageBounds(%d, %d, %d) = %d, %d, want %d, %d", tt.start, tt.limit, tt.n, s, e, tt.wantStart, tt.wantEnd)
		}
	}
	var c kubeview.Counts
	c.Add(kubeview.Counts{Fleet: 9, Total: 3, Drift: 1, Health: map[objrules.HealthStatus]int{objrules.HealthHealthy: 2}, Sync: map[kubeview.SyncStatus]int{kubeview.SyncSynced: 3}})
	c.Add(kubeview.Counts{Fleet: 9, Total: 2, Drift: 2, Health: map[objrules.HealthStatus]int{objrules.HealthHealthy: 1, objrules.HealthDegraded: 1}})
	want := kubeview.Counts{Total: 5, Drift: 3, Health: map[objrules.HealthStatus]int{objrules.HealthHealthy: 3, objrules.HealthDegraded: 1}, Sync: map[kubeview.SyncStatus]int{kubeview.SyncSynced: 3}}
	if diff := gocmp.Diff(want, c); diff != "" {
		t.Errorf("Counts.Add (-want +got):\n%s", diff)
	}
}
