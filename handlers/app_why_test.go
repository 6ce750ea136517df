package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/why"
)

// whyView serves App web of apps: Degraded because of its Deployment,
// whose latest event and drifted field carry msg.
type whyView struct {
	*fakeView
	msg string
}

func (v whyView) LookupApp(ns, name string) (*unstructured.Unstructured, error) {
	if name != "web" || ns != "" && ns != "apps" {
		return nil, kubeview.ErrAppNotFound
	}
	u := &unstructured.Unstructured{}
	u.SetNamespace("apps")
	u.SetName("web")
	return u, nil
}

func (v whyView) Row(ns, name string) (kubeview.AppRow, bool) {
	return kubeview.AppRow{Name: "web", Namespace: "apps", Version: "1.2.0", Running: []kubeview.VersionCount{{Version: "1.2.0", Ready: 1}},
		Health: objrules.Health{Status: objrules.HealthDegraded, Message: v.msg}, Sync: kubeview.Sync{Status: kubeview.SyncSynced}, Drift: 1}, true
}

func (v whyView) Tree(ns, name string) (kubeview.Tree, error) {
	if _, err := v.LookupApp(ns, name); err != nil {
		return kubeview.Tree{}, err
	}
	return kubeview.Tree{Nodes: []kubeview.TreeNode{
		{Ref: "hanzo.ai:App:apps:web", Kind: "App", Namespace: "apps", Name: "web", UID: "u-app", Health: &objrules.Health{Status: objrules.HealthHealthy}},
		{Ref: "apps:Deployment:apps:web", Kind: "Deployment", Namespace: "apps", Name: "web", UID: "u-dep", Depth: 1, Drift: 1,
			Health: &objrules.Health{Status: objrules.HealthDegraded, Message: v.msg}},
	}}, nil
}

func (v whyView) Events(ctx context.Context, ns, uid string) (kubeview.EventList, error) {
	if uid != "u-dep" {
		return kubeview.EventList{}, nil
	}
	return kubeview.EventList{Items: []kubeview.Event{{Type: "Warning", Reason: "BackOff", Message: "event " + v.msg}}}, nil
}

func (v whyView) History(ns, name string) ([]kubeview.Release, error) { return nil, nil }

func (v whyView) DriftOf(uid string) []objrules.DriftField {
	if uid != "u-dep" {
		return nil
	}
	return []objrules.DriftField{{Path: "spec.replicas", Manager: "kubectl-" + v.msg}}
}

func newWhyServer(t *testing.T, msg string) *testServer {
	t.Helper()
	return newTestServer(t, nil, func(o *Options) {
		o.Clusters = []Cluster{{Name: "in-cluster", View: whyView{fakeView: newFakeView(nil), msg: msg}}}
	})
}

// TestAPIWhy: GET /v1/deploy/{name}/why answers the reasons of package
// why for the App the route resolves: the Degraded Deployment with its
// latest event, then its drifted field and who changed it, each with its
// resource panel's link; an unknown App is a 404.
func TestAPIWhy(t *testing.T) {
	ts := newWhyServer(t, "crash")
	w := ts.get(t, "/v1/deploy/web/why?namespace=apps", nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET why = %d %s", w.Code, w.Body)
	}
	var got why.Answer
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	link := "/clusters/in-cluster/apps/apps/web/resource/apps:Deployment:apps:web"
	want := why.Answer{App: "apps/web", Desired: "1.2.0", Live: "1.2.0", Reasons: []why.Reason{
		{Kind: why.Health, Message: "Deployment web is Degraded: crash; latest event: Warning BackOff: event crash", Link: link},
		{Kind: why.Drift, Message: "Deployment web has 1 field(s) changed outside its operator: spec.replicas (by kubectl-crash)", By: "kubectl-crash", Link: link},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET why (-want +got):\n%s", diff)
	}
	if w := ts.get(t, "/v1/deploy/nope/why", nil); w.Code != http.StatusNotFound {
		t.Errorf("GET why of an unknown App = %d, want 404", w.Code)
	}
}

// TestWhyPanelEscapes: the app page shows "Why isn't web live?" above the
// tree, and its refresh (HTMX) the panel alone; text from the cluster in
// the reasons comes back escaped.
func TestWhyPanelEscapes(t *testing.T) {
	for _, p := range injectionPayloads {
		ts := newWhyServer(t, p)
		for _, tc := range []struct {
			what, target string
			header       map[string]string
		}{
			{"app page", "/clusters/in-cluster/apps/apps/web", nil},
			{"panel refresh", "/clusters/in-cluster/apps/apps/web/why", htmxHeader},
			{"panel page", "/clusters/in-cluster/apps/apps/web/why", nil},
		} {
			w := ts.get(t, tc.target, tc.header)
			if w.Code != http.StatusOK {
				t.Fatalf("%s = %d", tc.what, w.Code)
			}
			body := w.Body.String()
			var doc *html.Node
			if tc.header != nil {
				if strings.Contains(body, "<html") {
					t.Errorf("%s: a whole page, want the panel alone", tc.what)
				}
				doc = parseHTML(t, "<!doctype html><html><body>"+body+"</body></html>")
				assertInert(t, tc.what, body, p)
			} else {
				doc = assertInert(t, tc.what, body, p)
			}
			panel := oneByTestID(t, doc, "why-panel")
			if got := text(findAll(panel, func(n *html.Node) bool { return n.Data == "h2" })[0]); got != "Why isn't web live?" {
				t.Errorf("%s: heading = %q", tc.what, got)
			}
			if got := findAll(panel, func(n *html.Node) bool { return attr(n, "data-testid") == "why-reason" }); len(got) != 2 {
				t.Errorf("%s: %d reasons, want 2", tc.what, len(got))
			}
		}
	}
}

// TestFleetWhyFilter: ?why=true lists the Apps that have a reason from
// their rows (web Progressing and out of sync, cron Missing), not api
// (Healthy, Synced); the chip is on and the filter stays in the URL; a
// value other than true or false is a 400.
func TestFleetWhyFilter(t *testing.T) {
	ts := newTestServer(t, newFakeView(testRows()))
	w := ts.get(t, "/v1/deploy/applications?why=true", nil)
	var got applicationsResponse
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusOK {
		t.Fatalf("GET applications?why=true = %d %s", w.Code, w.Body)
	}
	var names []string
	for _, r := range got.Items {
		names = append(names, r.Name)
	}
	if diff := cmp.Diff([]string{"web", "cron"}, names); diff != "" || got.Total != 2 {
		t.Errorf("Apps not live (-want +got):\n%s (total %d)", diff, got.Total)
	}
	page := ts.get(t, "/?why=true", nil)
	doc := parseHTML(t, page.Body.String())
	if rows := rowViews(doc); len(rows) != 2 {
		t.Errorf("GET /?why=true: %d rows, want 2", len(rows))
	}
	chip := oneByTestID(t, doc, "filter-why")
	if !strings.Contains(attr(chip, "class"), "chip-on") || attr(chip, "href") != "/" {
		t.Errorf("the Not live chip = class %q href %q, want on, turning the filter off", attr(chip, "class"), attr(chip, "href"))
	}
	if w := ts.get(t, "/?why=maybe", nil); w.Code != http.StatusBadRequest {
		t.Errorf("GET /?why=maybe = %d, want 400", w.Code)
	}
}
