package handlers

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/release"
)

// recordingReleaser is a Releaser that records the writes it got.
type recordingReleaser struct {
	mu    sync.Mutex
	calls []string
}

func (r *recordingReleaser) Rollback(ctx context.Context, namespace, name, version, user string) (release.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, "rollback "+namespace+"/"+name+" "+version)
	return release.Result{App: name, Namespace: namespace, From: "1.1.0", To: version, Changed: true}, nil
}

func (r *recordingReleaser) Sync(ctx context.Context, namespace, name, user string) (release.SyncResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, "sync "+namespace+"/"+name)
	return release.SyncResult{App: name, Namespace: namespace, RequestedAt: "now"}, nil
}

func (r *recordingReleaser) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// twoClusters is a server over clusters "us" (apps/web, apps/twin,
// shop/twin; rows web and cart) and "eu-west" (apps/twin; row twin,
// unreachable for two minutes).
func twoClusters(t *testing.T) (ts *testServer, us, eu *recordingReleaser) {
	t.Helper()
	usView := newFakeView([]kubeview.AppRow{
		{Name: "cart", Namespace: "apps", Health: objrules.Health{Status: objrules.HealthDegraded}, Sync: kubeview.Sync{Status: kubeview.SyncSynced}},
		{Name: "web", Namespace: "apps", Health: objrules.Health{Status: objrules.HealthHealthy}, Sync: kubeview.Sync{Status: kubeview.SyncSynced}},
	})
	usView.namespaces = []string{"apps", "shop"}
	euView := newFakeView([]kubeview.AppRow{
		{Name: "twin", Namespace: "apps", Health: objrules.Health{Status: objrules.HealthHealthy}, Sync: kubeview.Sync{Status: kubeview.SyncSynced}},
	})
	euView.status = kubeview.Status{Synced: true, Reachable: false, LastContact: testNow.Add(-2 * time.Minute), Error: "dial tcp 127.0.0.1:1: connection refused"}
	us, eu = &recordingReleaser{}, &recordingReleaser{}
	ts = newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Clusters = []Cluster{
			{Name: "us", View: twinView{usView}, Release: us},
			{Name: "eu-west", View: onlyView{euView, "apps", "twin"}, Release: eu},
		}
	})
	return ts, us, eu
}

func TestFleetManyClusters(t *testing.T) {
	ts, _, _ := twoClusters(t)
	doc := parseHTML(t, ts.get(t, "/", nil).Body.String())
	var options []string
	for _, o := range byTag(oneByTestID(t, doc, "filter-cluster"), "option") {
		options = append(options, attr(o, "value"))
	}
	if diff := cmp.Diff([]string{"", "eu-west", "us"}, options); diff != "" {
		t.Errorf("cluster filter options mismatch (-want +got):\n%s", diff)
	}
	type rowSeen struct{ Cluster, Key, Href string }
	var rows []rowSeen
	stale := map[string]bool{}
	for _, r := range byTestID(doc, "app-row") {
		key := attr(r, "data-namespace") + "/" + attr(r, "data-app")
		rows = append(rows, rowSeen{text(oneByTestID(t, r, "row-cluster")), key, attr(byTag(r, "a")[0], "href")})
		stale[attr(r, "data-cluster")+"/"+key] = len(byTestID(r, "row-stale")) == 1
	}
	want := []rowSeen{
		{"us", "apps/cart", "/clusters/us/apps/apps/cart"},
		{"eu-west", "apps/twin", "/clusters/eu-west/apps/apps/twin"},
		{"us", "apps/web", "/clusters/us/apps/apps/web"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("rows mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]bool{"us/apps/cart": false, "eu-west/apps/twin": true, "us/apps/web": false}, stale); diff != "" {
		t.Errorf("stale rows mismatch (-want +got):\n%s", diff)
	}
	banners := byTestID(doc, "stale-banner")
	if len(banners) != 1 || attr(banners[0], "data-cluster") != "eu-west" || !strings.Contains(text(banners[0]), "Cluster eu-west unreachable.") || !strings.Contains(text(banners[0]), "2m ago") {
		t.Errorf("stale banners = %d (%v), want one for eu-west with the data's age", len(banners), banners)
	}
	for id, want := range map[string]string{"count-cluster-us": "us 2", "count-cluster-eu-west": "eu-west 1"} {
		c := oneByTestID(t, doc, id)
		if got := text(c); got != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	if href := attr(oneByTestID(t, doc, "count-cluster-eu-west"), "href"); href != "/?cluster=eu-west" {
		t.Errorf("eu-west chip href = %q, want the cluster filter", href)
	}

	// The filter: one cluster's rows, every cluster still counted.
	doc = parseHTML(t, ts.get(t, "/?cluster=eu-west", nil).Body.String())
	if got := byTestID(doc, "app-row"); len(got) != 1 || attr(got[0], "data-cluster") != "eu-west" {
		t.Errorf("GET /?cluster=eu-west: %d rows, want eu-west's one", len(got))
	}
	if got := text(oneByTestID(t, doc, "count-cluster-us")); got != "us 2" {
		t.Errorf("GET /?cluster=eu-west: us chip = %q, want us 2", got)
	}
	for _, target := range []string{"/?cluster=ap-south", "/?cluster=..%2F", "/v1/deploy/applications?cluster=nope"} {
		if w := ts.get(t, target, nil); w.Code != http.StatusNotFound {
			t.Errorf("GET %s: status = %d, want 404 (unknown cluster)", target, w.Code)
		}
	}
	if w := ts.get(t, "/?cluster=us&namespace=kube-system", nil); w.Code != http.StatusBadRequest {
		t.Errorf("GET a namespace that is no cluster's platform namespace: status = %d, want 400", w.Code)
	}

	// The JSON list: rows carry their cluster, counts per cluster.
	var got struct {
		Items  []kubeview.AppRow `json:"items"`
		Total  int               `json:"total"`
		Counts kubeview.Counts   `json:"counts"`
	}
	w := ts.get(t, "/v1/deploy/applications?cluster=us", nil)
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("GET applications: %v (%s)", err, w.Body)
	}
	if len(got.Items) != 2 || got.Items[0].Cluster != "us" || got.Items[1].Cluster != "us" || got.Total != 2 {
		t.Errorf("GET applications?cluster=us = %+v, want us's two rows", got)
	}
	if diff := cmp.Diff(map[string]int{"us": 2, "eu-west": 1}, got.Counts.Cluster); diff != "" {
		t.Errorf("counts.cluster mismatch (-want +got):\n%s", diff)
	}
}

// TestFleetOneClusterHasNoClusterColumn: with one cluster nothing of the
// cluster shows, as before clusters.
func TestFleetOneClusterHasNoClusterColumn(t *testing.T) {
	ts := newTestServer(t, newFakeView(testRows()))
	doc := parseHTML(t, ts.get(t, "/", nil).Body.String())
	for _, id := range []string{"filter-cluster", "row-cluster", "count-cluster-in-cluster", "row-stale"} {
		if n := len(byTestID(doc, id)); n != 0 {
			t.Errorf("one cluster: %d elements %q, want none", n, id)
		}
	}
	if href := attr(byTag(byTestID(doc, "app-row")[0], "a")[0], "href"); !strings.HasPrefix(href, "/clusters/in-cluster/apps/") {
		t.Errorf("row link = %q, want the app page under its cluster", href)
	}
}

func TestLegacyAppURLs(t *testing.T) {
	one := newTestServer(t, newFakeView(nil))
	many, _, _ := twoClusters(t)
	for _, tt := range []struct {
		name         string
		ts           *testServer
		method       string
		target       string
		wantStatus   int
		wantLocation string
	}{
		{"one cluster: the page", one, "GET", "/apps/apps/web", http.StatusMovedPermanently, "/clusters/in-cluster/apps/apps/web"},
		{"one cluster: a sub-page and its query", one, "GET", "/apps/apps/web/logs?tail=5&follow=1", http.StatusMovedPermanently, "/clusters/in-cluster/apps/apps/web/logs?tail=5&follow=1"},
		{"one cluster: a resource ref stays escaped", one, "GET", "/apps/apps/web/resource/apps:Deployment:apps:web", http.StatusMovedPermanently, "/clusters/in-cluster/apps/apps/web/resource/apps:Deployment:apps:web"},
		{"one cluster: a POST stays a POST", one, "POST", "/apps/apps/web/rollback", http.StatusPermanentRedirect, "/clusters/in-cluster/apps/apps/web/rollback"},
		{"one cluster: hostile segments", one, "GET", "/apps/a%2Fb/%2E%2E", http.StatusMovedPermanently, "/clusters/in-cluster/apps/a%2Fb/%2E%2E"},
		{"many: one cluster has it", many, "GET", "/apps/apps/web", http.StatusMovedPermanently, "/clusters/us/apps/apps/web"},
		{"many: a POST is never redirected to a guessed cluster", many, "POST", "/apps/apps/web/rollback", http.StatusConflict, ""},
		{"many: nor a DELETE", many, "DELETE", "/apps/apps/web", http.StatusConflict, ""},
		{"many: eu-west has it in this namespace", many, "GET", "/apps/apps/twin/tree", 0, ""},
		{"many: no cluster has it", many, "GET", "/apps/apps/nope", http.StatusNotFound, ""},
		{"many: a namespace no cluster has", many, "GET", "/apps/kube-system/web", http.StatusNotFound, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := tt.ts.do(t, request{method: tt.method, target: tt.target, admin: true})
			if tt.wantStatus == 0 {
				// twin is in apps of both clusters: ambiguous.
				if w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "exists in clusters eu-west, us") {
					t.Errorf("%s %s: status = %d, body %q, want 409 naming both clusters", tt.method, tt.target, w.Code, w.Body)
				}
				return
			}
			if w.Code != tt.wantStatus || w.Header().Get("Location") != tt.wantLocation {
				t.Errorf("%s %s: status = %d, Location %q, want %d, %q", tt.method, tt.target, w.Code, w.Header().Get("Location"), tt.wantStatus, tt.wantLocation)
			}
		})
	}
}

func TestWritesGoToTheAppsCluster(t *testing.T) {
	ts, us, eu := twoClusters(t)
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	w := ts.do(t, request{method: "POST", target: "/v1/deploy/twin/rollback?cluster=eu-west", admin: true, header: form, body: "version=1.0.0"})
	if w.Code != http.StatusOK {
		t.Fatalf("POST rollback in eu-west: status = %d, body %s", w.Code, w.Body)
	}
	var res map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || res["cluster"] != "eu-west" || res["app"] != "twin" {
		t.Errorf("POST rollback in eu-west = %s, want it naming cluster eu-west", w.Body)
	}
	// With several clusters an API write names its cluster: never a guess
	// from the caches (an unreachable cluster's cache is empty), even when
	// only one cluster has the name.
	for _, target := range []string{"/v1/deploy/twin/rollback", "/v1/deploy/web/rollback", "/v1/deploy/web/sync", "/v1/deploy/web/sync?namespace=apps"} {
		w := ts.do(t, request{method: "POST", target: target, admin: true, header: form, body: "version=1.0.0"})
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "?cluster=") || !strings.Contains(w.Body.String(), "eu-west, us") {
			t.Errorf("POST %s without ?cluster=: status = %d, body %q; want 400 asking for ?cluster= and naming the clusters", target, w.Code, w.Body)
		}
	}
	if w := ts.do(t, request{method: "POST", target: "/v1/deploy/twin/sync?cluster=nope", admin: true}); w.Code != http.StatusNotFound {
		t.Errorf("POST sync in an unknown cluster: status = %d, want 404", w.Code)
	}
	if w := ts.do(t, request{method: "POST", target: "/clusters/us/apps/apps/web/sync", admin: true}); w.Code != http.StatusOK {
		t.Errorf("POST sync page in us: status = %d, body %s", w.Code, w.Body)
	}
	if w := ts.do(t, request{method: "POST", target: "/clusters/eu-west/apps/apps/web/sync", admin: true}); w.Code != http.StatusNotFound {
		t.Errorf("POST sync of an App eu-west does not have: status = %d, want 404", w.Code)
	}
	if diff := cmp.Diff([]string{"rollback apps/twin 1.0.0"}, eu.got()); diff != "" {
		t.Errorf("eu-west writes mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"sync apps/web"}, us.got()); diff != "" {
		t.Errorf("us writes mismatch (-want +got):\n%s", diff)
	}
}

func TestDecideReady(t *testing.T) {
	for _, tt := range []struct {
		name              string
		synced, reachable []bool
		want              readiness
	}{
		{"all synced", []bool{true, true}, []bool{true, true}, readiness{Status: "ready"}},
		{"one still syncing", []bool{true, false}, []bool{true, true}, readiness{Status: "caches not synced", NotSynced: []string{"b"}}},
		{"an unreachable one is not waited for", []bool{true, false}, []bool{true, false}, readiness{Status: "ready", Unreachable: []string{"b"}}},
		{"synced, now unreachable", []bool{true, true}, []bool{false, true}, readiness{Status: "ready", Unreachable: []string{"a"}}},
		{"none synced, none reachable", []bool{false, false}, []bool{false, false}, readiness{Status: "caches not synced", NotSynced: []string{"a", "b"}, Unreachable: []string{"a", "b"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, decideReady([]string{"a", "b"}, tt.synced, tt.reachable)); diff != "" {
				t.Errorf("decideReady() mismatch (-want +got):\n%s", diff)
			}
		})
	}
	// /readyz is public: it answers the status only, never the clusters'
	// names or reachability (the fleet's layout); the detail is logged,
	// once per change.
	ts, _, _ := twoClusters(t)
	for range 2 {
		w := ts.do(t, request{target: "/readyz"})
		if w.Code != http.StatusOK || strings.TrimSpace(w.Body.String()) != `{"status":"ready"}` {
			t.Errorf("GET /readyz = %d %s, want 200 and the status only", w.Code, w.Body)
		}
	}
	logs := ts.log.String()
	if n := strings.Count(logs, "msg=readiness"); n != 1 || !strings.Contains(logs, "unreachable=[eu-west]") {
		t.Errorf("log = %q, want one readiness line naming eu-west unreachable", logs)
	}
}

// TestEnvironmentsNameTheirCluster: the environments page shows the
// configured cluster an environment deploys to, when it is one.
func TestEnvironmentsNameTheirCluster(t *testing.T) {
	cfg, err := envconfig.ParseConfig([]byte(testEnvConfig), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runner := envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{Store: planstore.New(fake.NewClientset().CoreV1(), "deploy-web", 10)})
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Environments = runner
		o.EnvClusters = map[string]string{"dev": "eu-west"}
	})
	doc := parseHTML(t, ts.get(t, "/environments", nil).Body.String())
	got := map[string]string{}
	for _, r := range byTestID(doc, "env-row") {
		c := ""
		if n := byTestID(r, "env-cluster"); len(n) == 1 {
			c = text(n[0])
		}
		got[attr(r, "data-env")] = c
	}
	if diff := cmp.Diff(map[string]string{"dev": "in eu-west", "prod": ""}, got); diff != "" {
		t.Errorf("environments' clusters mismatch (-want +got):\n%s", diff)
	}
}
