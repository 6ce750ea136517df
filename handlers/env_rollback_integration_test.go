package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/planstore"
)

// TestEnvRollbackOnRealCluster: plain manifests (a ConfigMap, no App)
// through a real git server and the real control plane: apply commit A,
// apply commit B (records), roll back to A's record through the API: a new
// commit whose folder tree is A's, applied, the live ConfigMap back to A.
func TestEnvRollbackOnRealCluster(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{realNS, "deploy-web"}})
	cm := func(v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: page\ndata:\n  v: \"" + v + "\"\n"
	}
	srv := gitservertest.New(t, map[string]string{
		"overlays/dev/kustomization.yaml": "resources: [cm.yaml]\n",
		"overlays/dev/cm.yaml":            cm("A"),
		"catalog.json":                    `{"mode": "version", "services": []}` + "\n",
	}, gitservertest.Options{})
	a := srv.Head("main")
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(`environments:
  - name: dev
    cluster: {context: test}
    namespace: %s
    source: {repo: %q, ref: main, path: overlays/dev}
    catalog: catalog.json
    registry: {skip: true}
    writeBack: {mode: push}
`, realNS, srv.URL)), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rt := newRealTrail(t, p)
	trail := rt.store
	runner := envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{RestConfig: p.Cluster.Config, Events: p.Kube.CoreV1(), ReportsDir: t.TempDir(),
		Store: planstore.New(p.Kube.CoreV1(), "deploy-web", 50), ApplyTimeout: 2 * time.Minute, Record: rt.record(t)})
	ts := newTestServer(t, newFakeView(nil), func(o *Options) { o.Environments, o.RecordReader = runner, trail })

	waitRun := func(id string) {
		t.Helper()
		run, ok := runner.Get(id)
		if !ok {
			t.Fatalf("run %s unknown", id)
		}
		deadline := time.Now().Add(4 * time.Minute)
		for !run.Snapshot().Done {
			if time.Now().After(deadline) {
				t.Fatalf("run %s did not end: %q", id, run.Snapshot().Steps)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if s := run.Snapshot(); s.Report == nil || s.Report.Status() != deployplan.StatusApplied {
			t.Fatalf("run %s: %v, err %v, refusal %q, steps %q; want applied", id, s.Report, s.Err, s.Refusal, s.Steps)
		}
	}
	deploy := func() string {
		t.Helper()
		run, err := runner.Deploy("dev", envrun.DeployRequest{User: "test", Trigger: envrun.TriggerSync})
		if err != nil {
			t.Fatal(err)
		}
		waitRun(run.ID)
		return rt.lastID()
	}
	live := func() string {
		t.Helper()
		c, err := p.Kube.CoreV1().ConfigMaps(realNS).Get(context.Background(), "page", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return c.Data["v"]
	}

	recA := deploy()
	srv.RemoteCommitFiles(map[string]string{"overlays/dev/cm.yaml": cm("B")}, "B")
	deploy()
	if got := live(); got != "B" {
		t.Fatalf("live after B = %q, want B", got)
	}
	if r, err := trail.Get(context.Background(), recA); err != nil || r.Commit != a {
		t.Fatalf("record %s names commit %q, want A %s", recA, r.Commit, a)
	}

	res := postEnvRollback(t, ts, "dev", recA, "B is wrong")
	if head := srv.Head("main"); res.Commit.SHA != head ||
		gitservertest.Run(t, srv.Bare, "rev-parse", head+":overlays/dev") != gitservertest.Run(t, srv.Bare, "rev-parse", a+":overlays/dev") {
		t.Fatalf("commit %s (main %s): want the head, its overlays/dev tree A's", res.Commit.SHA, head)
	}
	waitRun(res.Run.ID)
	if got := live(); got != "A" {
		t.Errorf("live after the rollback = %q, want A", got)
	}
}
