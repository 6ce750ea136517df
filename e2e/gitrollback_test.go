package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hanzoai/deploy-web/demo"
)

// TestGitRollbackInBrowser rolls the demo's staging/api (rendered by the
// dev environment, which has write-back) back from its page: the
// confirmation says it goes through git and takes a reason; the result
// shows the commit (short SHA and message) and the run that applies it;
// the bare manifest repository holds the commit, which changes dev's
// overlay alone; the live App follows. At 1440x900 and 390x844.
func TestGitRollbackInBrowser(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	base := strings.TrimSuffix(demoEnv.state.URL, "/")
	page := base + "/clusters/devcluster/apps/staging/api"
	bare := filepath.Join(demoEnv.tmp, "demo", "manifests.git")
	from, to := demo.DevVersion, demo.DevPreviousVersion

	// The demo applied dev's first release and committed the next, which
	// auto-sync applies: then the history offers the earlier release.
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`[data-testid=app-header]`))); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, `[data-testid=app-header] [data-testid=declared]`, func(s string) bool { return s == from }, 3*time.Minute)
	row := `[data-testid=history-row][data-version="` + to + `"] [data-testid=rollback-button]`
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(row))); err != nil {
		screenshot(t, ctx, "no-rollback-button")
		t.Fatal(err)
	}
	if disabled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('`+row+`').disabled`)); err != nil || disabled {
		screenshot(t, ctx, "rollback-disabled")
		t.Fatalf("the rollback button of %s is disabled (%v): want it offered", to, err)
	}
	before := gitIn(t, bare, "rev-parse", "main")

	const reason = "e2e: errors since " + demo.DevVersion
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(row)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=confirm-rollback] [data-testid=rollback-through-git]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=rollback-reason]`), reason),
	); err != nil {
		screenshot(t, ctx, "no-confirm")
		t.Fatal(err)
	}
	if got := texts(t, ctx, `[data-testid=confirm-rollback]`); len(got) != 1 || !strings.Contains(got[0], from) || !strings.Contains(got[0], to) {
		t.Errorf("confirmation = %q, want it to name %s -> %s", got, from, to)
	}
	screenshot(t, ctx, "confirm")
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid=confirm-rollback-button]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=action-success] [data-testid=action-commit]`)),
	); err != nil {
		screenshot(t, ctx, "no-result")
		t.Fatal(err)
	}

	// The commit: its short SHA and message on the page, in the bare
	// repository on main, changing dev's overlay alone.
	sha := texts(t, ctx, `[data-testid=action-commit] [data-testid=commit-sha]`)
	head := gitIn(t, bare, "rev-parse", "main")
	if len(sha) != 1 || len(sha[0]) < 7 || !strings.HasPrefix(head, sha[0]) {
		t.Fatalf("commit shown = %q, want a prefix of main's head %s", sha, head)
	}
	if parent := gitIn(t, bare, "rev-parse", "main^"); parent != before {
		t.Errorf("the commit's parent = %s, want the head before the rollback, %s", parent, before)
	}
	if got := gitIn(t, bare, "show", "--name-only", "--format=", "main"); got != "overlays/dev/kustomization.yaml" {
		t.Errorf("the rollback commit changes %q, want overlays/dev/kustomization.yaml alone", got)
	}
	msg := gitIn(t, bare, "log", "-1", "--format=%B", "main")
	for _, want := range []string{"staging/api", from, to, "admin@demo.local", reason} {
		if !strings.Contains(msg, want) {
			t.Errorf("commit message %q does not name %q", msg, want)
		}
	}
	if got := texts(t, ctx, `[data-testid=action-commit]`); len(got) != 1 || !strings.Contains(got[0], strings.SplitN(msg, "\n", 2)[0]) {
		t.Errorf("the result = %q, want the commit's subject %q", got, strings.SplitN(msg, "\n", 2)[0])
	}
	runURL, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=action-commit] [data-testid=commit-run]').getAttribute('href')`))
	if err != nil || !strings.HasPrefix(runURL, "/environments/dev/runs/") {
		screenshot(t, ctx, "no-run")
		t.Fatalf("run link = %q (%v), want a run of dev", runURL, err)
	}
	for _, size := range screenSizes() {
		emulateScreen(t, ctx, size)
		screenshot(t, ctx, "committed-"+size.name)
		if size.phone {
			checkNoSideScroll(t, ctx, "committed-phone")
		}
	}
	emulateScreen(t, ctx, screenSizes()[0])

	// The live App follows the commit.
	waitText(t, ctx, `[data-testid=app-header] [data-testid=declared]`, func(s string) bool { return s == to }, 3*time.Minute)
	waitText(t, ctx, `[data-testid=app-header] [data-testid=running]`, func(s string) bool { return s == to+" (2)" }, 2*time.Minute)
	screenshot(t, ctx, "followed")

	// The run applied it.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+runURL), chromedp.WaitVisible(chromedp.CSS(`[data-testid=run-done]`))); err != nil {
		screenshot(t, ctx, "run-not-done")
		t.Fatal(err)
	}
	for _, size := range screenSizes() {
		emulateScreen(t, ctx, size)
		screenshot(t, ctx, "run-"+size.name)
	}
	emulateScreen(t, ctx, screenSizes()[0])
}
