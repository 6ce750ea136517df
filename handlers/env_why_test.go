package handlers

import (
	"log/slog"
	"net/http"
	"testing"

	"golang.org/x/net/html"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/planstore"
)

// envWhyView serves the Apps of dev's namespace (staging) from rows: each
// App's tree is its App CR and its Deployment, whose health is the row's.
type envWhyView struct {
	*fakeView
	rows map[string]kubeview.AppRow
}

func (v envWhyView) Row(ns, name string) (kubeview.AppRow, bool) {
	r, ok := v.rows[name]
	return r, ok && ns == "staging"
}

func (v envWhyView) LookupApp(ns, name string) (*unstructured.Unstructured, error) {
	if _, ok := v.Row(ns, name); !ok {
		return nil, kubeview.ErrAppNotFound
	}
	u := &unstructured.Unstructured{}
	u.SetNamespace(ns)
	u.SetName(name)
	return u, nil
}

func (v envWhyView) Tree(ns, name string) (kubeview.Tree, error) {
	r, ok := v.Row(ns, name)
	if !ok {
		return kubeview.Tree{}, kubeview.ErrAppNotFound
	}
	h := r.Health
	return kubeview.Tree{Nodes: []kubeview.TreeNode{
		{Ref: "hanzo.ai:App:staging:" + name, Kind: "App", Namespace: ns, Name: name, UID: "u-app-" + name, Health: &objrules.Health{Status: objrules.HealthHealthy}},
		{Ref: "apps:Deployment:staging:" + name, Kind: "Deployment", Namespace: ns, Name: name, UID: "u-dep-" + name, Depth: 1, Health: &h},
	}}, nil
}

func (v envWhyView) DriftOf(uid string) []objrules.DriftField { return nil }

// envWhyRow is App name of staging, live at 1.0.0 with the given health.
func envWhyRow(name string, st objrules.HealthStatus) kubeview.AppRow {
	return kubeview.AppRow{Name: name, Namespace: "staging", Version: "1.0.0", Running: []kubeview.VersionCount{{Version: "1.0.0", Ready: 1}},
		Health: objrules.Health{Status: st, Message: "Deployment " + name + " exceeded its progress deadline"}, Sync: kubeview.Sync{Status: kubeview.SyncSynced}}
}

// TestEnvWhyPanel: the environment page's "Not live" panel, and its
// refresh (HTMX), list the Apps of the environment that have a reason,
// each with its reasons (a Degraded App's health), and none of the live
// and healthy ones; when every App is live and healthy, the panel is
// collapsed to one line saying so, without a list.
func TestEnvWhyPanel(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rows     []kubeview.AppRow
		wantApps []string // the Apps listed, in order; nil: the collapsed line
	}{
		{"one Degraded App of two", []kubeview.AppRow{envWhyRow("web", objrules.HealthHealthy), envWhyRow("api", objrules.HealthDegraded)}, []string{"api"}},
		{"every App live and healthy", []kubeview.AppRow{envWhyRow("web", objrules.HealthHealthy), envWhyRow("api", objrules.HealthHealthy)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := envconfig.ParseConfig([]byte(testEnvConfig), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			runner := envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{Store: planstore.New(fake.NewClientset().CoreV1(), "deploy-web", 10)})
			rows := map[string]kubeview.AppRow{}
			for _, r := range tc.rows {
				rows[r.Name] = r
			}
			view := envWhyView{fakeView: newFakeView(tc.rows), rows: rows}
			ts := newTestServer(t, nil, func(o *Options) {
				o.Environments = runner
				o.Clusters = []Cluster{{Name: "in-cluster", View: view}}
				o.EnvClusters = map[string]string{"dev": "in-cluster"}
			})
			for _, req := range []struct {
				what, target string
				header       map[string]string
			}{
				{"environment page", "/environments/dev", nil},
				{"panel refresh", "/environments/dev/why", htmxHeader},
			} {
				w := ts.get(t, req.target, req.header)
				if w.Code != http.StatusOK {
					t.Fatalf("%s = %d %s", req.what, w.Code, w.Body)
				}
				doc := parseHTML(t, w.Body.String())
				panel := oneByTestID(t, doc, "env-why-panel")
				var listed []string
				for _, a := range byTestID(panel, "env-why-app") {
					listed = append(listed, attr(a, "data-app"))
					reasons := findAll(a, func(n *html.Node) bool { return attr(n, "data-testid") == "why-reason" })
					if len(reasons) == 0 || attr(reasons[0], "data-kind") != "health" {
						t.Errorf("%s: App %s is listed without its health reason", req.what, attr(a, "data-app"))
					}
				}
				empty := byTestID(panel, "env-why-empty")
				if tc.wantApps == nil {
					if len(listed) != 0 || len(empty) != 1 {
						t.Errorf("%s: Apps listed %v, collapsed line %d; want none and the line", req.what, listed, len(empty))
					} else if got, want := text(empty[0]), "Every App of dev (2) is live and healthy."; got != want {
						t.Errorf("%s: collapsed line = %q, want %q", req.what, got, want)
					}
					continue
				}
				if len(empty) != 0 || len(listed) != len(tc.wantApps) || listed[0] != tc.wantApps[0] {
					t.Errorf("%s: Apps listed %v (collapsed line %d), want %v and no line", req.what, listed, len(empty), tc.wantApps)
				}
			}
		})
	}
}
