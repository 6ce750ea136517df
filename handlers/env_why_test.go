package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/net/html"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/why"
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

// TestWhyWaitingOnAnotherApp: App b of dev, whose object in git depends
// on App a (deploy-web.hanzo.ai/depends-on), is Progressing: its "why"
// names App a waiting (beside b's health), with a's health and a link to it, while a
// is Degraded; once a is Healthy, b waits on nothing.
func TestWhyWaitingOnAnotherApp(t *testing.T) {
	dir := t.TempDir()
	app := func(name, ann string) string {
		return fmt.Sprintf("apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: %s\n%sspec:\n  image: reg.example/acme/%[1]s:1.0.0\n", name, ann)
	}
	for name, content := range map[string]string{
		"m/kustomization.yaml": "resources: [a.yaml, b.yaml]\nnamespace: staging\n",
		"m/a.yaml":             app("a", ""),
		"m/b.yaml":             app("b", "  annotations: {deploy-web.hanzo.ai/depends-on: \"App/a\"}\n"),
		"catalog.json":         `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := envconfig.ParseConfig([]byte("environments:\n  - {name: dev, cluster: {context: test}, namespace: staging, source: {path: m}, catalog: catalog.json}\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	index := envsource.New(cfg, log, time.Hour)
	if err := index.Refresh(context.Background(), "dev"); err != nil {
		t.Fatal(err)
	}
	runner := envrun.New(cfg, log, envrun.Options{Store: planstore.New(fake.NewClientset().CoreV1(), "deploy-web", 10)})
	for _, tc := range []struct {
		name   string
		health objrules.HealthStatus
		want   string // the waiting reason; "" for none
	}{
		{"a Degraded", objrules.HealthDegraded, "b waits for App/a, which is Degraded: Deployment a exceeded its progress deadline; an apply writes b only once App/a is healthy"},
		{"a Healthy", objrules.HealthHealthy, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := []kubeview.AppRow{envWhyRow("a", tc.health), envWhyRow("b", objrules.HealthProgressing)}
			fv := newFakeView(rows)
			fv.namespaces = []string{"staging"}
			view := envWhyView{fakeView: fv, rows: map[string]kubeview.AppRow{"a": rows[0], "b": rows[1]}}
			ts := newTestServer(t, nil, func(o *Options) {
				o.Environments, o.Desired = runner, index
				o.Clusters = []Cluster{{Name: "in-cluster", View: view}}
				o.EnvClusters = map[string]string{"dev": "in-cluster"}
			})
			w := ts.get(t, "/v1/deploy/b/why?namespace=staging", nil)
			if w.Code != http.StatusOK {
				t.Fatalf("GET why = %d %s", w.Code, w.Body)
			}
			var ans why.Answer
			if err := json.Unmarshal(w.Body.Bytes(), &ans); err != nil {
				t.Fatal(err)
			}
			var waiting []why.Reason
			for _, r := range ans.Reasons {
				if r.Kind == why.Waiting {
					waiting = append(waiting, r)
				}
			}
			if tc.want == "" {
				if len(waiting) != 0 {
					t.Fatalf("waiting reasons = %+v, want none", waiting)
				}
				return
			}
			if len(waiting) != 1 || waiting[0].Message != tc.want || waiting[0].Link != paths.App("in-cluster", "staging", "a") {
				t.Fatalf("reasons = %+v, want one waiting %q linking App a", ans.Reasons, tc.want)
			}
		})
	}
}
