package envrun

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/planstore"
)

func labelledCM(name, app, value string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  labels: {app.kubernetes.io/instance: " + app + "}\ndata:\n  v: \"" + value + "\"\n"
}

// TestDeployOnRealCluster: on the real control plane, Deploy plans and
// applies in one run (a plan entry and an apply entry in the history,
// both saying the trigger, and the audit Events); with Only it applies one
// App's objects and leaves another App's change alone; a blocked plan is
// not applied; a protected environment is planned only.
func TestDeployOnRealCluster(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{"dev", "prod", "deploy-web"}})
	dir := t.TempDir()
	gitservertest.WriteTree(t, dir, map[string]string{
		"m/kustomization.yaml": "resources: [api.yaml, worker.yaml]\n",
		"m/api.yaml":           labelledCM("api-config", "api", "1"),
		"m/worker.yaml":        labelledCM("worker-config", "worker", "1"),
		"catalog.json":         `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`,
	})
	cfg, err := envconfig.ParseConfig([]byte(`environments:
  - {name: dev, cluster: {context: test}, namespace: dev, source: {path: m}, catalog: catalog.json, registry: {skip: true}}
  - {name: prod, cluster: {context: test}, namespace: prod, protected: true, source: {path: m}, catalog: catalog.json, registry: {skip: true}}
`), dir)
	if err != nil {
		t.Fatal(err)
	}
	store := planstore.New(p.Kube.CoreV1(), "deploy-web", 20)
	r := New(cfg, slog.New(slog.DiscardHandler), Options{RestConfig: p.Cluster.Config, Events: p.Kube.CoreV1(),
		ReportsDir: t.TempDir(), Store: store, ApplyTimeout: time.Minute})
	ctx := context.Background()
	value := func(ns, name string) string {
		t.Helper()
		cm, err := p.Kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "(" + err.Error() + ")"
		}
		return cm.Data["v"]
	}

	if _, err := r.Deploy("dev", DeployRequest{User: "alice", Trigger: "deploy-everything"}); !errors.Is(err, ErrBadTrigger) {
		t.Errorf("Deploy(trigger deploy-everything) = %v, want ErrBadTrigger", err)
	}

	t.Run("all", func(t *testing.T) {
		run, err := r.Deploy("dev", DeployRequest{User: "alice", Trigger: TriggerSync})
		if err != nil {
			t.Fatal(err)
		}
		s := waitDone(t, run)
		if s.Err != nil || s.Report == nil || s.Report.Status() != deployplan.StatusApplied {
			t.Fatalf("Deploy(all) = %v, %v, steps %q; want applied", s.Report, s.Err, s.Steps)
		}
		if got := value("dev", "api-config") + value("dev", "worker-config"); got != "11" {
			t.Errorf("dev's ConfigMaps = %q, want both applied (11)", got)
		}
		entries, err := store.List(ctx, "dev")
		if err != nil || len(entries) != 2 {
			t.Fatalf("history = %+v, %v; want a plan and an apply", entries, err)
		}
		for i, want := range []string{ActionApply, ActionPlan} { // newest first
			e := entries[i]
			if e.Action != want || e.User != "alice" || !strings.HasPrefix(e.Summary, "sync: ") {
				t.Errorf("history[%d] = %s by %s %q, want %s by alice, summary starting with the trigger", i, e.Action, e.User, e.Summary, want)
			}
		}
		if s.Entry.ID != entries[0].ID {
			t.Errorf("run entry = %s, want the apply entry %s", s.Entry.ID, entries[0].ID)
		}
	})

	t.Run("only one App", func(t *testing.T) {
		gitservertest.WriteTree(t, dir, map[string]string{"m/api.yaml": labelledCM("api-config", "api", "2"), "m/worker.yaml": labelledCM("worker-config", "worker", "2")})
		run, err := r.Deploy("dev", DeployRequest{User: "alice", Trigger: TriggerSync, Only: "api"})
		if err != nil {
			t.Fatal(err)
		}
		s := waitDone(t, run)
		if s.Err != nil || s.Report == nil || s.Report.Status() != deployplan.StatusApplied {
			t.Fatalf("Deploy(only api) = %v, %v, steps %q; want applied", s.Report, s.Err, s.Steps)
		}
		if got := value("dev", "api-config"); got != "2" {
			t.Errorf("api-config = %q, want 2 (applied)", got)
		}
		if got := value("dev", "worker-config"); got != "1" {
			t.Errorf("worker-config = %q, want 1: another App's change was applied by a sync of api", got)
		}
		if n := len(s.Report.DeployApply.Objects); n != 1 {
			t.Errorf("the apply report lists %d objects, want api's one", n)
		}
		// The narrowed plan is no review of the whole environment: the
		// console's Apply of it is refused, and worker stays.
		entries, err := store.List(ctx, "dev")
		if err != nil || len(entries) < 2 || entries[1].Action != ActionPlan {
			t.Fatalf("history = %+v, %v; want the sync's plan second", entries, err)
		}
		apply, err := r.Start("dev", ActionApply, "bob", "dev", entries[1].ID)
		if err != nil {
			t.Fatal(err)
		}
		if as := waitDone(t, apply); !strings.Contains(as.Refusal, "only") || value("dev", "worker-config") != "1" {
			t.Errorf("console Apply of api's plan = refusal %q, worker-config %q; want a refusal naming the narrowed plan and worker untouched", as.Refusal, value("dev", "worker-config"))
		}
	})

	t.Run("blocked", func(t *testing.T) {
		// An object for another namespace is a boundary blocker.
		gitservertest.WriteTree(t, dir, map[string]string{"m/api.yaml": strings.Replace(labelledCM("api-config", "api", "3"), "metadata:\n", "metadata:\n  namespace: kube-system\n", 1)})
		run, err := r.Deploy("dev", DeployRequest{User: "alice", Trigger: TriggerRollback})
		if err != nil {
			t.Fatal(err)
		}
		s := waitDone(t, run)
		var ref *deployplan.RefusalError
		if !errors.As(s.Err, &ref) || !strings.Contains(s.Refusal, "blocked by") || s.Report == nil || s.Report.DeployApply.Mode != "dry-run" {
			t.Fatalf("Deploy(blocked) = refusal %q, err %v; want the plan's blockers and its report", s.Refusal, s.Err)
		}
		if got := value("dev", "worker-config"); got != "1" {
			t.Errorf("worker-config = %q after a blocked deploy, want 1 (nothing applied)", got)
		}
		entries, _ := store.List(ctx, "dev")
		if len(entries) == 0 || entries[0].Action != ActionPlan {
			t.Errorf("newest history entry = %+v, want the blocked plan (no apply entry)", entries[:1])
		}
	})

	t.Run("protected", func(t *testing.T) {
		gitservertest.WriteTree(t, dir, map[string]string{"m/api.yaml": labelledCM("api-config", "api", "4")})
		run, err := r.Deploy("prod", DeployRequest{User: "alice", Trigger: TriggerRollback})
		if err != nil {
			t.Fatal(err)
		}
		if run.Action != ActionPlan {
			t.Errorf("protected run action = %s, want plan", run.Action)
		}
		s := waitDone(t, run)
		if s.Err != nil || s.Report == nil || s.Report.DeployApply.Mode != "dry-run" {
			t.Fatalf("Deploy(prod) = %v, %v; want a plan", s.Report, s.Err)
		}
		if got := value("prod", "api-config"); !strings.Contains(got, "not found") {
			t.Errorf("prod api-config = %q, want not found (a protected environment is never applied)", got)
		}
	})
}
