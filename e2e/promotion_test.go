package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hanzoai/deploy-web/demo"
)

// cellSel is the matrix cell of app in environment env.
func cellSel(app, env string) string {
	return `[data-testid=matrix-row][data-app=` + app + `] [data-testid=matrix-cell][data-env=` + env + `]`
}

// cellVersion is the version the matrix shows for app in env ("" when
// the cell is absent).
func cellVersion(t *testing.T, ctx context.Context, app, env string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector(`+jsString(cellSel(app, env))+`) || {dataset: {}}).dataset.version || ''`))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// reloadUntil opens path again until sel is on the page: the promotion
// dialog and the matrix are drawn by the server, and what they wait for
// (an auto-sync, the soak) happens on the server.
func reloadUntil(t *testing.T, ctx context.Context, path, sel string, ok func() bool, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		navigate(t, ctx, path, sel)
		if ok() {
			return
		}
		if time.Now().After(deadline) {
			screenshot(t, ctx, "reload-timeout")
			t.Fatalf("%s: not as expected after %s", path, timeout)
		}
		time.Sleep(2 * time.Second)
	}
}

// openPromote clicks "Promote to target" in source's cell of app on the
// matrix and returns the dialog's path.
func openPromote(t *testing.T, ctx context.Context, app, source, target string) string {
	t.Helper()
	navigate(t, ctx, "/environments", `[data-testid=matrix-table]`)
	promote := cellSel(app, source) + ` [data-testid=matrix-promote][data-target=` + target + `]`
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(promote)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=promote-apps], [data-testid=promote-error]`))); err != nil {
		screenshot(t, ctx, "no-promote-link")
		t.Fatalf("open the promotion of %s from %s to %s: %v", app, source, target, err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if errs := texts(t, ctx, `[data-testid=promote-error]`); len(errs) != 0 {
		t.Fatalf("promotion dialog %s: %q", loc, errs)
	}
	return strings.TrimPrefix(loc, strings.TrimSuffix(demoEnv.state.URL, "/"))
}

// gateStates maps each gate of the dialog to its state.
func gateStates(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](`Object.fromEntries(Array.from(document.querySelectorAll('[data-testid=gate]')).map(g => [g.dataset.gate, g.dataset.state]))`))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestPromotionInBrowser walks the demo's promotion chain dev -> staging
// -> prod in Chromium: the matrix shows three columns of running versions,
// staging one version behind dev and prod (its first commit, installed as
// the demo starts) behind staging, at 1440x900 and 390x844; the Promote
// dialog from staging into protected prod shows its gates, makes a
// request its requester cannot approve, and the approver login approves
// it into a review branch (main untouched) that moves prod from
// ProdVersion to StagingVersion and adds staging's release to prod's
// catalog; the dialog from dev's web cell into staging shows its gates,
// the metrics check among them passed, and the promotion commits dev's
// version into staging's values file of web and dev's release into
// staging's catalog, in one commit on main, and plans staging: ready.
//
// dev's web (the chart App) is the App promoted from dev:
// TestGitRollbackInBrowser (which runs first on the shared demo) rolls
// dev's api back to DevPreviousVersion, staging's release, leaving
// nothing to promote, and dev's worker fails staging's error-rate check
// (TestPromotionRefusedByCheck).
func TestPromotionInBrowser(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid=app-row]`))); err != nil {
		screenshot(t, ctx, "no-fleet")
		t.Fatalf("admin: fleet rows not shown: %v", err)
	}
	clone := filepath.Join(demoEnv.tmp, "demo", "manifests")

	// The matrix: auto-sync applies dev's release and staging at start;
	// prod runs its first commit, installed as the demo started.
	reloadUntil(t, ctx, "/environments", `[data-testid=matrix-table]`, func() bool {
		return cellVersion(t, ctx, "worker", demo.DevEnvironment) == demo.DevVersion && cellVersion(t, ctx, "api", demo.StagingEnvironment) == demo.StagingVersion &&
			cellVersion(t, ctx, "worker", demo.StagingEnvironment) == demo.StagingVersion
	}, 3*time.Minute)
	for _, app := range []string{"api", "worker"} {
		if v := cellVersion(t, ctx, app, demo.ProdEnvironment); v != demo.ProdVersion {
			t.Errorf("prod's %s cell shows version %q, want %s (prod's first commit)", app, v, demo.ProdVersion)
		}
	}
	if cols := texts(t, ctx, `[data-testid=matrix-col]`); len(cols) != 3 {
		t.Errorf("matrix columns = %q, want dev, staging, prod", cols)
	}
	envs, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[data-testid=matrix-col]')).map(c => c.dataset.env)`))
	if strings.Join(envs, ",") != "dev,staging,prod" {
		t.Errorf("matrix column order = %q, want dev,staging,prod", envs)
	}
	marks := texts(t, ctx, cellSel("worker", demo.StagingEnvironment)+` [data-testid=matrix-mark]`)
	if len(marks) == 0 || !strings.Contains(marks[0], "dev runs "+demo.DevVersion) {
		t.Errorf("staging's worker cell marks %q, want \"dev runs %s\" (one version behind)", marks, demo.DevVersion)
	}
	marks = texts(t, ctx, cellSel("api", demo.ProdEnvironment)+` [data-testid=matrix-mark]`)
	if n := len(texts(t, ctx, cellSel("api", demo.ProdEnvironment)+` [data-testid=matrix-absent]`)); n != 0 || len(marks) == 0 || !strings.Contains(marks[0], "staging runs "+demo.StagingVersion) {
		t.Errorf("prod's api cell: %d \"not deployed\", marks %q; want deployed, \"staging runs %s\"", n, marks, demo.StagingVersion)
	}
	for _, size := range screenSizes() {
		emulateScreen(t, ctx, size)
		screenshot(t, ctx, "matrix-"+size.name)
		if size.phone {
			checkNoSideScroll(t, ctx, "matrix")
		}
	}
	emulateScreen(t, ctx, screenSizes()[0])

	// staging -> prod: prod is protected, so the dialog's second-person
	// gate is pending and the button makes a request. The soak is the
	// demo's 30s: the dialog is opened again until it passed.
	prodPath := openPromote(t, ctx, "api", demo.StagingEnvironment, demo.ProdEnvironment)
	reloadUntil(t, ctx, prodPath, `[data-testid=promote-form]`, func() bool {
		return gateStates(t, ctx)["source-soaked"] == "passed"
	}, 3*time.Minute)
	gates := gateStates(t, ctx)
	for id, want := range map[string]string{"source-soaked": "passed", "promoter-role": "passed", "second-person": "pending"} {
		if gates[id] != want {
			t.Errorf("prod dialog: gate %s = %q, want %q (all: %v)", id, gates[id], want, gates)
		}
	}
	for _, size := range screenSizes() {
		emulateScreen(t, ctx, size)
		screenshot(t, ctx, "promote-prod-"+size.name)
	}
	emulateScreen(t, ctx, screenSizes()[0])
	mainBefore := gitIn(t, clone, "ls-remote", "origin", "refs/heads/"+demo.ManifestBranch)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=promote-button]`))); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, ctx, `[data-testid=promote-result][data-result=requested]`, 30*time.Second)
	reqID, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=promote-request][data-state=pending]').dataset.id`))
	if err != nil || reqID == "" {
		t.Fatalf("no pending request listed after the request: %q, %v", reqID, err)
	}
	reqRow := `[data-testid=promote-request][data-id="` + reqID + `"]`
	if n := len(texts(t, ctx, reqRow+` [data-testid=approve-button]`)); n != 0 {
		t.Errorf("the requester is offered %d Approve button(s), want none", n)
	}
	if n := len(texts(t, ctx, reqRow+` [data-testid=not-yours]`)); n != 1 {
		t.Errorf("the requester's request says \"not yours\" %d times, want once", n)
	}
	screenshot(t, ctx, "requested")

	// The approver approves: a review branch, main untouched.
	actx := browser(t)
	auser, apass := demoEnv.user(t, "approver")
	login(t, actx, auser, apass)
	// The landing fleet loads first: a navigation during its load is
	// aborted (net::ERR_ABORTED).
	if err := chromedp.Do(actx, chromedp.WaitVisible(chromedp.CSS(`[data-testid=app-row]`))); err != nil {
		screenshot(t, actx, "approver-no-fleet")
		t.Fatalf("approver: fleet rows not shown: %v", err)
	}
	navigate(t, actx, prodPath, reqRow)
	if err := chromedp.Do(actx, chromedp.Click(chromedp.CSS(reqRow+` [data-testid=approve-button]`))); err != nil {
		screenshot(t, actx, "no-approve")
		t.Fatal(err)
	}
	// The approval's answer is the dialog again, with what it wrote.
	waitVisible(t, actx, `[data-testid=promote-result][data-result=written]`, time.Minute)
	waitVisible(t, actx, reqRow+`[data-state=approved]`, 30*time.Second)
	for _, size := range screenSizes() {
		emulateScreen(t, actx, size)
		screenshot(t, actx, "approved-"+size.name)
		if size.phone {
			checkNoSideScroll(t, actx, "approved request")
		}
	}
	row := texts(t, actx, reqRow)
	if len(row) != 1 || !strings.Contains(row[0], "deploy-web/") {
		t.Errorf("approved request reads %q, want its review branch", row)
	}
	if after := gitIn(t, clone, "ls-remote", "origin", "refs/heads/"+demo.ManifestBranch); after != mainBefore {
		t.Errorf("main moved on prod's approval: %q, was %q", after, mainBefore)
	}
	branches := gitIn(t, clone, "ls-remote", "origin", "refs/heads/deploy-web/promote-*")
	if branches == "" {
		t.Fatalf("no review branch deploy-web/promote-* in the repository after the approval")
	}
	// The review branch moves prod's api from its first commit to
	// staging's release and adds that release, copied from staging's
	// catalog, to prod's.
	ref := strings.Fields(strings.Split(branches, "\n")[0])[1]
	gitIn(t, clone, "fetch", "-q", "origin", ref)
	if changed := gitIn(t, clone, "show", "--name-only", "--format=", "FETCH_HEAD"); changed != "artifacts/catalog-prod.json\noverlays/prod/kustomization.yaml" {
		t.Errorf("the review commit changed %q, want prod's catalog and overlay", changed)
	}
	if overlay := gitIn(t, clone, "show", "FETCH_HEAD:overlays/prod/kustomization.yaml"); !strings.Contains(overlay, demo.StagingVersion) {
		t.Errorf("prod's overlay on the review branch:\n%s\nwant api at %s", overlay, demo.StagingVersion)
	}
	if cat := gitIn(t, clone, "show", "FETCH_HEAD:artifacts/catalog-prod.json"); !strings.Contains(cat, `"id": "api-`+demo.StagingVersion+`"`) {
		t.Errorf("prod's catalog on the review branch:\n%s\nwant staging's entry api-%s", cat, demo.StagingVersion)
	}

	// dev -> staging, from dev's web cell: a commit on main and a plan.
	// The soak and the error-rate check (once Prometheus has samples of
	// web's release) pass: the dialog is opened again until they did.
	stagingPath := openPromote(t, ctx, demo.ChartApp, demo.DevEnvironment, demo.StagingEnvironment)
	reloadUntil(t, ctx, stagingPath, `[data-testid=promote-form]`, func() bool {
		g := gateStates(t, ctx)
		return g["source-soaked"] == "passed" && g["source-checks"] == "passed"
	}, 3*time.Minute)
	gates = gateStates(t, ctx)
	for id, want := range map[string]string{"source-soaked": "passed", "source-checks": "passed", "promoter-role": "passed", "second-person": "not-configured"} {
		if gates[id] != want {
			t.Errorf("staging dialog: gate %s = %q, want %q (all: %v)", id, gates[id], want, gates)
		}
	}
	if to := texts(t, ctx, `[data-testid=promote-app][data-app=`+demo.ChartApp+`] h2`); len(to) != 1 || !strings.Contains(to[0], demo.StagingVersion) || !strings.Contains(to[0], demo.DevVersion) {
		t.Errorf("staging dialog reads %q, want %s -> %s", to, demo.StagingVersion, demo.DevVersion)
	}
	for _, size := range screenSizes() {
		emulateScreen(t, ctx, size)
		screenshot(t, ctx, "promote-staging-"+size.name)
		if size.phone {
			checkNoSideScroll(t, ctx, "promote dialog")
		}
	}
	emulateScreen(t, ctx, screenSizes()[0])
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=promote-button]`))); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, ctx, `[data-testid=promote-result][data-result=written]`, time.Minute)
	if n := len(texts(t, ctx, `[data-testid=promote-result] [data-testid=run-link]`)); n != 1 {
		t.Errorf("the promotion's result links %d plan(s), want 1", n)
	}
	screenshot(t, ctx, "promoted")
	gitIn(t, clone, "pull", "-q")
	values := gitIn(t, clone, "show", "HEAD:overlays/staging/web-values.yaml")
	if !strings.Contains(values, `tag: "`+demo.DevVersion+`"`) && !strings.Contains(values, "tag: "+demo.DevVersion) {
		t.Errorf("overlays/staging/web-values.yaml after the promotion:\n%s\nwant web at %s", values, demo.DevVersion)
	}
	// staging's catalog did not list dev's release: the same commit adds
	// dev's entry (its digest) to it.
	if changed := gitIn(t, clone, "show", "--name-only", "--format=", "HEAD"); changed != "artifacts/catalog-staging.json\noverlays/staging/web-values.yaml" {
		t.Errorf("the promotion commit changed %q, want staging's catalog and web's values file", changed)
	}
	if cat := gitIn(t, clone, "show", "HEAD:artifacts/catalog-staging.json"); !strings.Contains(cat, `"id": "web-`+demo.DevVersion+`"`) {
		t.Errorf("staging's catalog after the promotion:\n%s\nwant dev's entry web-%s", cat, demo.DevVersion)
	}
	// The run opens: the plan of staging at that commit.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=run-link]`))); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, ctx, `[data-testid=run-done] [data-testid=conclusion-banner]`, 3*time.Minute)
	screenshot(t, ctx, "promotion-plan")
	// staging's catalog lists dev's release now: the plan is ready.
	if n := len(texts(t, ctx, `[data-testid=run-done] [data-testid=conclusion-banner].cb-ready`)); n != 1 {
		screenshot(t, ctx, "promotion-plan-not-ready")
		t.Errorf("the plan of staging after the promotion: %d ready banner(s), want 1 (banner %q, blockers %q)", n,
			texts(t, ctx, `[data-testid=run-done] [data-testid=conclusion-banner]`), texts(t, ctx, `[data-testid=run-done] [data-testid=blockers] li`))
	}
}
