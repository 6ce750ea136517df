package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/release"
	"github.com/hanzoai/deploy-web/roles"
)

// reachRoles: a superadmin group, and a deployer of App api alone.
const reachRoles = `bindings:
  - role: superadmin
    groups: [admins]
  - role: deployer
    groups: [api-deployers]
    scope: {apps: [api]}
`

// TestWriteReachOnRealCluster: issue #35 points 1 and 2 on the real
// control plane, with the manifests served by the git binary's smart
// HTTP. dev and staging render one shared base/ through overlays of their
// own, qa renders base/ itself; all three are applied.
//
//   - A rollback in dev commits only under overlays/dev, dev's App
//     follows, and staging's objects stay exactly as they were (also after
//     staging is applied at the new head).
//   - A rollback in qa, where no override is possible (its folder is the
//     shared base), is refused with 422 naming staging; nothing is pushed
//     or applied.
//   - An App-scoped deployer's rollback of api applies api's objects only
//     (worker's pending change in the same commit range stays unapplied),
//     and a commit-mode catalog move that would also move worker is 403
//     naming it, nothing pushed.
func TestWriteReachOnRealCluster(t *testing.T) {
	const devNS, stagingNS, qaNS = "reach-dev", "reach-staging", "reach-qa"
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{devNS, stagingNS, qaNS, "deploy-web"}, Operator: true})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.DiscardHandler)
	view, err := kubeview.New(p.Kube, p.Dyn, log, kubeview.Options{Namespaces: []string{devNS, stagingNS, qaNS}, ProbeInterval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	view.Start(ctx)

	overlay := func(ns string) string { return "resources: [../../base]\nnamespace: " + ns + "\n" }
	srv := gitservertest.New(t, map[string]string{
		"base/kustomization.yaml":             "resources: [api.yaml, worker.yaml]\n",
		"base/api.yaml":                       gitopsApp("api", "1.0.0", 1),
		"base/worker.yaml":                    gitopsApp("worker", "2.0.0", 1),
		"overlays/dev/kustomization.yaml":     overlay(devNS),
		"overlays/staging/kustomization.yaml": overlay(stagingNS),
		"catalog.json":                        releasesCatalog("2.0.0", "1.0.0", "1.1.0"),
	}, gitservertest.Options{})
	dir := t.TempDir()
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(`environments:
  - name: dev
    cluster: {context: test}
    namespace: %[2]s
    source: {repo: %[1]q, ref: main, path: overlays/dev}
    catalog: catalog.json
    registry: {skip: true}
    writeBack: {mode: push}
  - name: staging
    cluster: {context: test}
    namespace: %[3]s
    source: {repo: %[1]q, ref: main, path: overlays/staging}
    catalog: catalog.json
    registry: {skip: true}
  - name: qa
    cluster: {context: test}
    namespace: %[4]s
    source: {repo: %[1]q, ref: main, path: base}
    catalog: catalog.json
    registry: {skip: true}
    writeBack: {mode: push}
`, srv.URL, devNS, stagingNS, qaNS)), dir)
	if err != nil {
		t.Fatal(err)
	}
	index := envsource.New(cfg, log, time.Hour)
	runner := envrun.New(cfg, log, envrun.Options{RestConfig: p.Cluster.Config, Events: p.Kube.CoreV1(), ReportsDir: t.TempDir(),
		Store: planstore.New(p.Kube.CoreV1(), "deploy-web", 50), Index: index, ApplyTimeout: 2 * time.Minute})
	policy, err := roles.Parse("roles.yaml", []byte(reachRoles), roles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rel := release.New(p.Dyn, p.Kube.CoreV1(), appcr.Resource, view.HistoryImages, log).InCluster("in-cluster")
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Clusters = []Cluster{{Name: "in-cluster", View: view, Release: rel}}
		o.Environments = runner
		o.Desired = index
		o.Roles = policy
	})
	as := func(sub string, groups ...string) {
		ts.auth.id = &auth.Identity{Subject: sub, Email: sub + "@example.com", Name: sub, Groups: auth.NewGroupList(groups), Expires: time.Now().Add(time.Hour)}
	}

	waitRun := func(id string) envrun.Snapshot { t.Helper(); return waitEnvRun(t, runner, id) }
	deploy := func(env string) { t.Helper(); deployApplied(t, runner, env, envrun.TriggerSync) }
	waitApp := func(ns, app, tag string) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			row, ok := view.Row(ns, app)
			if ok && row.Version == tag && row.Sync.Status == kubeview.SyncSynced && row.RunningSummary() == tag+" (1)" {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s/%s never Synced at %s: %+v", ns, app, tag, row)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	live := func(ns, name string) *unstructured.Unstructured {
		t.Helper()
		u, err := p.Dyn.Resource(appcr.Resource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	// same fails unless ns/name has the generation and spec of before.
	same := func(before *unstructured.Unstructured, why string) {
		t.Helper()
		now := live(before.GetNamespace(), before.GetName())
		if now.GetGeneration() != before.GetGeneration() || !equality.Semantic.DeepEqual(now.Object["spec"], before.Object["spec"]) {
			t.Errorf("%s: %s/%s = generation %d spec %v, want generation %d spec %v (untouched)", why, before.GetNamespace(), before.GetName(),
				now.GetGeneration(), now.Object["spec"], before.GetGeneration(), before.Object["spec"])
		}
	}
	rollback := func(ns, version string) (int, string, rollbackResponse) {
		t.Helper()
		w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback?namespace=" + ns, admin: true, header: jsonHeader,
			body: `{"version": "` + version + `", "reason": "errors since the last release"}`})
		var res rollbackResponse
		if w.Code == http.StatusOK {
			if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
				t.Fatal(err)
			}
		}
		return w.Code, w.Body.String(), res
	}
	changed := func(sha string) string {
		t.Helper()
		return gitservertest.Run(t, srv.Bare, "show", "--name-only", "--format=", sha)
	}

	// Every environment runs 1.0.0, then 1.1.0: api's history holds both.
	for _, env := range []string{"dev", "staging", "qa"} {
		deploy(env)
	}
	for _, ns := range []string{devNS, stagingNS, qaNS} {
		waitApp(ns, "api", "1.0.0")
	}
	srv.RemoteCommitFiles(map[string]string{"base/api.yaml": gitopsApp("api", "1.1.0", 1)}, "api 1.1.0")
	for _, env := range []string{"dev", "staging", "qa"} {
		deploy(env)
	}
	for _, ns := range []string{devNS, stagingNS, qaNS} {
		waitApp(ns, "api", "1.1.0")
	}
	for _, env := range []string{"dev", "qa"} {
		if err := index.Refresh(ctx, env); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("a rollback in dev stays in dev", func(t *testing.T) {
		as("ada", "admins")
		stagingAPI, stagingWorker := live(stagingNS, "api"), live(stagingNS, "worker")
		code, body, res := rollback(devNS, "1.0.0")
		if code != http.StatusOK || res.Commit == nil || res.Run == nil {
			t.Fatalf("rollback in dev = %d %s, want a commit and its run", code, body)
		}
		if got := changed(res.Commit.SHA); got != "overlays/dev/kustomization.yaml" {
			t.Errorf("the commit changes %q, want overlays/dev/kustomization.yaml alone", got)
		}
		if got := gitservertest.Run(t, srv.Bare, "show", "main:base/api.yaml"); !strings.Contains(got, "ghcr.io/acme/api:1.1.0") {
			t.Errorf("base/api.yaml at main = %q, want it untouched at 1.1.0", got)
		}
		s := waitRun(res.Run.ID)
		if s.Report == nil || s.Report.Status() != deployplan.StatusApplied || s.Report.DeployApply.Source.Commit != res.Commit.SHA {
			t.Fatalf("the rollback's run = %v, err %v, refusal %q; want %s applied", s.Report, s.Err, s.Refusal, res.Commit.SHA)
		}
		waitApp(devNS, "api", "1.0.0")
		same(stagingAPI, "after dev's rollback")
		same(stagingWorker, "after dev's rollback")
		// staging applied at the new head renders what it did before.
		deploy("staging")
		same(stagingAPI, "after staging's apply of the rollback's commit")
		same(stagingWorker, "after staging's apply of the rollback's commit")
	})

	t.Run("no override possible is refused naming staging", func(t *testing.T) {
		as("ada", "admins")
		head := srv.Head("main")
		qaAPI := live(qaNS, "api")
		code, body, _ := rollback(qaNS, "1.0.0")
		if code != http.StatusUnprocessableEntity || !strings.Contains(body, "ReachesOtherEnvironments") || !strings.Contains(body, "staging (hanzo.ai/App "+stagingNS+"/api)") {
			t.Errorf("rollback in qa (renders base/) = %d %s; want 422 ReachesOtherEnvironments naming staging's api", code, body)
		}
		if srv.Head("main") != head {
			t.Errorf("a refused rollback pushed: main %s, was %s", srv.Head("main"), head)
		}
		same(qaAPI, "after a refused rollback")
	})

	t.Run("an App-scoped deployer reaches its App only", func(t *testing.T) {
		// worker's change is pending in dev when api's deployer rolls back.
		srv.RemoteCommitFiles(map[string]string{"base/worker.yaml": gitopsApp("worker", "2.0.0", 3)}, "worker: 3 replicas")
		if err := index.Refresh(ctx, "dev"); err != nil {
			t.Fatal(err)
		}
		devWorker := live(devNS, "worker")
		as("dee", "api-deployers")
		code, body, res := rollback(devNS, "1.1.0")
		if code != http.StatusOK || res.Commit == nil || res.Run == nil {
			t.Fatalf("rollback by api's deployer = %d %s, want a commit and its run", code, body)
		}
		if got := changed(res.Commit.SHA); got != "overlays/dev/kustomization.yaml" {
			t.Errorf("the commit changes %q, want overlays/dev/kustomization.yaml alone", got)
		}
		s := waitRun(res.Run.ID)
		if s.Report == nil || s.Report.Status() != deployplan.StatusApplied {
			t.Fatalf("the rollback's run = %v, err %v, refusal %q; want applied", s.Report, s.Err, s.Refusal)
		}
		waitApp(devNS, "api", "1.1.0")
		same(devWorker, "worker after api's deployer's rollback")
	})

	t.Run("an App-scoped deployer's catalog move moves no other App", func(t *testing.T) {
		// The catalog goes to commit mode: release A, then C, each applied
		// to dev; a rollback of api to A's tag would move worker too.
		at := func(commit string) map[string]string {
			return map[string]string{
				"base/api.yaml":                   gitopsApp("api", commit[:12], 1),
				"base/worker.yaml":                gitopsApp("worker", commit[:12], 1),
				"overlays/dev/kustomization.yaml": overlay(devNS),
				"catalog.json":                    strings.ReplaceAll(commitModeCatalog(commit, "api", "worker"), "reg.example/acme/", "ghcr.io/acme/"),
			}
		}
		srv.RemoteCommitFiles(at(commitA), "release A")
		deploy("dev")
		waitApp(devNS, "api", commitA[:12])
		srv.RemoteCommitFiles(at(commitC), "release C")
		deploy("dev")
		waitApp(devNS, "api", commitC[:12])
		waitApp(devNS, "worker", commitC[:12])
		if err := index.Refresh(ctx, "dev"); err != nil {
			t.Fatal(err)
		}
		head := srv.Head("main")
		devAPI, devWorker := live(devNS, "api"), live(devNS, "worker")
		as("dee", "api-deployers")
		code, body, _ := rollback(devNS, commitA[:12])
		if code != http.StatusForbidden || !strings.Contains(body, devNS+"/worker") {
			t.Errorf("catalog move by api's deployer = %d %s; want 403 naming %s/worker", code, body, devNS)
		}
		if srv.Head("main") != head {
			t.Errorf("a refused catalog move pushed: main %s, was %s", srv.Head("main"), head)
		}
		same(devAPI, "api after a refused catalog move")
		same(devWorker, "worker after a refused catalog move")
	})
}
