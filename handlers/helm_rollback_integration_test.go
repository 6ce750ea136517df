package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/release"
	"github.com/hanzoai/deploy-web/web/paths"
)

// chartAppFiles is a repository whose chart charts/api renders App api
// from image.repository and image.tag; dev and staging each keep the tag
// in their own values file.
func chartAppFiles(devTag, stagingTag string) map[string]string {
	values := func(env, tag string) string {
		return "# " + env + "'s values\nreplicas: 1\nimage:\n  tag: " + tag + " # set by the release pipeline\n"
	}
	return map[string]string{
		"charts/api/Chart.yaml":         "apiVersion: v2\nname: api\nversion: 0.1.0\n",
		"charts/api/values.yaml":        "# every environment's defaults\nimage:\n  repository: ghcr.io/acme/api\n  tag: 0.9.0\nreplicas: 1\n",
		"charts/api/templates/app.yaml": "apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n  replicas: {{ .Values.replicas }}\n",
		"envs/dev/values.yaml":          values("dev", devTag),
		"envs/staging/values.yaml":      values("staging", stagingTag),
		"catalog.json":                  releasesCatalog("2.0.0", "1.0.0", "1.1.0"),
	}
}

// chartEnvs is an environments file of dev (namespace realNS, push
// write-back) and staging rendering the chart folder chart of repo as
// release, each with its own values file envs/ENV/values.yaml, the
// catalog catalog.json, no registry.
func chartEnvs(t *testing.T, repo, chart, release string) *envconfig.Config {
	t.Helper()
	env := func(name, ns, extra string) string {
		return fmt.Sprintf(`  - name: %s
    cluster: {context: test}
    namespace: %s
    source: {repo: %q, ref: main, path: %s, helm: {releaseName: %s, valueFiles: [../../envs/%s/values.yaml]}}
    catalog: catalog.json
    registry: {skip: true}
%s`, name, ns, repo, chart, release, name, extra)
	}
	cfg, err := envconfig.ParseConfig([]byte("environments:\n"+env("dev", realNS, "    writeBack: {mode: push}\n")+env("staging", "staging", "")), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestHelmChartRollbackOnRealCluster: an App rendered from a Helm chart,
// on the real control plane, its repository served by a real git server:
// applied at A (1.0.0), then at B (1.1.0), then rolled back to A through
// the API: one commit changing dev's values file alone (its comments
// kept, the chart's values.yaml and staging's file untouched), applied,
// the live Deployment back at A; the diff of the two apply records shows
// the App's image from B to A.
func TestHelmChartRollbackOnRealCluster(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{realNS, "deploy-web"}, Operator: true})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.DiscardHandler)
	view, err := kubeview.New(p.Kube, p.Dyn, log, kubeview.Options{Namespaces: []string{realNS}, ProbeInterval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	view.Start(ctx)
	rc := &realCluster{name: "in-cluster", p: p, view: view}

	srv := gitservertest.New(t, chartAppFiles("1.0.0", "1.0.0"), gitservertest.Options{})
	cfg := chartEnvs(t, srv.URL, "charts/api", "api")
	rt := newRealTrail(t, p)
	index := envsource.New(cfg, log, time.Hour)
	runner := envrun.New(cfg, log, envrun.Options{RestConfig: p.Cluster.Config, Events: p.Kube.CoreV1(), ReportsDir: t.TempDir(),
		Store: planstore.New(p.Kube.CoreV1(), "deploy-web", 50), Index: index, ApplyTimeout: 2 * time.Minute, Record: rt.record(t)})
	rel := release.New(p.Dyn, p.Kube.CoreV1(), appcr.Resource, view.HistoryImages, log).InCluster("in-cluster")
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Clusters = []Cluster{{Name: "in-cluster", View: view, Release: rel}}
		o.Environments, o.Desired, o.RecordReader = runner, index, rt.store
	})

	deployApplied(t, runner, "dev", envrun.TriggerSync)
	rc.waitSynced(t, "api", "1.0.0")
	srv.RemoteCommitFiles(map[string]string{"envs/dev/values.yaml": chartAppFiles("1.1.0", "")["envs/dev/values.yaml"]}, "dev: api 1.1.0")
	deployApplied(t, runner, "dev", envrun.TriggerAutoSync)
	rc.waitSynced(t, "api", "1.1.0")
	recB := rt.lastID()
	if err := index.Refresh(ctx, "dev"); err != nil {
		t.Fatal(err)
	}

	before := srv.Head("main")
	w := ts.do(t, request{method: "POST", target: paths.APIRollback("api"), admin: true, header: jsonHeader,
		body: `{"version": "1.0.0", "reason": "1.1.0 fails its checks"}`})
	var res rollbackResponse
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || w.Code != 200 || res.Commit == nil || res.Run == nil {
		t.Fatalf("rollback to 1.0.0 = %d %s, want a commit and its run", w.Code, w.Body)
	}
	if res.Commit.SHA != srv.Head("main") || gitservertest.Run(t, srv.Bare, "rev-parse", res.Commit.SHA+"^") != before {
		t.Errorf("commit %s: want the branch head %s, on %s", res.Commit.SHA, srv.Head("main"), before)
	}
	if got := gitservertest.Run(t, srv.Bare, "show", "--name-only", "--format=", res.Commit.SHA); got != "envs/dev/values.yaml" {
		t.Errorf("the commit changes %q, want envs/dev/values.yaml alone (never the chart's values.yaml)", got)
	}
	if got, want := gitservertest.Run(t, srv.Bare, "show", "main:envs/dev/values.yaml"), strings.TrimSpace(chartAppFiles("1.0.0", "")["envs/dev/values.yaml"]); got != want {
		t.Errorf("envs/dev/values.yaml at main = %q, want %q (the tag changed, comments kept)", got, want)
	}
	s := waitEnvRun(t, runner, res.Run.ID)
	if s.Report == nil || s.Report.Status() != deployplan.StatusApplied || s.Report.DeployApply.Source.Commit != res.Commit.SHA {
		t.Fatalf("the rollback's run = %v, err %v, refusal %q; want %s applied", s.Report, s.Err, s.Refusal, res.Commit.SHA)
	}
	rc.waitSynced(t, "api", "1.0.0")
	dep, err := p.Kube.AppsV1().Deployments(realNS).Get(ctx, "api", metav1.GetOptions{})
	if err != nil || len(dep.Spec.Template.Spec.Containers) != 1 || dep.Spec.Template.Spec.Containers[0].Image != "ghcr.io/acme/api:1.0.0" {
		t.Fatalf("live Deployment api = %v (%v), want its container at ghcr.io/acme/api:1.0.0", dep, err)
	}
	recA := rt.lastID()

	// The diff of the two apply records: the App's image from B to A.
	if status, diff := recordsDiff(t, ts, "dev", recB, recA, "App", "api"); status != "changed" ||
		!strings.Contains(diff, "ghcr.io/acme/api:1.1.0") || !strings.Contains(diff, "ghcr.io/acme/api:1.0.0") {
		t.Errorf("diff %s..%s of App api = %s %q, want changed from 1.1.0 to 1.0.0", recB, recA, status, diff)
	}
}
