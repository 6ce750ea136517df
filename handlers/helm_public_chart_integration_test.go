package handlers

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/internal/charttest"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/web/paths"
)

// publicChart is the real public chart name vendored as helmrender's
// test data (deployplan/helmrender/testdata/public, see its README.md),
// its files keyed by their path under dir in a repository.
func publicChart(t *testing.T, name, dir string) map[string]string {
	t.Helper()
	return charttest.Strings(charttest.Chart(t, "public/"+name, dir))
}

// podinfoValues is an environment's values file for podinfo: its image
// at tag, under the chart's own keys.
func podinfoValues(env, tag string) string {
	return "# " + env + "'s podinfo\nimage:\n  repository: ghcr.io/stefanprodan/podinfo\n  tag: " + tag + " # set by the release pipeline\n"
}

// TestPublicChartOnRealCluster takes the real public chart podinfo
// 6.14.1, vendored in the repository as charts/podinfo with a values file
// per environment, through the loop on the real control plane and a real
// git server: dev applied at A (6.14.0), then at B (6.14.1) after a
// commit of its values file; the environment rolled back to A's apply
// record through the API: one commit of dev's values file alone
// (staging's untouched), applied, the live Deployment back at 6.14.0; the
// diff of the two apply records shows the Deployment's image from B to
// A. The chart's test Pods (helm.sh/hook: test; three with its default
// values) are never applied, and the plan says so in one line.
//
// The App rollback API does not apply: it rolls back Apps (the cache's
// rows are App objects), and podinfo renders a plain Deployment, which
// goes back with its environment.
func TestPublicChartOnRealCluster(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{realNS, "deploy-web"}})
	ctx := context.Background()
	const image = "ghcr.io/stefanprodan/podinfo"
	files := publicChart(t, "podinfo", "charts/podinfo")
	files["envs/dev/values.yaml"] = podinfoValues("dev", "6.14.0")
	files["envs/staging/values.yaml"] = podinfoValues("staging", "6.14.0")
	files["catalog.json"] = `{"mode": "version", "services": [` + strings.Join(imageReleases(image, "6.14.0", "6.14.1"), ",\n  ") + "]}\n"
	srv := gitservertest.New(t, files, gitservertest.Options{})
	a := srv.Head("main")
	cfg := chartEnvs(t, srv.URL, "charts/podinfo", "podinfo")
	rt := newRealTrail(t, p)
	runner := envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{RestConfig: p.Cluster.Config, Events: p.Kube.CoreV1(), ReportsDir: t.TempDir(),
		Store: planstore.New(p.Kube.CoreV1(), "deploy-web", 50), ApplyTimeout: 2 * time.Minute, Record: rt.record(t)})
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Environments, o.RecordReader = runner, rt.store
		o.EnvClusterConfig = func(*envconfig.Environment) (*rest.Config, error) { return rest.CopyConfig(p.Cluster.Config), nil }
	})
	live := func() string {
		t.Helper()
		dep, err := p.Kube.AppsV1().Deployments(realNS).Get(ctx, "podinfo", metav1.GetOptions{})
		if err != nil || len(dep.Spec.Template.Spec.Containers) != 1 {
			t.Fatalf("live Deployment podinfo = %v, %v; want one container", dep, err)
		}
		return dep.Spec.Template.Spec.Containers[0].Image
	}

	// A: the chart's Deployment and Service applied, its tests left out
	// and told in one line.
	s := deployApplied(t, runner, "dev", envrun.TriggerSync)
	recA := rt.lastID()
	d := s.Report.DeployApply
	var kinds []string
	for _, o := range d.Objects {
		kinds = append(kinds, o.Kind+"/"+o.Name)
	}
	if strings.Join(kinds, " ") != "Service/podinfo Deployment/podinfo" && strings.Join(kinds, " ") != "Deployment/podinfo Service/podinfo" {
		t.Errorf("plan objects = %q, want podinfo's Deployment and Service alone (no test Pod)", kinds)
	}
	var testLines []string
	for _, w := range d.Warnings {
		if strings.Contains(w, "templates/tests/") {
			testLines = append(testLines, w)
		}
	}
	if len(testLines) != 1 || !strings.Contains(testLines[0], "3 test hook(s) left out") {
		t.Errorf("warnings = %q, want one line naming the chart's 3 tests left out", d.Warnings)
	}
	if got := live(); got != image+":6.14.0" {
		t.Fatalf("live image at A = %q, want %s:6.14.0", got, image)
	}
	// The chart's render settles: a plan at A again changes nothing, sees
	// no drift and warns the same.
	run, err := runner.Start("dev", envrun.ActionPlan, "test", "", "")
	if err != nil {
		t.Fatal(err)
	}
	s = waitEnvRun(t, runner, run.ID)
	if s.Report == nil || s.Report.DeployApply.Conclusion.Status != deployplan.StatusReady {
		t.Fatalf("plan at A again = %v, err %v, refusal %q; want ready", s.Report, s.Err, s.Refusal)
	}
	if len(s.Report.DeployApply.Objects) != len(d.Objects) {
		t.Errorf("plan at A again has %d objects, want %d", len(s.Report.DeployApply.Objects), len(d.Objects))
	}
	if !slices.Equal(s.Report.DeployApply.Warnings, d.Warnings) {
		t.Errorf("warnings of the plan again = %q, want those of the first %q (the chart tests' random names left out)", s.Report.DeployApply.Warnings, d.Warnings)
	}
	for _, o := range s.Report.DeployApply.Objects {
		if o.Action != deployplan.ActionUnchanged || len(o.Drift) > 0 {
			t.Errorf("plan at A again: %s/%s %s %+v, drift %+v; want unchanged, no drift", o.Kind, o.Name, o.Action, o.Changes, o.Drift)
		}
	}

	// B: dev's values file committed, applied.
	srv.RemoteCommitFiles(map[string]string{"envs/dev/values.yaml": podinfoValues("dev", "6.14.1")}, "dev: podinfo 6.14.1")
	commitB := srv.Head("main")
	deployApplied(t, runner, "dev", envrun.TriggerAutoSync)
	recB := rt.lastID()
	if got := live(); got != image+":6.14.1" {
		t.Fatalf("live image at B = %q, want %s:6.14.1", got, image)
	}
	if r, err := rt.store.Get(ctx, recA); err != nil || r.Commit != a {
		t.Fatalf("record %s names commit %q (%v), want A %s", recA, r.Commit, err, a)
	}

	// The environment rollback to A's record: one commit of dev's values
	// file, applied.
	before := srv.Head("main")
	res := postEnvRollback(t, ts, "dev", recA, "6.14.1 fails its checks")
	if res.Commit.SHA != srv.Head("main") || gitservertest.Run(t, srv.Bare, "rev-parse", res.Commit.SHA+"^") != before {
		t.Errorf("commit %s: want the branch head %s, on %s", res.Commit.SHA, srv.Head("main"), before)
	}
	if got := gitservertest.Run(t, srv.Bare, "show", "--name-only", "--format=", res.Commit.SHA); got != "envs/dev/values.yaml" {
		t.Errorf("the commit changes %q, want envs/dev/values.yaml alone", got)
	}
	for file, want := range map[string]string{"envs/dev/values.yaml": podinfoValues("dev", "6.14.0"), "envs/staging/values.yaml": podinfoValues("staging", "6.14.0")} {
		if got := gitservertest.Run(t, srv.Bare, "show", "main:"+file); got != strings.TrimSpace(want) {
			t.Errorf("%s at main = %q, want %q", file, got, want)
		}
	}
	if s := waitEnvRun(t, runner, res.Run.ID); s.Report == nil || s.Report.Status() != deployplan.StatusApplied || s.Report.DeployApply.Source.Commit != res.Commit.SHA {
		t.Fatalf("the rollback's run = %v, err %v, refusal %q; want %s applied", s.Report, s.Err, s.Refusal, res.Commit.SHA)
	}
	recBack := rt.lastID()
	if got := live(); got != image+":6.14.0" {
		t.Errorf("live image after the rollback = %q, want %s:6.14.0", got, image)
	}

	// The diff of the two apply records: the Deployment from B's image to A's.
	if status, diff := recordsDiff(t, ts, "dev", recB, recBack, "Deployment", "podinfo"); status != "changed" ||
		!strings.Contains(diff, image+":6.14.1") || !strings.Contains(diff, image+":6.14.0") {
		t.Errorf("diff %s..%s of Deployment podinfo = %s %q, want changed from 6.14.1 to 6.14.0", recB, recBack, status, diff)
	}

	// A ref against live, as a pull request's diff is made: B's commit
	// renders the Deployment at 6.14.1 against live 6.14.0; main renders
	// what is live (no change: the chart's objects, namespace-less in the
	// chart, compare in the environment's namespace).
	if status, diff := recordsDiff(t, ts, "dev", "live", "ref:"+commitB, "Deployment", "podinfo"); status != "changed" ||
		!strings.Contains(diff, image+":6.14.0") || !strings.Contains(diff, image+":6.14.1") {
		t.Errorf("diff live..ref:%s of Deployment podinfo = %s %q, want changed from 6.14.0 to 6.14.1", commitB, status, diff)
	}
	w := ts.get(t, paths.APIEnvDiff("dev", url.Values{"from": {"live"}, "to": {"ref:main"}}), nil)
	var same struct{ Changes bool }
	if err := json.Unmarshal(w.Body.Bytes(), &same); err != nil || w.Code != 200 || same.Changes {
		t.Errorf("diff live..ref:main = %d %s, want no changes", w.Code, w.Body)
	}

	// No chart test ever reached the cluster.
	pods, err := p.Kube.CoreV1().Pods(realNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pod := range pods.Items {
		if _, hook := pod.Annotations["helm.sh/hook"]; hook || strings.Contains(pod.Name, "-test-") {
			t.Errorf("Pod %s (annotations %v) is in %s: chart tests must not be applied", pod.Name, pod.Annotations, realNS)
		}
	}
}
