package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/hanzoai/deploy-web/appcr"
)

// TestEnvironmentPlanApply pauses the demo's dev auto-sync, commits a
// change, plans dev in the browser, types the confirmation, applies, and
// watches the staging apps converge;
// the history keeps both runs; the applied App then diffs against git, and
// a kubectl edit shows up in that diff. Prod refuses the apply.
func TestEnvironmentPlanApply(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	base := strings.TrimSuffix(demoEnv.state.URL, "/")
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/environments"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=envs-table]`))); err != nil {
		screenshot(t, ctx, "no-envs")
		t.Fatal(err)
	}
	if envs := texts(t, ctx, `[data-testid=env-row] .app-name a`); strings.Join(envs, ",") != "dev,staging,prod" {
		t.Errorf("environments = %q, want dev, staging and prod", envs)
	}
	screenshot(t, ctx, "environments")

	// dev auto-syncs its branch: wait until it applied the head, pause
	// auto-sync (a person plans and applies by hand below, and edits an
	// App by hand, which self-heal would put back), and commit a change
	// in the working clone for the plan to show.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/environments/dev"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=plan-button]`))); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, ctx, `[data-testid=gitops-in-sync]`, 3*time.Minute)
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`[data-testid=pause-reason]`), "e2e: plan and apply by hand"),
		chromedp.Click(chromedp.CSS(`[data-testid=autosync-pause]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=autosync-paused]`)),
	); err != nil {
		screenshot(t, ctx, "no-pause")
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = chromedp.Do(ctx, chromedp.Navigate(base+"/environments/dev"), chromedp.Click(chromedp.CSS(`[data-testid=autosync-resume]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid=autosync-pause]`)))
	})
	clone := filepath.Join(demoEnv.tmp, "demo", "manifests")
	gitIn(t, clone, "pull", "-q")
	apiYAML := filepath.Join(clone, "base", "api.yaml")
	b, err := os.ReadFile(apiYAML)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(apiYAML, []byte(strings.Replace(string(b), "value: info", "value: debug", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, clone, "commit", "-qam", "api: debug logs")
	gitIn(t, clone, "push", "-q")
	// The newest entry is auto-sync's apply: Apply is not offered, the
	// page says to plan first. (Auto-sync stores its plan, then its apply
	// record, then the apply's history entry: wait for that last one.)
	navigate(t, ctx, "/environments/dev", `[data-testid=plan-button]`)
	for deadline := time.Now().Add(time.Minute); len(texts(t, ctx, `[data-testid=apply-needs-plan]`)) == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Second)
		navigate(t, ctx, "/environments/dev", `[data-testid=plan-button]`)
	}
	if n := len(texts(t, ctx, `[data-testid=apply-button]`)); n != 0 {
		screenshot(t, ctx, "apply-before-plan")
		t.Errorf("dev offers %d Apply button(s) before a plan, want none", n)
	}
	if n := len(texts(t, ctx, `[data-testid=apply-needs-plan]`)); n != 1 {
		t.Errorf("dev shows %d 'plan first' note(s) before a plan, want 1", n)
	}

	// Plan dev: progress streams, then the report says ready.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=plan-button]`))); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, ctx, `[data-testid=run-done] [data-testid=conclusion-banner]`, 90*time.Second)
	banner := texts(t, ctx, `[data-testid=run-done] [data-testid=conclusion-banner] [data-testid=conclusion]`)
	if len(banner) != 1 || banner[0] != "ready" {
		screenshot(t, ctx, "plan-not-ready")
		t.Fatalf("dev plan conclusion = %q, want ready", banner)
	}
	if n := len(texts(t, ctx, `[data-testid=run-done] [data-testid=change]`)); n == 0 {
		t.Errorf("the plan lists no object changes")
	}
	// The plan's diffs read as every diff does: live on the left, the
	// planned manifest on the right.
	if heads := texts(t, ctx, `[data-testid=run-done] [data-testid=change] [data-testid=diff] thead th`); len(heads) < 2 || heads[0] != "Live" || heads[1] != "Planned" {
		t.Errorf("plan diff columns = %q, want Live, Planned", heads)
	}
	screenshot(t, ctx, "dev-plan")
	// The same report, stored, on a phone.
	report, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=history-entry] a').href`))
	if report != "" {
		phone := browser(t)
		login(t, phone, user, pass)
		if err := chromedp.Do(phone, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(report),
			chromedp.WaitVisible(chromedp.CSS(`#report-fold > summary`))); err != nil {
			t.Errorf("stored report on a phone: %v", err)
		}
		openFold(t, phone, "report-fold") // folded at load on a phone
		screenshot(t, phone, "dev-plan-report-phone")
		checkNoSideScroll(t, phone, "dev-plan-report-phone")
		checkNotCramped(t, phone, "dev-plan-report-phone")
		// The environment page with the Apply form of this plan, on the phone.
		navigate(t, phone, "/environments/dev", `[data-testid=apply-form]`)
		screenshot(t, phone, "dev-apply-phone")
		checkNoSideScroll(t, phone, "dev-apply-phone")
		checkNotCramped(t, phone, "dev-apply-phone")
	}

	// The finished ready plan brings the Apply form, carrying its id: the
	// newest plan in the history.
	waitVisible(t, ctx, `[data-testid=apply-form]`, 15*time.Second)
	planID, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=apply-form] input[name=plan]').value`))
	newest, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=history-entry]').dataset.id`))
	if planID == "" || planID != newest {
		t.Errorf("apply form carries plan %q, want the plan just made (%q)", planID, newest)
	}

	// A wrong confirmation is refused; the right one applies.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`[data-testid=apply-confirm]`), "prod"), chromedp.Click(chromedp.CSS(`[data-testid=apply-button]`))); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, ctx, `[data-testid=run-refused]`, 15*time.Second)
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid=apply-confirm]').value = ''`), chromedp.SendKeys(chromedp.CSS(`[data-testid=apply-confirm]`), "dev"),
		chromedp.Click(chromedp.CSS(`[data-testid=apply-button]`))); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, ctx, `[data-testid=run-done] [data-testid=conclusion-banner]`, 3*time.Minute)
	if c := texts(t, ctx, `[data-testid=run-done] [data-testid=conclusion-banner] [data-testid=conclusion]`); len(c) != 1 || c[0] != "applied" {
		screenshot(t, ctx, "apply-not-applied")
		t.Fatalf("dev apply conclusion = %q, want applied", c)
	}
	screenshot(t, ctx, "dev-applied")

	// The staging apps converge in the fleet.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/?namespace=staging"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=apps-table]`))); err != nil {
		t.Fatal(err)
	}
	for _, app := range []string{"api", "worker"} {
		waitText(t, ctx, `[data-app="`+app+`"] [data-testid=sync]`, func(s string) bool { return s == "Synced" }, 90*time.Second)
		waitText(t, ctx, `[data-app="`+app+`"] [data-testid=health]`, func(s string) bool { return s == "Healthy" }, 90*time.Second)
	}
	screenshot(t, ctx, "staging-fleet")

	// The history keeps the plan and the apply.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/environments/dev"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=plan-history]`))); err != nil {
		t.Fatal(err)
	}
	if h := texts(t, ctx, `[data-testid=history-entry] .hl-action`); len(h) < 2 || h[0] != "apply" {
		t.Errorf("history = %q, want the apply first, then the plan", h)
	}

	// git is the desired source of the applied App; a kubectl edit shows.
	dyn := dynamic.NewForConfigOrDie(demoEnv.restConfig(t))
	patch := `{"spec":{"replicas":3}}`
	if _, err := dyn.Resource(appcr.Resource).Namespace("staging").Patch(context.Background(), "api", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/clusters/devcluster/apps/staging/api/resource/hanzo.ai:App:staging:api?tab=diff"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=diff-source]`))); err != nil {
		t.Fatal(err)
	}
	src, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=diff-source]').dataset.source`))
	if src != "git" {
		t.Errorf("desired source of the applied App = %q, want git", src)
	}
	// The cache sees the edit a moment later: reload until it shows.
	var changed []string
	for deadline := time.Now().Add(30 * time.Second); ; {
		changed = texts(t, ctx, `[data-testid=diff] tr[data-op=change] td.left`) // live
		if len(changed) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
		if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`[data-testid=diff-source]`))); err != nil {
			t.Fatal(err)
		}
	}
	if len(changed) != 1 || !strings.Contains(changed[0], "replicas: 3") {
		screenshot(t, ctx, "git-diff-wrong")
		t.Errorf("git diff after kubectl edit = %q, want replicas: 3 live", changed)
	}
	screenshot(t, ctx, "git-diff")
}

// TestProdApplyRefused: the protected environment refuses the apply, and
// the page says why.
func TestProdApplyRefused(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	base := strings.TrimSuffix(demoEnv.state.URL, "/")
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/environments/prod"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=apply-protected]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=apply-button]`))); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, ctx, `[data-testid=run-refused]`, 15*time.Second)
	msg := texts(t, ctx, `[data-testid=run-refused]`)
	if len(msg) != 1 || !strings.Contains(msg[0], "protected") {
		t.Errorf("refusal = %q, want it to say prod is protected", msg)
	}
	screenshot(t, ctx, "prod-refused")
}

func waitVisible(t *testing.T, ctx context.Context, sel string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+jsString(sel)+`).length`))
		if err == nil && n > 0 {
			return
		}
		if time.Now().After(deadline) {
			screenshot(t, ctx, "timeout")
			t.Fatalf("%s not shown after %s", sel, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
