package handlers

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/web/paths"
)

// TestEnvCompareToBranchOnRealCluster: the "Compare to" page and the JSON
// route render a branch of the environment's repository and diff it
// against live on a real control plane, without writing to the cluster or
// changing the environment's target. A ConfigMap of another namespace that
// the branch names is not read (its live data never reaches the page).
func TestEnvCompareToBranchOnRealCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: needs the local control plane")
	}
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{"staging", "other"}})
	ctx := context.Background()
	for _, cm := range []struct{ ns, name, v string }{{"staging", "settings", "live-value"}, {"other", "private", "other-namespace-data"}} {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": cm.name, "namespace": cm.ns}, "data": map[string]any{"k": cm.v}}}
		// Written by deploy-web's field manager, as an apply would: the
		// live side shows values of objects deploy-web manages only.
		if _, err := p.Dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(cm.ns).Create(ctx, u, metav1.CreateOptions{FieldManager: deployplan.FieldManager}); err != nil {
			t.Fatal(err)
		}
	}

	dir := t.TempDir()
	repoDir := filepath.Join(dir, "repo")
	repo, err := git.PlainInit(repoDir, false)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	commit := func(files map[string]string) {
		t.Helper()
		for name, content := range files {
			full := filepath.Join(repoDir, name)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := wt.Add(name); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := wt.Commit("c", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}}); err != nil {
			t.Fatal(err)
		}
	}
	commit(map[string]string{
		"k/kustomization.yaml": "resources: [cm.yaml]\n",
		"k/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: staging}\ndata: {k: live-value}\n",
		"catalog.json":         `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`,
	})
	if err := wt.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("feature"), Create: true}); err != nil {
		t.Fatal(err)
	}
	commit(map[string]string{
		"k/kustomization.yaml": "resources: [cm.yaml, other.yaml]\n",
		"k/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: staging}\ndata: {k: branch-value}\n",
		"k/other.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: private, namespace: other}\ndata: {k: from-the-branch}\n",
	})
	if err := wt.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName("master")}); err != nil {
		t.Fatal(err)
	}

	cfg, err := envconfig.ParseConfig([]byte(`environments:
  - name: dev
    cluster: {context: test}
    namespace: staging
    source: {repo: "file://`+repoDir+`", ref: master, path: k}
    catalog: catalog.json
`), dir)
	if err != nil {
		t.Fatal(err)
	}
	runner := envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{Store: planstore.New(fake.NewClientset().CoreV1(), "deploy-web", 10)})
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Environments = runner
		o.EnvClusterConfig = func(*envconfig.Environment) (*rest.Config, error) { return rest.CopyConfig(p.Cluster.Config), nil }
	})
	versions := func() map[string]string {
		out := map[string]string{}
		for _, n := range []string{"staging", "other"} {
			l, err := p.Kube.CoreV1().ConfigMaps(n).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, cm := range l.Items {
				out[n+"/"+cm.Name] = cm.ResourceVersion
			}
		}
		return out
	}
	before := versions()

	q := url.Values{"from": {"live"}, "ref": {"feature"}}
	page := ts.get(t, paths.EnvDiff("dev", q), nil)
	body := page.Body.String()
	if page.Code != 200 {
		t.Fatalf("Compare to feature = %d:\n%s", page.Code, body)
	}
	for _, want := range []string{"1 added, 1 changed, 0 removed", "ConfigMap staging/settings", "branch-value", "live-value", "ConfigMap other/private", "outside the environment"} {
		if !strings.Contains(body, want) {
			t.Errorf("Compare to feature page lacks %q", want)
		}
	}
	if strings.Contains(body, "other-namespace-data") {
		t.Error("Compare to feature shows the live data of another namespace's ConfigMap the branch names")
	}
	w := ts.get(t, paths.APIEnvDiff("dev", url.Values{"from": {"live"}, "to": {"ref:feature"}}), nil)
	var rep struct {
		Changes bool
		Counts  map[string]int
		Outside []string
	}
	if err := json.Unmarshal(w.Body.Bytes(), &rep); err != nil || w.Code != 200 {
		t.Fatalf("JSON compare to feature = %d %s (%v)", w.Code, w.Body, err)
	}
	if !rep.Changes || rep.Counts["changed"] != 1 || rep.Counts["added"] != 1 || len(rep.Outside) != 1 {
		t.Errorf("JSON compare to feature = %+v, want 1 changed, 1 added, 1 outside", rep)
	}
	if w := ts.get(t, paths.APIEnvDiff("dev", url.Values{"from": {"live"}, "to": {"ref:master"}}), nil); !strings.Contains(w.Body.String(), `"changes":false`) {
		t.Errorf("JSON compare to master (live) = %s, want no changes", w.Body)
	}

	if after := versions(); !maps.Equal(before, after) {
		t.Errorf("comparing wrote to the cluster: before %v, after %v", before, after)
	}
	env, _ := runner.Config().Env("dev")
	if env.Source.Ref != "master" {
		t.Errorf("the environment's ref = %q after comparing, want master", env.Source.Ref)
	}
}
