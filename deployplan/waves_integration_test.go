package deployplan

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/platformtest"
)

// wavesFiles is a project of three waves: wave 0 a ConfigMap and the
// Deployment db (with extra, indented under its pod spec, and
// minReadySeconds 5), wave 1 a ConfigMap and the Deployment app, wave 2
// a Service.
func wavesFiles(extra string) map[string]string {
	deploy := func(name, wave, spec string) string {
		img := "registry.example.com/shop/" + name + ":" + commitA
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  annotations: {deploy-web.hanzo.ai/wave: %[2]q}
spec:
  replicas: 1
  minReadySeconds: 5
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec:
%[4]s      containers:
        - {name: main, image: %[3]s}
`, name, wave, img, spec)
	}
	cm := func(name, wave string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  annotations: {deploy-web.hanzo.ai/wave: %q}\ndata: {k: v}\n", name, wave)
	}
	return map[string]string{
		"m/kustomization.yaml": "resources: [db.yaml, app.yaml, svc.yaml]\n",
		"m/db.yaml":            cm("db-config", "0") + "---\n" + deploy("db", "0", extra),
		"m/app.yaml":           cm("app-config", "1") + "---\n" + deploy("app", "1", ""),
		"m/svc.yaml":           "apiVersion: v1\nkind: Service\nmetadata:\n  name: app\n  annotations: {deploy-web.hanzo.ai/wave: \"2\"}\nspec:\n  selector: {app: app}\n  ports: [{port: 80}]\n",
		"catalog.json": fmt.Sprintf(`{"commit": %q, "services": [
  {"id": "db", "image": "registry.example.com/shop/db:%[1]s", "digest": %[2]q, "published": true},
  {"id": "app", "image": "registry.example.com/shop/app:%[1]s", "digest": %[2]q, "published": true}]}`, commitA, digestA),
	}
}

// localEnv is environment name of a config in dir: namespace name, the
// source folder m, the catalog catalog.json, no registry check.
func localEnv(t *testing.T, dir, name string) *envconfig.Environment {
	t.Helper()
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf("environments:\n  - {name: %[1]s, cluster: {context: test}, namespace: %[1]s, source: {path: m}, catalog: catalog.json, registry: {skip: true}}\n", name)), dir)
	if err != nil {
		t.Fatal(err)
	}
	e, err := cfg.Env(name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// applyLocal applies e (a localEnv of dir) with opts, confirmed, its
// report under dir, waits bounded by timeout.
func applyLocal(t *testing.T, e *envconfig.Environment, dir string, opts Options, timeout time.Duration) *Report {
	t.Helper()
	rep, err := Apply(context.Background(), e, ApplyOptions{Options: opts, Request: ApplyRequest{Env: e.Name, ConfirmEnv: e.Name, ConfirmedNonProduction: true},
		ReportPath: filepath.Join(dir, "reports", "r.json"), Timeout: timeout})
	if err != nil {
		t.Fatalf("Apply(%s) = %v", e.Name, err)
	}
	return rep
}

// TestApplyWavesOnRealCluster applies, on the real control plane, three
// waves whose wave 0 holds a Deployment with minReadySeconds 5: the plan
// lists the waves; wave 1's objects are created at least 5 s after wave
// 0's Deployment (the apply waited for it to be healthy), and everything
// is written. With wave 0's Deployment unschedulable (it never gets
// healthy), the apply stops before wave 1: the report and its summary
// (what the run's record keeps) name the wave and the object, and nothing
// of waves 1 and 2 exists in the cluster.
func TestApplyWavesOnRealCluster(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{"happy", "stuck"}})
	ctx := context.Background()
	happyDir, stuckDir := t.TempDir(), t.TempDir()
	writeFiles(t, happyDir, wavesFiles(""))
	writeFiles(t, stuckDir, wavesFiles("      nodeSelector: {no-such-node: \"true\"}\n"))
	env := func(dir, name string) *envconfig.Environment { return localEnv(t, dir, name) }
	opts := Options{RestConfig: p.Cluster.Config}
	apply := func(e *envconfig.Environment, dir string, timeout time.Duration) *Report {
		t.Helper()
		return applyLocal(t, e, dir, opts, timeout)
	}
	wantWaves := []string{"0: ConfigMap/db-config, Deployment/db", "1: ConfigMap/app-config, Deployment/app", "2: Service/app"}
	wavesOfReport := func(d DeployApply) []string {
		var out []string
		for _, w := range d.Waves {
			out = append(out, fmt.Sprintf("%d: %s", w.Wave, strings.Join(w.Objects, ", ")))
		}
		return out
	}

	t.Run("the plan lists the waves", func(t *testing.T) {
		rep, err := Plan(ctx, env(happyDir, "happy"), opts)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Status() != StatusReady {
			t.Fatalf("plan: %s", rep.Summary())
		}
		if got := wavesOfReport(rep.DeployApply); fmt.Sprint(got) != fmt.Sprint(wantWaves) {
			t.Errorf("plan's waves = %q, want %q", got, wantWaves)
		}
		if w := rep.DeployApply.Waves[0].Workloads; len(w) != 1 || w[0] != "Deployment/db" {
			t.Errorf("wave 0 waits for %v, want [Deployment/db]", w)
		}
	})

	t.Run("each wave after the one before is healthy", func(t *testing.T) {
		rep := apply(env(happyDir, "happy"), happyDir, 2*time.Minute)
		d := rep.DeployApply
		if rep.Status() != StatusApplied {
			t.Fatalf("apply: %s", rep.Summary())
		}
		for _, w := range d.Waves {
			if w.Result != WaveApplied {
				t.Errorf("wave %d: result %q (%s), want applied", w.Wave, w.Result, w.Message)
			}
		}
		for _, o := range d.Objects {
			if o.Result != "created" {
				t.Errorf("%s/%s: result %q, want created", o.Kind, o.Name, o.Result)
			}
		}
		db, err := p.Kube.AppsV1().Deployments("happy").Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		appCM, err := p.Kube.CoreV1().ConfigMaps("happy").Get(ctx, "app-config", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		app, err := p.Kube.AppsV1().Deployments("happy").Get(ctx, "app", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		svc, err := p.Kube.CoreV1().Services("happy").Get(ctx, "app", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Creation times have a second's resolution: a gap of at least
		// 5 s stays at least 5 s once both are cut to the second.
		for _, m := range []metav1.ObjectMeta{appCM.ObjectMeta, app.ObjectMeta} {
			if gap := m.CreationTimestamp.Sub(db.CreationTimestamp.Time); gap < 5*time.Second {
				t.Errorf("wave 1's %s created %s after wave 0's Deployment/db, want at least 5s (minReadySeconds)", m.Name, gap)
			}
		}
		if gap := svc.CreationTimestamp.Sub(app.CreationTimestamp.Time); gap < 5*time.Second {
			t.Errorf("wave 2's Service created %s after wave 1's Deployment/app, want at least 5s", gap)
		}
	})

	t.Run("a wave that never gets healthy stops the apply", func(t *testing.T) {
		rep := apply(env(stuckDir, "stuck"), stuckDir, 5*time.Second)
		d := rep.DeployApply
		if rep.Status() != StatusFailed {
			t.Fatalf("apply: %s; want failed", rep.Summary())
		}
		for _, want := range []string{"wave 1 not started", "wave 0 did not get healthy", "Deployment/db"} {
			if !strings.Contains(d.Conclusion.Summary, want) {
				t.Errorf("summary %q lacks %q", d.Conclusion.Summary, want)
			}
		}
		if got := wavesOfReport(d); fmt.Sprint(got) != fmt.Sprint(wantWaves) {
			t.Fatalf("waves = %q, want %q", got, wantWaves)
		}
		results := []string{d.Waves[0].Result, d.Waves[1].Result, d.Waves[2].Result}
		if fmt.Sprint(results) != fmt.Sprint([]string{WaveUnhealthy, WaveNotStarted, WaveNotStarted}) {
			t.Errorf("wave results = %v, want unhealthy, not-started, not-started", results)
		}
		if !strings.Contains(d.Waves[0].Message, "Deployment/db") {
			t.Errorf("wave 0's message %q does not name Deployment/db", d.Waves[0].Message)
		}
		for _, o := range d.Objects {
			want := "skipped"
			if o.Name == "db" || o.Name == "db-config" {
				want = "created"
			}
			if o.Result != want {
				t.Errorf("%s/%s: result %q, want %s", o.Kind, o.Name, o.Result, want)
			}
		}
		if _, err := p.Kube.CoreV1().ConfigMaps("stuck").Get(ctx, "db-config", metav1.GetOptions{}); err != nil {
			t.Errorf("wave 0's ConfigMap: %v, want it written", err)
		}
		if _, err := p.Kube.CoreV1().ConfigMaps("stuck").Get(ctx, "app-config", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("wave 1's ConfigMap: %v, want not found", err)
		}
		if _, err := p.Kube.AppsV1().Deployments("stuck").Get(ctx, "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("wave 1's Deployment: %v, want not found", err)
		}
		if _, err := p.Kube.CoreV1().Services("stuck").Get(ctx, "app", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("wave 2's Service: %v, want not found", err)
		}
	})

	t.Run("an invalid wave annotation blocks the plan, naming the object", func(t *testing.T) {
		dir := t.TempDir()
		files := wavesFiles("")
		files["m/svc.yaml"] = strings.Replace(files["m/svc.yaml"], `"2"`, `"soon"`, 1)
		writeFiles(t, dir, files)
		rep, err := Plan(ctx, env(dir, "happy"), opts)
		if err != nil {
			t.Fatal(err)
		}
		var found bool
		for _, b := range rep.DeployApply.RemainingBlockers {
			if b.ID == "wave-annotation" && strings.Contains(b.Message, "Service/app") {
				found = true
			}
		}
		if rep.Status() != StatusBlocked || !found {
			t.Errorf("plan = %s; want blocked by wave-annotation naming Service/app", rep.Summary())
		}
	})
}
