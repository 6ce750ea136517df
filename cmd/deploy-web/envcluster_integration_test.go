package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/fleetset"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/planstore"
)

// TestConsoleWritesTheEnvironmentsCluster: on two real control planes, a
// console plan and apply of an environment the environments page maps to
// the second cluster (eu-west) write there, and nothing of it reaches the
// home cluster but the plan history.
func TestConsoleWritesTheEnvironmentsCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two control planes")
	}
	home := platformtest.Start(t, platformtest.Options{Namespaces: []string{"dev", "deploy-web"}})
	eu := platformtest.Start(t, platformtest.Options{Namespaces: []string{"dev"}})
	targets := []clusterTarget{
		{cfg: fleetset.Cluster{Name: "home", InCluster: true, Namespaces: []string{"dev"}}, rc: home.Cluster.Config},
		{cfg: fleetset.Cluster{Name: "eu-west", Kubeconfig: "/eu.kubeconfig", Context: "admin@eu", Namespaces: []string{"dev"}}, rc: eu.Cluster.Config},
	}
	dir := t.TempDir()
	files := map[string]string{
		"m/kustomization.yaml": "namespace: dev\nresources:\n  - cm.yaml\n",
		"m/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  region: eu\n",
		"catalog.json":         `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`,
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := envconfig.ParseConfig([]byte("environments:\n  - {name: dev, cluster: {context: eu-west}, namespace: dev, source: {path: m}, catalog: catalog.json, registry: {skip: true}}\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := envClusters(cfg, targets)["dev"]; got != "eu-west" {
		t.Fatalf("the environments page names cluster %q for dev, want eu-west", got)
	}
	r := envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{
		ClusterConfig: envRestConfigs(cfg, targets, ""),
		// What serve used to pass for every environment: it must not be used.
		RestConfig: home.Cluster.Config, Events: home.Kube.CoreV1(),
		ReportsDir: t.TempDir(), Store: planstore.New(home.Kube.CoreV1(), "deploy-web", 10), ApplyTimeout: time.Minute,
	})
	wait := func(run *envrun.Run) envrun.Snapshot {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for !run.Snapshot().Done {
			if time.Now().After(deadline) {
				t.Fatalf("run %s did not end: %q", run.ID, run.Snapshot().Steps)
			}
			time.Sleep(50 * time.Millisecond)
		}
		return run.Snapshot()
	}
	plan, err := r.Start("dev", envrun.ActionPlan, "alice", "", "")
	if err != nil {
		t.Fatal(err)
	}
	ps := wait(plan)
	if ps.Report == nil || ps.Report.Status() != deployplan.StatusReady {
		t.Fatalf("plan = %+v (err %v), want ready", ps.Report, ps.Err)
	}
	if got := ps.Report.DeployApply.Target.Cluster; got != eu.Cluster.Config.Host {
		t.Errorf("plan target = %s, want eu-west's %s (home is %s)", got, eu.Cluster.Config.Host, home.Cluster.Config.Host)
	}
	apply, err := r.Start("dev", envrun.ActionApply, "alice", "dev", ps.Entry.ID)
	if err != nil {
		t.Fatal(err)
	}
	as := wait(apply)
	if as.Report == nil || as.Report.Status() != deployplan.StatusApplied {
		t.Fatalf("apply = %v (err %v, refusal %q), want applied", as.Report, as.Err, as.Refusal)
	}

	ctx := context.Background()
	if cm, err := eu.Kube.CoreV1().ConfigMaps("dev").Get(ctx, "settings", metav1.GetOptions{}); err != nil || cm.Data["region"] != "eu" {
		t.Errorf("eu-west's dev/settings = %v, %v; want the applied ConfigMap", cm, err)
	}
	if _, err := home.Kube.CoreV1().ConfigMaps("dev").Get(ctx, "settings", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("home's dev/settings: err = %v, want NotFound (the apply went to the home cluster)", err)
	}
	countEvents := func(p *platformtest.Env) int {
		evs, err := p.Kube.CoreV1().Events("dev").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range evs.Items {
			if e.Reason == "ApplyStarted" || e.Reason == "ApplyFinished" {
				n++
			}
		}
		return n
	}
	if n := countEvents(eu); n != 2 {
		t.Errorf("eu-west has %d apply audit Events, want 2", n)
	}
	if n := countEvents(home); n != 0 {
		t.Errorf("home has %d apply audit Events, want none", n)
	}
	if _, err := home.Kube.CoordinationV1().Leases("dev").Get(ctx, deployplan.LockName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("home's apply Lease: err = %v, want NotFound", err)
	}
	// The history stays in the home cluster.
	if entries, err := planstore.New(home.Kube.CoreV1(), "deploy-web", 10).List(ctx, "dev"); err != nil || len(entries) != 2 {
		t.Errorf("home's plan history = %d entries (%v), want the plan and the apply", len(entries), err)
	}
}
