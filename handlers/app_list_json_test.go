package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/internal/fleetfixture"
	"github.com/hanzoai/deploy-web/kubeview"
)

// hostileStrings are what a cluster may hold in a name, an image or a
// message: HTML, the JavaScript line separators, invalid UTF-8, quotes,
// control characters, and a string far longer than the list's write
// buffer.
func hostileStrings() []string {
	return []string{
		`<script>alert("x")</script>&amp;`,
		"line\u2028sep\u2029arator",
		"bad\xff\xfeutf8\xc3",
		`quote" back\slash` + "\x00\x1f\t",
		"emoji \U0001F680 <&>",
		strings.Repeat("<&>\u2028x", 20000),
	}
}

// hostileCache is a real kubeview cache (client-go fakes) of a small
// fixture fleet whose images, messages and some names are hostile.
func hostileCache(t *testing.T) *kubeview.Cache {
	t.Helper()
	hostile := hostileStrings()
	typed, apps := fleetfixture.Objects(12)
	for i, o := range apps {
		u := o.(*unstructured.Unstructured)
		h := hostile[i%len(hostile)]
		if i%3 == 0 {
			// The App declares another image than its Deployment runs:
			// OutOfSync, with both images in the message.
			if err := unstructured.SetNestedField(u.Object, "ghcr.io/acme/"+h+":9.9.9", "spec", "image"); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, o := range typed {
		if d, ok := o.(*appsv1.Deployment); ok && i%2 == 0 {
			d.Spec.Template.Spec.Containers[0].Image += hostile[i%len(hostile)]
			d.Status.ReadyReplicas, d.Status.AvailableReplicas = 1, 1
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
				Reason: "ProgressDeadlineExceeded", Message: hostile[i%len(hostile)]}}
		}
	}
	// Apps alone (no Deployment) with hostile names, images and Ready
	// messages.
	for i, h := range hostile {
		ns := fleetfixture.Namespaces()[i%2]
		apps = append(apps, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hanzo.ai/v1", "kind": "App",
			"metadata": map[string]any{"name": "h" + h, "namespace": ns, "uid": "hostile-" + string(rune('a'+i)), "generation": int64(2)},
			"spec":     map[string]any{"image": "registry.test/" + h + ":" + h},
			"status": map[string]any{"observedGeneration": int64(1), "conditions": []any{
				map[string]any{"type": "Ready", "status": "False", "reason": "Failed", "message": h}}},
		}})
	}
	cs := fake.NewClientset(typed...)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{appcr.Resource: "AppList"}, apps...)
	c, err := kubeview.New(cs, dyn, slog.New(slog.DiscardHandler), kubeview.Options{Namespaces: fleetfixture.Namespaces(), ProbeInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c.Start(ctx)
	wait, done := context.WithTimeout(ctx, time.Minute)
	defer done()
	if err := c.WaitForSync(wait); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestJSONListIsMarshalOfTheAnswer checks that the streamed JSON list, made
// of the rows' cached JSON, is byte for byte json.Marshal of the answer
// (what writeJSON wrote before), over hostile rows, for one cluster and
// two, every page of a paged list and filtered lists.
func TestJSONListIsMarshalOfTheAnswer(t *testing.T) {
	c := hostileCache(t)
	servers := []struct {
		name string
		ts   *testServer
	}{
		{"one cluster", newTestServer(t, newFakeView(nil), func(o *Options) { o.Clusters = []Cluster{{Name: "in-cluster", View: c}} })},
		// The same cache under two names: every App in both clusters.
		{"two clusters", newTestServer(t, newFakeView(nil), func(o *Options) {
			o.Clusters = []Cluster{{Name: "us-east", View: c}, {Name: "eu-west", View: c}}
		})},
	}
	queries := []struct {
		query url.Values
		empty bool // the query matches nothing in this fleet
	}{
		{query: url.Values{}},
		{query: url.Values{"namespace": {"infra"}}},
		{query: url.Values{"health": {"Degraded"}}},
		{query: url.Values{"health": {"Healthy"}}},
		{query: url.Values{"sync": {"OutOfSync"}}},
		{query: url.Values{"sync": {"Unknown"}, "namespace": {"apps"}}},
		{query: url.Values{"drift": {"true"}}, empty: true},
		{query: url.Values{"q": {"svc-0000"}}},
		{query: url.Values{"q": {"<&>"}}},
		{query: url.Values{"sort": {"health"}, "limit": {"4"}}},
		{query: url.Values{"sort": {"deployed"}}},
	}
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			clusters := []string{""}
			for _, cl := range srv.ts.srv.clusters {
				clusters = append(clusters, cl.Name)
			}
			for _, cluster := range clusters {
				for _, tt := range queries {
					q := url.Values{}
					for k, v := range tt.query {
						q[k] = v
					}
					if cluster != "" {
						q.Set("cluster", cluster)
					}
					items := checkListPages(t, srv.ts, q)
					if got := items > 0; got == tt.empty {
						t.Errorf("GET ?%s: %d items, want empty %v", q.Encode(), items, tt.empty)
					}
				}
			}
			// Every page of a paged walk, with continue tokens.
			q := url.Values{"limit": {"3"}}
			total := 0
			for range 100 {
				items, next := checkListPage(t, srv.ts, q)
				total += items
				if next == "" {
					break
				}
				q.Set("continue", next)
			}
			if want := 18 * len(srv.ts.srv.clusters); total != want {
				t.Errorf("paged walk: %d items, want %d", total, want)
			}
		})
	}
}

// checkListPages checks the whole list of q and, with a limit, its first
// page; it returns how many items the whole list has.
func checkListPages(t *testing.T, ts *testServer, q url.Values) int {
	t.Helper()
	items, _ := checkListPage(t, ts, q)
	if q.Get("limit") == "" {
		paged := url.Values{"limit": {"2"}}
		for k, v := range q {
			paged[k] = v
		}
		checkListPage(t, ts, paged)
	}
	return items
}

// checkListPage gets GET /v1/deploy/applications?q and compares it with
// writeJSON of the answer the server's list gives for the same query; it
// returns the number of items and the continue token.
func checkListPage(t *testing.T, ts *testServer, q url.Values) (items int, next string) {
	t.Helper()
	target := "/v1/deploy/applications?" + q.Encode()
	got := ts.get(t, target, nil)
	lr, err := parseListRequest(q, ts.srv.clusterNamespaces())
	if err != nil {
		t.Fatalf("parseListRequest(%s): %v", q.Encode(), err)
	}
	kq := lr.kubeQuery()
	kq.Limit, kq.After = lr.limit, lr.after
	res, err := ts.srv.applications(lr.query.Cluster, kq)
	if err != nil {
		t.Fatalf("applications(%s): %v", q.Encode(), err)
	}
	// The streamed path is the one under test: every row has its JSON.
	if len(res.Encoded) != len(res.Rows) {
		t.Fatalf("GET %s: %d rows, %d encoded, want every row encoded", target, len(res.Rows), len(res.Encoded))
	}
	for i, e := range res.Encoded {
		if e == nil {
			t.Fatalf("GET %s: row %d has no cached JSON", target, i)
		}
	}
	want := httptest.NewRecorder()
	writeJSON(want, http.StatusOK, applicationsResponse{Items: res.Rows, Total: res.Matched, Continue: res.Continue, Counts: res.Counts})
	if got.Code != want.Code {
		t.Errorf("GET %s: status = %d, want %d", target, got.Code, want.Code)
	}
	for _, h := range []string{"Content-Type", "Cache-Control"} {
		if g, w := got.Header().Get(h), want.Header().Get(h); g != w {
			t.Errorf("GET %s: %s = %q, want %q", target, h, g, w)
		}
	}
	if !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
		g, w := got.Body.Bytes(), want.Body.Bytes()
		at := 0
		for at < min(len(g), len(w)) && g[at] == w[at] {
			at++
		}
		t.Fatalf("GET %s: body differs from json.Marshal of the answer at byte %d of %d (want %d):\ngot  ...%q\nwant ...%q",
			target, at, len(g), len(w), g[max(at-40, 0):min(at+40, len(g))], w[max(at-40, 0):min(at+40, len(w))])
	}
	var doc struct {
		Items    []json.RawMessage `json:"items"`
		Continue string            `json:"continue"`
	}
	if err := json.Unmarshal(got.Body.Bytes(), &doc); err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	return len(doc.Items), doc.Continue
}
