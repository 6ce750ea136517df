package envrun

import (
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/planstore"
)

// TestConsolePlanContactsListedRegistriesOnly: a plan started from the
// console goes through the same registry rule as the CLI's: of two real
// registries on loopback, only the one in registry.hosts is asked; the
// other gets no request and the plan carries registry-not-listed naming
// its service.
func TestConsolePlanContactsListedRegistriesOnly(t *testing.T) {
	type reg struct {
		host string
		n    atomic.Int64
	}
	newReg := func() *reg {
		r := &reg{}
		h := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			r.n.Add(1)
			h.ServeHTTP(w, req)
		}))
		t.Cleanup(srv.Close)
		r.host = strings.TrimPrefix(srv.URL, "http://")
		return r
	}
	push := func(ref string) string {
		img, err := random.Image(128, 1)
		if err != nil {
			t.Fatal(err)
		}
		r, err := name.ParseReference(ref)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(r, img); err != nil {
			t.Fatal(err)
		}
		d, _ := img.Digest()
		return d.String()
	}
	const commit = "0123456789abcdef0123456789abcdef01234567"
	listed, unlisted := newReg(), newReg()
	apiDigest := push(listed.host + "/acme/api:" + commit)
	workerDigest := push(unlisted.host + "/acme/worker:" + commit)
	listed.n.Store(0)
	unlisted.n.Store(0)

	deploy := func(name, image string) string {
		return fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s}\nspec:\n  selector: {matchLabels: {app: %s}}\n  template:\n    metadata: {labels: {app: %s}}\n    spec:\n      containers:\n        - {name: main, image: %q}\n", name, name, name, image)
	}
	dir := t.TempDir()
	for p, content := range map[string]string{
		"m/kustomization.yaml": "resources: [api.yaml, worker.yaml]\n",
		"m/api.yaml":           deploy("api", listed.host+"/acme/api:"+commit),
		"m/worker.yaml":        deploy("worker", unlisted.host+"/acme/worker:"+commit),
		"catalog.json": fmt.Sprintf(`{"commit": %q, "services": [
  {"id": "api", "image": "%s/acme/api:%s", "digest": %q, "published": true},
  {"id": "worker", "image": "%s/acme/worker:%s", "digest": %q, "published": true}]}`, commit, listed.host, commit, apiDigest, unlisted.host, commit, workerDigest),
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf("environments:\n  - {name: dev, cluster: {context: test}, namespace: dev, source: {path: m}, catalog: catalog.json, registry: {hosts: [%q]}}\n", listed.host)), dir)
	if err != nil {
		t.Fatal(err)
	}
	cs := fake.NewClientset()
	r := New(cfg, slog.New(slog.DiscardHandler), Options{
		RestConfig: &rest.Config{Host: "https://127.0.0.1:1", Timeout: 3 * time.Second}, ReportsDir: t.TempDir(),
		Store: planstore.New(cs.CoreV1(), "deploy-web", 5), Events: cs.CoreV1(),
	})
	run, err := r.Start("dev", ActionPlan, "alice", "", "")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !run.Snapshot().Done {
		if time.Now().After(deadline) {
			t.Fatal("the console plan did not end")
		}
		time.Sleep(20 * time.Millisecond)
	}
	snap := run.Snapshot()
	if snap.Report == nil {
		t.Fatalf("the console plan has no report: err %v, refusal %q", snap.Err, snap.Refusal)
	}
	if n := unlisted.n.Load(); n != 0 {
		t.Errorf("the unlisted registry %s got %d requests from a console plan, want 0", unlisted.host, n)
	}
	if listed.n.Load() == 0 {
		t.Errorf("the listed registry %s got no request: the console plan checked no digest", listed.host)
	}
	d := snap.Report.DeployApply
	i := slices.IndexFunc(d.RemainingBlockers, func(b deployplan.Blocker) bool { return b.ID == "registry-not-listed" })
	if i < 0 || !slices.Equal(d.RemainingBlockers[i].Affected, []string{"worker"}) {
		t.Errorf("blockers %+v: want registry-not-listed affecting worker", d.RemainingBlockers)
	}
}
