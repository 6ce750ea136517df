package handlers

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/release"
)

const realNS = "shop"

// realCluster is one started control plane with its cache and releaser.
type realCluster struct {
	name string
	p    *platformtest.Env
	view *kubeview.Cache
}

// startRealCluster starts a control plane with the operator, a cache
// probing every 500ms, and the Apps given (name: tags, the last declared).
func startRealCluster(t *testing.T, name string, apps map[string][]string) (*realCluster, Cluster) {
	t.Helper()
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{realNS}, Operator: true})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.DiscardHandler)
	view, err := kubeview.New(p.Kube, p.Dyn, log, kubeview.Options{Namespaces: []string{realNS}, ProbeInterval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	view.Start(ctx)
	rc := &realCluster{name: name, p: p, view: view}
	for app, tags := range apps {
		for i, tag := range tags {
			image := "ghcr.io/acme/" + app + ":" + tag
			if i == 0 {
				u := &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "hanzo.ai/v1", "kind": "App",
					"metadata": map[string]any{"name": app, "namespace": realNS},
					"spec":     map[string]any{"image": image, "replicas": int64(1)},
				}}
				if _, err := p.Dyn.Resource(appcr.Resource).Namespace(realNS).Create(ctx, u, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			} else {
				patch := `{"spec":{"image":"` + image + `"}}`
				if _, err := p.Dyn.Resource(appcr.Resource).Namespace(realNS).Patch(ctx, app, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			rc.waitSynced(t, app, tag)
		}
	}
	rel := release.New(p.Dyn, p.Kube.CoreV1(), appcr.Resource, view.HistoryImages, log).InCluster(name)
	return rc, Cluster{Name: name, View: view, Release: rel, Logs: kubeview.NewLogs(view, p.Kube.CoreV1())}
}

// waitSynced waits (generously) until the cache shows app declaring and
// running tag, Synced.
func (c *realCluster) waitSynced(t *testing.T, app, tag string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		row, ok := c.view.Row(realNS, app)
		if ok && row.Version == tag && row.Sync.Status == kubeview.SyncSynced && row.RunningSummary() == tag+" (1)" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster %s: %s never Synced at %s: %+v", c.name, app, tag, row)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// app returns the App as the apiserver has it.
func (c *realCluster) app(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := c.p.Dyn.Resource(appcr.Resource).Namespace(realNS).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// rollbackEvents are the audit Events of rollbacks in the cluster.
func (c *realCluster) rollbackEvents(t *testing.T) []string {
	t.Helper()
	evs, err := c.p.Kube.CoreV1().Events(realNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs.Items {
		if e.Reason == release.ReasonRollback {
			out = append(out, e.Message)
		}
	}
	return out
}

// pollPage fetches GET / until ok says the page is as wanted, for at most
// a generous deadline (no timing is asserted).
func pollPage(t *testing.T, ts *testServer, what string, ok func(doc string, staleRows map[string]bool, banners []string) bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		w := ts.get(t, "/", nil)
		doc := parseHTML(t, w.Body.String())
		stale := map[string]bool{}
		for _, r := range byTestID(doc, "app-row") {
			stale[attr(r, "data-cluster")+"/"+attr(r, "data-app")] = len(byTestID(r, "row-stale")) == 1
		}
		var banners []string
		for _, b := range byTestID(doc, "stale-banner") {
			banners = append(banners, attr(b, "data-cluster"))
		}
		if w.Code == http.StatusOK && ok(w.Body.String(), stale, banners) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: never so; last: status %d, stale rows %v, banners %v", what, w.Code, stale, banners)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestTwoRealClusters serves two real control planes through one console:
// rows from both, each naming its cluster; a rollback of the App named web
// in one leaves the web of the other untouched; stopping the second
// cluster's apiserver marks only its rows stale, and they recover after it
// is back.
func TestTwoRealClusters(t *testing.T) {
	us, usCluster := startRealCluster(t, "us-east", map[string][]string{"web": {"1.0.0", "1.1.0"}, "cart": {"2.0.0"}})
	eu, euCluster := startRealCluster(t, "eu-west", map[string][]string{"web": {"1.0.0", "1.1.0"}})
	ts := newTestServer(t, newFakeView(nil), func(o *Options) { o.Clusters = []Cluster{usCluster, euCluster} })

	// Rows from both clusters, each naming its cluster.
	var list struct {
		Items  []kubeview.AppRow `json:"items"`
		Counts kubeview.Counts   `json:"counts"`
	}
	w := ts.get(t, "/v1/deploy/applications", nil)
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil {
		t.Fatalf("GET applications: %v (%s)", err, w.Body)
	}
	var got []string
	for _, r := range list.Items {
		got = append(got, r.Cluster+"/"+r.Namespace+"/"+r.Name+"@"+r.Version)
	}
	if want := "us-east/shop/cart@2.0.0 eu-west/shop/web@1.1.0 us-east/shop/web@1.1.0"; strings.Join(got, " ") != want {
		t.Errorf("GET applications rows = %q, want %q", strings.Join(got, " "), want)
	}
	if list.Counts.Cluster["us-east"] != 2 || list.Counts.Cluster["eu-west"] != 1 {
		t.Errorf("GET applications counts.cluster = %v, want us-east 2, eu-west 1", list.Counts.Cluster)
	}

	// The same name in both clusters: the API asks which.
	if w := ts.get(t, "/v1/deploy/web/tree", nil); w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "eu-west/shop, us-east/shop") {
		t.Errorf("GET tree of web = %d %s, want 409 listing both clusters", w.Code, w.Body)
	}
	if w := ts.get(t, "/v1/deploy/web/tree?cluster=eu-west", nil); w.Code != http.StatusOK {
		t.Errorf("GET tree of web in eu-west = %d %s, want 200", w.Code, w.Body)
	}

	// eu-west's app page, tree and logs come from eu-west.
	doc := parseHTML(t, ts.get(t, "/clusters/eu-west/apps/shop/web", nil).Body.String())
	if got := text(oneByTestID(t, doc, "app-cluster")); got != "eu-west" {
		t.Errorf("eu-west's app page names cluster %q, want eu-west", got)
	}
	if w := ts.get(t, "/clusters/eu-west/apps/shop/cart", nil); w.Code != http.StatusNotFound {
		t.Errorf("GET us-east's cart under eu-west = %d, want 404", w.Code)
	}
	if w := ts.get(t, "/v1/deploy/web/logs?cluster=eu-west&tail=5", nil); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"pod":"web-`) {
		t.Errorf("GET web's logs in eu-west = %d %s, want 200 from one of its pods", w.Code, w.Body)
	}

	// A rollback in eu-west leaves us-east's web untouched.
	usBefore := us.app(t, "web").GetResourceVersion()
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	w = ts.do(t, request{method: "POST", target: "/v1/deploy/web/rollback?cluster=eu-west&namespace=shop", admin: true, header: form, body: "version=1.0.0"})
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"cluster":"eu-west"`) {
		t.Fatalf("POST rollback in eu-west = %d %s, want 200 naming eu-west", w.Code, w.Body)
	}
	if img, _, _ := unstructured.NestedString(eu.app(t, "web").Object, "spec", "image"); img != "ghcr.io/acme/web:1.0.0" {
		t.Errorf("eu-west web image = %q, want 1.0.0", img)
	}
	if after := us.app(t, "web"); after.GetResourceVersion() != usBefore {
		t.Errorf("us-east web changed: resourceVersion %s -> %s", usBefore, after.GetResourceVersion())
	}
	if evs := eu.rollbackEvents(t); len(evs) != 1 || !strings.Contains(evs[0], "in cluster eu-west") {
		t.Errorf("eu-west rollback Events = %q, want one naming the cluster", evs)
	}
	if evs := us.rollbackEvents(t); len(evs) != 0 {
		t.Errorf("us-east rollback Events = %q, want none", evs)
	}
	eu.waitSynced(t, "web", "1.0.0")

	// The second cluster stops answering: only its rows go stale.
	if err := eu.p.Cluster.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	pollPage(t, ts, "eu-west's rows stale, us-east's live", func(_ string, stale map[string]bool, banners []string) bool {
		return stale["eu-west/web"] && !stale["us-east/web"] && !stale["us-east/cart"] && len(banners) == 1 && banners[0] == "eu-west"
	})
	if w := ts.get(t, "/clusters/us-east/apps/shop/web", nil); w.Code != http.StatusOK {
		t.Errorf("us-east's app page while eu-west is down: status %d", w.Code)
	}
	// /readyz stays ready and names no cluster (it is public); the log
	// says eu-west is unreachable.
	if w := ts.do(t, request{target: "/readyz"}); w.Code != http.StatusOK || strings.TrimSpace(w.Body.String()) != `{"status":"ready"}` {
		t.Errorf("GET /readyz while eu-west is down = %d %s, want 200 and the status only", w.Code, w.Body)
	}
	if logs := ts.log.String(); !strings.Contains(logs, "msg=readiness") || !strings.Contains(logs, "unreachable=[eu-west]") {
		t.Errorf("log while eu-west is down = %q, want a readiness line naming eu-west unreachable", logs)
	}

	// Back: the stale marks go.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := eu.p.Cluster.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	pollPage(t, ts, "eu-west's rows live again", func(_ string, stale map[string]bool, banners []string) bool {
		return !stale["eu-west/web"] && len(banners) == 0
	})
	if w := ts.do(t, request{target: "/readyz"}); w.Code != http.StatusOK || strings.TrimSpace(w.Body.String()) != `{"status":"ready"}` {
		t.Errorf("GET /readyz after eu-west is back = %d %s, want ready", w.Code, w.Body)
	}
	if logs := ts.log.String(); !strings.Contains(logs, "msg=readiness status=ready not_synced=[] unreachable=[]") {
		t.Errorf("log after eu-west is back = %q, want a readiness line naming no cluster", logs)
	}
}
