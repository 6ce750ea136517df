package deployplan

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/platformtest"
)

// dependsFiles is a project of two Apps: App a (its App CR and the
// Deployment a-db labelled as its own, with minReadySeconds 5 and extra
// indented under its pod spec) and App b (its App CR, depending on App
// a, and the ConfigMap b-config labelled as its own). Nothing orders
// them but the annotation: every object is in wave 0.
func dependsFiles(extra string) map[string]string {
	img := func(name string) string { return "registry.example.com/shop/" + name + ":" + commitA }
	app := func(name, ann string) string {
		return fmt.Sprintf("apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: %s\n%sspec:\n  image: %s\n  replicas: 1\n", name, ann, img(name))
	}
	return map[string]string{
		"m/kustomization.yaml": "resources: [b.yaml, a.yaml]\n",
		"m/b.yaml": app("b", "  annotations: {deploy-web.hanzo.ai/depends-on: \"App/a\"}\n") + "---\n" +
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b-config\n  labels: {app.kubernetes.io/instance: b}\ndata: {k: v}\n",
		"m/a.yaml": app("a", "") + "---\n" + fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: a-db
  labels: {app.kubernetes.io/instance: a}
spec:
  replicas: 1
  minReadySeconds: 5
  selector: {matchLabels: {app: a-db}}
  template:
    metadata: {labels: {app: a-db}}
    spec:
%s      containers:
        - {name: main, image: %s}
`, extra, img("a-db")),
		"catalog.json": fmt.Sprintf(`{"commit": %q, "services": [
  {"id": "a", "image": %q, "digest": %q, "published": true},
  {"id": "a-db", "image": %q, "digest": %[3]q, "published": true},
  {"id": "b", "image": %[5]q, "digest": %[3]q, "published": true}]}`, commitA, img("a"), digestA, img("a-db"), img("b")),
	}
}

// TestApplyDependsOnOnRealCluster applies, on the real control plane
// with the reference operator, App b depending on App a whose Deployment
// has minReadySeconds 5: the plan lists b's objects after a's, waiting
// for App/a; b's objects are created at least 5 s after a's Deployment.
// With a's Deployment unschedulable, the apply stops before b naming
// App/a, nothing of b written; an apply of App b alone (a sync of one
// App) waits for App a too, writing neither. A cycle blocks the plan,
// naming it.
func TestApplyDependsOnOnRealCluster(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{"deps", "stuck"}, Operator: true})
	ctx := context.Background()
	env := func(dir, name string) *envconfig.Environment { return localEnv(t, dir, name) }
	opts := Options{RestConfig: p.Cluster.Config}
	apply := func(e *envconfig.Environment, dir string, o Options, timeout time.Duration) *Report {
		t.Helper()
		return applyLocal(t, e, dir, o, timeout)
	}
	wavesOfReport := func(d DeployApply) []string {
		var out []string
		for _, w := range d.Waves {
			out = append(out, fmt.Sprintf("%s: %s (after %s)", waveName(w), strings.Join(w.Objects, ", "), strings.Join(w.WaitsFor, ", ")))
		}
		return out
	}
	wantWaves := []string{"wave 0: Deployment/a-db, App/a (after )", "wave 0 of App/b: ConfigMap/b-config, App/b (after App/a)"}
	absent := func(ns string) {
		t.Helper()
		if _, err := p.Kube.CoreV1().ConfigMaps(ns).Get(ctx, "b-config", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: ConfigMap b-config: %v, want not found", ns, err)
		}
		if _, err := p.Dyn.Resource(appcr.Resource).Namespace(ns).Get(ctx, "b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: App b: %v, want not found", ns, err)
		}
	}

	okDir := t.TempDir()
	writeFiles(t, okDir, dependsFiles(""))
	t.Run("the plan lists App b after App a", func(t *testing.T) {
		rep, err := Plan(ctx, env(okDir, "deps"), opts)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Status() != StatusReady {
			t.Fatalf("plan: %s", rep.Summary())
		}
		if got := wavesOfReport(rep.DeployApply); fmt.Sprint(got) != fmt.Sprint(wantWaves) {
			t.Errorf("plan's waves = %q, want %q", got, wantWaves)
		}
		if s := rep.Summary(); !strings.Contains(s, "wave 0 of App/b: once App/a healthy") {
			t.Errorf("the plan's summary does not list the order:\n%s", s)
		}
	})

	t.Run("App b is written once App a is healthy", func(t *testing.T) {
		rep := apply(env(okDir, "deps"), okDir, opts, 2*time.Minute)
		if rep.Status() != StatusApplied {
			t.Fatalf("apply: %s", rep.Summary())
		}
		db, err := p.Kube.AppsV1().Deployments("deps").Get(ctx, "a-db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm, err := p.Kube.CoreV1().ConfigMaps("deps").Get(ctx, "b-config", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.Dyn.Resource(appcr.Resource).Namespace("deps").Get(ctx, "b", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Creation times have a second's resolution: a gap of at least
		// 5 s stays at least 5 s once both are cut to the second.
		for name, created := range map[string]time.Time{"ConfigMap/b-config": cm.CreationTimestamp.Time, "App/b": b.GetCreationTimestamp().Time} {
			if gap := created.Sub(db.CreationTimestamp.Time); gap < 5*time.Second {
				t.Errorf("App b's %s created %s after App a's Deployment/a-db, want at least 5s (minReadySeconds)", name, gap)
			}
		}
	})

	stuckDir := t.TempDir()
	writeFiles(t, stuckDir, dependsFiles("      nodeSelector: {no-such-node: \"true\"}\n"))
	t.Run("an apply of App b alone waits for App a", func(t *testing.T) {
		o := opts
		o.Only = AppObjects(appcr.Kind.Group, appcr.Kind.Kind, "b")
		rep := apply(env(stuckDir, "stuck"), stuckDir, o, 3*time.Second)
		if rep.Status() != StatusFailed {
			t.Fatalf("apply: %s; want failed", rep.Summary())
		}
		for _, want := range []string{"App/b waits for App/a, which did not get healthy", "App/a is Missing"} {
			if !strings.Contains(rep.DeployApply.Conclusion.Summary, want) {
				t.Errorf("summary %q lacks %q", rep.DeployApply.Conclusion.Summary, want)
			}
		}
		absent("stuck")
		if _, err := p.Kube.AppsV1().Deployments("stuck").Get(ctx, "a-db", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("App a's Deployment: %v, want not found (an apply of App b alone does not write App a)", err)
		}
	})

	t.Run("a dependency that never gets healthy stops the apply before App b", func(t *testing.T) {
		rep := apply(env(stuckDir, "stuck"), stuckDir, opts, 5*time.Second)
		d := rep.DeployApply
		if rep.Status() != StatusFailed {
			t.Fatalf("apply: %s; want failed", rep.Summary())
		}
		for _, want := range []string{"wave 0 of App/b not started", "App/b waits for App/a, which did not get healthy", "Deployment/a-db"} {
			if !strings.Contains(d.Conclusion.Summary, want) {
				t.Errorf("summary %q lacks %q", d.Conclusion.Summary, want)
			}
		}
		if got := wavesOfReport(d); fmt.Sprint(got) != fmt.Sprint(wantWaves) {
			t.Fatalf("waves = %q, want %q", got, wantWaves)
		}
		if d.Waves[1].Result != WaveNotStarted || !strings.Contains(d.Waves[1].Message, "App/a") {
			t.Errorf("App b's wave: %q %q, want not-started naming App/a", d.Waves[1].Result, d.Waves[1].Message)
		}
		for _, o := range d.Objects {
			want := "created"
			if o.Name == "b" || o.Name == "b-config" {
				want = "skipped"
			}
			if o.Result != want {
				t.Errorf("%s/%s: result %q, want %s", o.Kind, o.Name, o.Result, want)
			}
		}
		absent("stuck")
	})

	t.Run("a cycle blocks the plan, naming it", func(t *testing.T) {
		dir := t.TempDir()
		files := dependsFiles("")
		files["m/a.yaml"] = strings.Replace(files["m/a.yaml"], "  name: a\n", "  name: a\n  annotations: {deploy-web.hanzo.ai/depends-on: \"App/b\"}\n", 1)
		writeFiles(t, dir, files)
		rep, err := Plan(ctx, env(dir, "deps"), opts)
		if err != nil {
			t.Fatal(err)
		}
		var found bool
		for _, b := range rep.DeployApply.RemainingBlockers {
			found = found || b.ID == "depends-on-cycle" && strings.Contains(b.Message, "App/a -> App/b -> App/a")
		}
		if rep.Status() != StatusBlocked || !found {
			t.Errorf("plan = %s; want blocked by depends-on-cycle naming App/a -> App/b -> App/a", rep.Summary())
		}
	})
}
