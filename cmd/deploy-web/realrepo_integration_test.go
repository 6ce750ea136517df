package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/revdiff"
)

// plainApp is a project's own kustomize folder as platform teams have
// them: two Deployments, their Services and an HPA, and no namespace
// anywhere (the environment's is applied by the plan). color is api's
// COLOR.
func plainApp(color string) map[string]string {
	dep := func(name, extra string) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, labels: {app: %[1]s}}
spec:
%[2]s  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
      containers:
        - name: %[1]s
          image: ghcr.io/acme/%[1]s:1.0.0
          env:
            - {name: COLOR, value: %[3]s}
---
apiVersion: v1
kind: Service
metadata: {name: %[1]s}
spec:
  selector: {app: %[1]s}
  ports: [{name: http, port: 80, targetPort: 8080}]
`, name, extra, color)
	}
	return map[string]string{
		"app/kustomization.yaml": "resources: [api.yaml, worker.yaml, hpa.yaml]\n",
		"app/api.yaml":           dep("api", "  replicas: 1\n"),
		"app/worker.yaml":        dep("worker", ""),
		"app/hpa.yaml": `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: worker}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
  minReplicas: 1
  maxReplicas: 3
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}]
`,
		"catalog.json": `{"mode": "version", "commit": "0123456789abcdef0123456789abcdef01234567", "services": [
  {"id": "api", "image": "ghcr.io/acme/api", "tag": "1.0.0", "digest": "sha256:` + strings.Repeat("a", 64) + `", "published": true},
  {"id": "worker", "image": "ghcr.io/acme/worker", "tag": "1.0.0", "digest": "sha256:` + strings.Repeat("b", 64) + `", "published": true}]}`,
	}
}

// TestPlainKustomizationLoop: issue 36's done-when on the real control
// plane and a git server: a kustomization with Deployments, Services and
// an HPA and no namespace goes through the CLI's plan and apply (objects
// in the environment's namespace, the record with them), the PR diff
// (exit 0 for what is live, 1 with a change; a ConfigMap nobody here
// manages shows no value), record against live and two records (an
// older record stored without namespaces too); auto-sync then counts
// the CLI's apply as live (no re-apply), and a hand edit (an extra env
// var, a changed one and a label by another manager) is healed: the
// added fields gone, git's value back, one self-heal record.
func TestPlainKustomizationLoop(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{"dev", "deploy-web"}})
	srv := gitservertest.New(t, plainApp("red"), gitservertest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "deploy.yaml")
	cfgText := fmt.Sprintf(`environments:
  - name: dev
    cluster: {context: devcluster, kubeconfig: %q}
    namespace: dev
    source: {repo: %q, ref: main, path: app}
    catalog: catalog.json
    registry: {skip: true}
    autoSync: {enabled: true, selfHeal: {prune: fields}, interval: 10s, grace: 1s}
`, p.Cluster.Kubeconfig, srv.URL)
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) (int, string) {
		t.Helper()
		var out, errb strings.Builder
		cctx, ccancel := context.WithTimeout(ctx, 4*time.Minute)
		defer ccancel()
		code := run(cctx, append(args, "--config", cfgPath, "--env", "dev"), &out, &errb)
		t.Logf("deploy-web %s -> %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
		return code, out.String()
	}
	store, err := audit.New(p.Kube.CoreV1(), metadata.NewForConfigOrDie(p.Cluster.Config), audit.Options{Namespace: "deploy-web"})
	if err != nil {
		t.Fatal(err)
	}

	// Plan: ready, every object in dev; the HPA is namespaced too.
	report := filepath.Join(dir, "plan.json")
	if code, _ := cli("apply", "--write-report", report); code != 0 {
		t.Fatalf("plan = %d, want 0 (ready)", code)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"namespace": "dev"`) || strings.Contains(string(b), "outside-namespace") {
		t.Errorf("plan report does not put the objects in dev:\n%s", b)
	}
	// Apply, recorded by the CLI.
	h1 := srv.Head("main")
	if code, _ := cli("apply", "--apply", "--confirm-env=dev", "--confirmed-non-production", "--timeout", "3m", "--write-report", filepath.Join(dir, "apply.json")); code != 0 {
		t.Fatalf("apply = %d, want 0", code)
	}
	if _, err := p.Kube.AutoscalingV2().HorizontalPodAutoscalers("dev").Get(ctx, "worker", metav1.GetOptions{}); err != nil {
		t.Errorf("the HPA is not in dev: %v", err)
	}
	recA, ok, err := audit.LastApplied(ctx, store, "dev")
	if err != nil || !ok || recA.Commit != h1 {
		t.Fatalf("audit.LastApplied = %+v, %v, %v; want the CLI's apply of %s", recA, ok, err, h1)
	}
	recA, err = store.Get(ctx, recA.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range recA.Manifests {
		if m.GetNamespace() != "dev" {
			t.Errorf("record manifest %s/%s has namespace %q, want dev (the apply's)", m.GetKind(), m.GetName(), m.GetNamespace())
		}
	}

	t.Run("PR diff of what is live: no change", func(t *testing.T) {
		code, out := cli("diff", "--ref", "main")
		if code != 0 || !strings.Contains(out, "No changes.") || strings.Contains(out, "outside the environment") {
			t.Errorf("diff --ref main = %d, want 0 and No changes:\n%s", code, out)
		}
	})
	t.Run("record against live", func(t *testing.T) {
		rep, err := revdiff.CompareEnvironment(ctx, mustEnv(t, cfgPath), deployplan.Options{}, revdiff.Side{Name: recA.ID, Objects: recA.Manifests}, revdiff.LiveSide(), nil, revdiff.Options{})
		if err != nil || rep.Changes || len(rep.Outside) != 0 || rep.Counts.Unchanged != 5 {
			t.Errorf("record..live = %+v, %v; want 5 unchanged, nothing outside", rep, err)
		}
	})

	// A pull request that changes api's COLOR and adds a ConfigMap that
	// exists live, made by someone else.
	if _, err := p.Kube.CoreV1().ConfigMaps("dev").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-settings"},
		Data: map[string]string{"token": "do-not-print-me"}}, metav1.CreateOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatal(err)
	}
	gitservertest.Run(t, srv.Work, "checkout", "-q", "-b", "feature")
	pr := plainApp("green")
	pr["app/settings.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-settings}\ndata: {mode: ours}\n"
	pr["app/kustomization.yaml"] = "resources: [api.yaml, worker.yaml, hpa.yaml, settings.yaml]\n"
	gitservertest.WriteTree(t, srv.Work, pr)
	gitservertest.Run(t, srv.Work, "add", "-A")
	gitservertest.Run(t, srv.Work, "commit", "-q", "-m", "feature")
	gitservertest.Run(t, srv.Work, "push", "-q", "origin", "feature")
	gitservertest.Run(t, srv.Work, "checkout", "-q", "main")
	t.Run("PR diff with a change", func(t *testing.T) {
		code, out := cli("diff", "--ref", "feature")
		if code != 1 || !strings.Contains(out, "value: green") {
			t.Errorf("diff --ref feature = %d, want 1 with COLOR red -> green:\n%s", code, out)
		}
		if strings.Contains(out, "do-not-print-me") || !strings.Contains(out, revdiff.NotManagedHere) || strings.Contains(out, "outside the environment") {
			t.Errorf("diff --ref feature shows the unmanaged ConfigMap's value, or not %q:\n%s", revdiff.NotManagedHere, out)
		}
		if strings.Contains(out, "| added |") {
			t.Errorf("diff --ref feature reports live objects as added:\n%s", out)
		}
	})

	// A second apply (api's replicas), then two records, and the first
	// one as an older record without namespaces.
	v2 := plainApp("red")
	v2["app/api.yaml"] = strings.Replace(v2["app/api.yaml"], "replicas: 1", "replicas: 2", 1)
	h2 := srv.RemoteCommitFiles(v2, "api: 2 replicas")
	if code, _ := cli("apply", "--apply", "--confirm-env=dev", "--confirmed-non-production", "--timeout", "3m", "--write-report", filepath.Join(dir, "apply2.json")); code != 0 {
		t.Fatalf("second apply = %d, want 0", code)
	}
	recB, ok, err := audit.LastApplied(ctx, store, "dev")
	if err != nil || !ok || recB.Commit != h2 {
		t.Fatalf("audit.LastApplied = %+v, %v, %v; want the CLI's apply of %s", recB, ok, err, h2)
	}
	if recB, err = store.Get(ctx, recB.ID); err != nil {
		t.Fatal(err)
	}
	t.Run("two records", func(t *testing.T) {
		stripped := stripNamespaces(recA.Manifests)
		for _, from := range []revdiff.Side{{Name: recA.ID, Objects: recA.Manifests}, {Name: "old", Objects: stripped}} {
			rep, err := revdiff.CompareEnvironment(ctx, mustEnv(t, cfgPath), deployplan.Options{}, from, revdiff.Side{Name: recB.ID, Objects: recB.Manifests}, nil, revdiff.Options{})
			if err != nil || rep.Counts != (revdiff.Counts{Changed: 1, Unchanged: 4}) {
				t.Errorf("%s..%s = %+v, %v; want api changed, 4 unchanged", from.Name, recB.ID, rep.Counts, err)
			}
		}
	})

	// Auto-sync: the CLI's apply is live; the head is not applied again.
	calls := &deployCalls{}
	records := &auditRecords{}
	as := runPlainAutoSync(ctx, t, p, cfgPath, store, records, calls)
	waitUntil(t, 4*time.Minute, "auto-sync reads the CLI's apply as live", func() bool {
		st, _, _ := as.Status(ctx, "dev")
		return st.Live == h2
	})
	if got := calls.of("auto-sync", h2); len(got) != 0 {
		t.Errorf("auto-sync deployed %s, which the CLI applied: %v", h2[:7], got)
	}

	// A hand edit: COLOR changed, an env var and a label added.
	kubectl := func(args ...string) {
		t.Helper()
		out, err := exec.CommandContext(ctx, p.Cluster.Kubectl, append([]string{"--kubeconfig", p.Cluster.Kubeconfig, "-n", "dev"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
	}
	kubectl("set", "env", "deployment/api", "COLOR=blue", "HAND_EDIT=1")
	kubectl("label", "deployment/api", "x=1")
	as.loop.Wake("dev")
	waitUntil(t, 4*time.Minute, "a self-heal record", func() bool { return len(records.find(audit.VerbSelfHeal, "")) > 0 })
	d, err := p.Kube.AppsV1().Deployments("dev").Get(ctx, "api", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if _, has := env["HAND_EDIT"]; has || env["COLOR"] != "red" || d.Labels["x"] != "" {
		t.Errorf("after the heal: env %v, labels %v; want COLOR=red, no HAND_EDIT, no label x", env, d.Labels)
	}
	heal := records.find(audit.VerbSelfHeal, "")[0]
	for _, want := range []string{"HAND_EDIT", "removed", "labels", "COLOR"} {
		if !strings.Contains(heal.Message, want) {
			t.Errorf("self-heal record %q lacks %q", heal.Message, want)
		}
	}
	// Two more checks: nothing left to heal, so no second record.
	for range 2 {
		before := len(records.find(audit.VerbSelfHeal, ""))
		st, _, _ := as.Status(ctx, "dev")
		prev := st.NextCheck
		time.Sleep(5 * time.Millisecond)
		as.loop.Wake("dev")
		waitUntil(t, 4*time.Minute, "a check of dev", func() bool {
			st, _, _ := as.Status(ctx, "dev")
			return !st.NextCheck.Equal(prev) && !st.NextCheck.IsZero()
		})
		if n := len(records.find(audit.VerbSelfHeal, "")); n != before || n != 1 {
			t.Errorf("self-heal records = %d after another check, want 1", n)
		}
	}
}

// runPlainAutoSync runs serve's auto-sync for the config at cfgPath, its
// commit live read from store (the audit trail, as serve wires it).
func runPlainAutoSync(ctx context.Context, t *testing.T, p *platformtest.Env, cfgPath string, store *audit.Store, records *auditRecords, calls *deployCalls) *autoSync {
	t.Helper()
	cfg, err := envconfig.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	index := envsource.New(cfg, log, time.Hour)
	if err := index.Refresh(ctx, "dev"); err != nil {
		t.Fatal(err)
	}
	plans := planstore.New(p.Kube.CoreV1(), "deploy-web", 50)
	runner := envrun.New(cfg, log, envrun.Options{RestConfig: p.Cluster.Config, Events: p.Kube.CoreV1(),
		ReportsDir: t.TempDir(), Store: plans, ApplyTimeout: 2 * time.Minute, Index: index, Record: records.add})
	as, err := newAutoSync(autoSyncDeps{cfg: cfg, index: index, runner: &countingRunner{runner, "replica-a", calls}, store: plans, records: store, keys: signtest.Keys(),
		envConfig: func(*envconfig.Environment) (*rest.Config, error) { return p.Cluster.Config, nil },
		kube:      kubernetes.NewForConfigOrDie(platformtest.AdminConfig(p.Cluster.Config)), namespace: "deploy-web", identity: "replica-a",
		appendRecord: records.add, log: log,
		leaseDuration: 2 * time.Second, renewDeadline: time.Second, retryPeriod: 100 * time.Millisecond})
	if err != nil || as == nil {
		t.Fatalf("newAutoSync = %v, %v", as, err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); as.run(rctx, log) }()
	t.Cleanup(func() { stop(); <-done })
	return as
}

func mustEnv(t *testing.T, cfgPath string) *envconfig.Environment {
	t.Helper()
	cfg, err := envconfig.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	e, err := cfg.Env("dev")
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// stripNamespaces is objs as records stored them before the namespace
// rule: without a namespace.
func stripNamespaces(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.DeepCopy()
		out[i].SetNamespace("")
	}
	return out
}
