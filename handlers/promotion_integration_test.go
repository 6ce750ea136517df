package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/timeline"
	"github.com/hanzoai/deploy-web/web/paths"
)

// TestPromotionOnRealCluster: on the real control plane, with the
// manifests served by the git binary's smart HTTP on loopback, dev runs
// api 1.1.0 and staging 1.0.0 (applied by the engine). The matrix's cells
// are the live Apps' versions; a promotion younger than the soak is
// refused (the clock seam moves, nothing sleeps), a viewer is refused,
// a deployer's promotion commits staging's overlay on main and plans
// staging at that commit; a promotion into protected prod is a request
// that its requester cannot approve and another approver's approval
// writes as a review branch, main untouched, whose commit message names
// the requester and the approver.
func TestPromotionOnRealCluster(t *testing.T) {
	const devNS, stagingNS, prodNS = "promo-dev", "promo-staging", "promo-prod"
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{devNS, stagingNS, prodNS, "deploy-web"}, Operator: true})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.DiscardHandler)
	view, err := kubeview.New(p.Kube, p.Dyn, log, kubeview.Options{Namespaces: []string{devNS, stagingNS, prodNS}, ProbeInterval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	view.Start(ctx)

	overlay := func(ns, tag string) string {
		return "resources: [../../base]\nnamespace: " + ns + "\nconfigurations: [app-image.yaml]\nimages:\n  - {name: ghcr.io/acme/api, newTag: \"" + tag + "\"}\n"
	}
	const appImage = "images:\n  - path: spec/image\n    kind: App\n"
	srv := gitservertest.New(t, map[string]string{
		"base/kustomization.yaml":             "resources: [api.yaml]\n",
		"base/api.yaml":                       gitopsApp("api", "1.0.0", 1),
		"overlays/dev/kustomization.yaml":     overlay(devNS, "1.1.0"),
		"overlays/dev/app-image.yaml":         appImage,
		"overlays/staging/kustomization.yaml": overlay(stagingNS, "1.0.0"),
		"overlays/staging/app-image.yaml":     appImage,
		"overlays/prod/kustomization.yaml":    overlay(prodNS, "0.9.0"),
		"overlays/prod/app-image.yaml":        appImage,
	}, gitservertest.Options{})
	dir := t.TempDir()
	setCatalog := func(env, tag string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, env+".json"), []byte(gitopsCatalog(tag, "2.0.0")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setCatalog("dev", "1.1.0")
	setCatalog("staging", "1.0.0")
	setCatalog("prod", "1.0.0")
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(`environments:
  - name: dev
    cluster: {context: test}
    namespace: %[2]s
    source: {repo: %[1]q, ref: main, path: overlays/dev}
    catalog: %[5]s/dev.json
    registry: {skip: true}
  - name: staging
    cluster: {context: test}
    namespace: %[3]s
    source: {repo: %[1]q, ref: main, path: overlays/staging}
    catalog: %[5]s/staging.json
    registry: {skip: true}
    writeBack: {mode: push}
    promotion: {after: dev}
  - name: prod
    cluster: {context: test}
    namespace: %[4]s
    protected: true
    source: {repo: %[1]q, ref: main, path: overlays/prod}
    catalog: %[5]s/prod.json
    registry: {skip: true}
    writeBack: {mode: branch}
    promotion: {after: staging, soak: 1m}
`, srv.URL, devNS, stagingNS, prodNS, dir)), dir)
	if err != nil {
		t.Fatal(err)
	}
	index := envsource.New(cfg, log, time.Hour)
	runner := envrun.New(cfg, log, envrun.Options{RestConfig: p.Cluster.Config, Events: p.Kube.CoreV1(), ReportsDir: t.TempDir(),
		Store: planstore.New(p.Kube.CoreV1(), "deploy-web", 50), Index: index, ApplyTimeout: 2 * time.Minute})
	policy, err := roles.Parse("roles.yaml", []byte(promoteRoles), roles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The clock seam: the gates read Options.Now, moved by the test.
	var clockMu sync.Mutex
	clock := time.Now()
	setClock := func(t time.Time) { clockMu.Lock(); clock = t; clockMu.Unlock() }
	// The timeline, kept in the cluster's ConfigMaps on the same clock;
	// the test observes the Apps from the cache as deploy-web's feed
	// does (timeline/clusterfeed.Apps).
	tl, err := timeline.New(p.Kube.CoreV1(), timeline.Options{Namespace: "deploy-web", IsLeader: func() bool { return true },
		Now: func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = tl.Run(ctx) }()
	observe := func(ns string) {
		t.Helper()
		row, ok := view.Row(ns, "api")
		if !ok {
			t.Fatalf("%s/api is not in the cache", ns)
		}
		tl.Observe(timeline.App{Cluster: "in-cluster", Namespace: ns, Name: "api"},
			timeline.State{Health: string(row.Health.Status), Sync: string(row.Sync.Status), Drifted: row.Sync.Drifted, Revision: row.Version})
	}
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Clusters = []Cluster{{Name: "in-cluster", View: view}}
		o.Timeline = tl
		o.Environments = runner
		o.Desired = index
		o.Promotions = promotion.NewStore(p.Kube.CoreV1(), "deploy-web", signtest.Keys())
		o.Roles = policy
		o.Now = func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }
	})
	f := &promoteFixture{ts: ts}

	waitRun := func(id string) envrun.Snapshot { t.Helper(); return waitEnvRun(t, runner, id) }
	waitHealthy := func(ns, tag string) kubeview.AppRow {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for {
			row, ok := view.Row(ns, "api")
			if ok && row.Version == tag && row.Health.Status == objrules.HealthHealthy && !row.LastDeployed.IsZero() {
				return row
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s/api never Healthy at %s: %+v", ns, tag, row)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for _, env := range []string{"dev", "staging"} {
		deployApplied(t, runner, env, envrun.TriggerSync)
	}
	devRow := waitHealthy(devNS, "1.1.0")
	waitHealthy(stagingNS, "1.0.0")
	observe(devNS)
	observe(stagingNS)

	// The matrix's cells are the live Apps.
	f.as("vera", "viewers")
	w := ts.get(t, paths.APIEnvironments(map[string][]string{"view": {"matrix"}}), nil)
	var m promotion.Matrix
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil || w.Code != 200 {
		t.Fatalf("GET matrix = %d %s", w.Code, w.Body)
	}
	for _, env := range []struct{ name, ns string }{{"dev", devNS}, {"staging", stagingNS}} {
		live, err := p.Dyn.Resource(appcr.Resource).Namespace(env.ns).Get(ctx, "api", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		image, _, _ := unstructured.NestedString(live.Object, "spec", "image")
		cell, ok := m.Cell("api", env.name)
		if !ok || cell.Image != image || cell.Version != appcr.ParseImageRef(image).Tag || cell.Health.Status != objrules.HealthHealthy {
			t.Errorf("matrix cell (api, %s) = %+v, want the live image %s, Healthy", env.name, cell, image)
		}
	}
	if c, _ := m.Cell("api", "staging"); !c.Differs || c.PrevVersion != "1.1.0" {
		t.Errorf("staging's api cell = %+v, want marked: dev runs 1.1.0", c)
	}
	if c, _ := m.Cell("api", "prod"); c.Present {
		t.Errorf("prod's api cell = %+v, want absent (prod is never applied)", c)
	}

	// A viewer may not promote.
	if code, _, body := f.post(t, paths.APIEnvPromotions("staging"), `{"from": "dev", "app": "api"}`); code != 403 {
		t.Errorf("a viewer's promotion = %d %s, want 403", code, body)
	}
	// Younger than the soak: refused, nothing pushed.
	f.as("dee", "deployers")
	head := srv.Head("main")
	setClock(devRow.LastDeployed.Add(time.Minute)) // dev's api, the source, has run 1m of its 10m soak
	if code, _, body := f.post(t, paths.APIEnvPromotions("staging"), `{"from": "dev", "app": "api"}`); code != 422 || !strings.Contains(body, "soak") {
		t.Errorf("a promotion younger than the soak = %d %s, want 422 naming the soak", code, body)
	}
	if srv.Head("main") != head {
		t.Fatalf("a refused promotion moved main")
	}
	// Deployed long enough ago, but Degraded two minutes ago for 40s (the
	// timeline's record): refused, saying when it is promotable.
	setClock(time.Now().Add(11 * time.Minute))
	degradedAt := clock.Add(-2 * time.Minute)
	devApp := timeline.App{Cluster: "in-cluster", Namespace: devNS, Name: "api"}
	tl.Record(timeline.Entry{Time: degradedAt, App: devApp, Kind: timeline.KindHealth, From: "Healthy", To: "Degraded", Revision: "1.1.0"},
		timeline.Entry{Time: degradedAt.Add(40 * time.Second), App: devApp, Kind: timeline.KindHealth, From: "Degraded", To: "Healthy", Revision: "1.1.0"})
	if code, _, body := f.post(t, paths.APIEnvPromotions("staging"), `{"from": "dev", "app": "api"}`); code != 422 || !strings.Contains(body, "was Degraded in dev at") || !strings.Contains(body, "for 40s") {
		t.Errorf("a promotion of a source Degraded inside the soak = %d %s, want 422 naming the Degraded band", code, body)
	}
	if srv.Head("main") != head {
		t.Fatalf("a refused promotion moved main")
	}
	// Soaked: the band is before the window; committed on main and
	// planned at that commit.
	setClock(clock.Add(10 * time.Minute))
	setCatalog("staging", "1.1.0")
	code, out, body := f.post(t, paths.APIEnvPromotions("staging"), `{"from": "dev", "app": "api", "reason": "ship 1.1.0"}`)
	if code != 200 || out.Commit == nil || out.Run == nil {
		t.Fatalf("promotion into staging = %d %s, want 200, a commit and a run", code, body)
	}
	if got := srv.Head("main"); got != out.Commit.SHA {
		t.Errorf("main = %s, want the promotion's commit %s", got, out.Commit.SHA)
	}
	if got := gitservertest.Run(t, srv.Bare, "show", "main:overlays/staging/kustomization.yaml"); !strings.Contains(got, `newTag: "1.1.0"`) {
		t.Errorf("staging's overlay on main:\n%s\nwant newTag 1.1.0", got)
	}
	if got := gitservertest.Run(t, srv.Bare, "diff", "--name-only", head, out.Commit.SHA); got != "overlays/staging/kustomization.yaml" {
		t.Errorf("the promotion changed %q, want staging's overlay alone", got)
	}
	snap := waitRun(out.Run.ID)
	if snap.Report == nil || snap.Report.DeployApply.Mode != "dry-run" || snap.Report.DeployApply.Source.Commit != out.Commit.SHA {
		t.Errorf("the promotion's run: report %+v, err %v, refusal %q; want a plan of commit %s", snap.Report, snap.Err, snap.Refusal, out.Commit.SHA)
	}

	// Protected prod: a request, a second person, a review branch.
	code, out, body = f.post(t, paths.APIEnvPromotions("prod"), `{"from": "staging", "app": "api"}`)
	if code != 202 || out.Request == nil {
		t.Fatalf("promotion into prod = %d %s, want 202 and a request", code, body)
	}
	id := out.Request.ID
	f.ts.auth.id = &auth.Identity{Subject: "dee", Email: "dee@example.com", Groups: auth.NewGroupList([]string{"approvers"}), Expires: time.Now().Add(time.Hour)}
	if code, _, body := f.post(t, paths.APIEnvPromotionApprove("prod", id), ``); code != 403 {
		t.Errorf("approval by the requester = %d %s, want 403", code, body)
	}
	mainBefore := srv.Head("main")
	f.as("abe", "approvers")
	code, out, body = f.post(t, paths.APIEnvPromotionApprove("prod", id), ``)
	if code != 200 || out.Commit == nil || !strings.HasPrefix(out.Commit.Branch, "deploy-web/promote-api-1.0.0") {
		t.Fatalf("approval = %d %s, want 200 and a review branch", code, body)
	}
	if got := srv.Head(out.Commit.Branch); got != out.Commit.SHA {
		t.Errorf("branch %s = %s, want %s", out.Commit.Branch, got, out.Commit.SHA)
	}
	if got := gitservertest.Run(t, srv.Bare, "show", out.Commit.Branch+":overlays/prod/kustomization.yaml"); !strings.Contains(got, `newTag: "1.0.0"`) {
		t.Errorf("prod's overlay on the review branch:\n%s\nwant newTag 1.0.0", got)
	}
	// The two people of the two-person rule are both in the commit.
	msg := gitservertest.Run(t, srv.Bare, "log", "-1", "--format=%B", out.Commit.SHA)
	for _, want := range []string{"Requested by dee@example.com (sub dee) in request " + id + "; approved by abe@example.com (sub abe)."} {
		if !strings.Contains(msg, want) {
			t.Errorf("the approved promotion's commit message =\n%s\nwant it to say %q", msg, want)
		}
	}
	if srv.Head("main") != mainBefore {
		t.Errorf("an approval into protected prod moved main")
	}
	if out.Run != nil {
		t.Errorf("an approval into protected prod started run %+v", out.Run)
	}
}
