package e2e

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hanzoai/deploy-web/demo"
)

// checkGate is the promotion dialog's metrics-checks gate.
const checkGate = `[data-testid=gate][data-gate=source-checks]`

// TestPromotionRefusedByCheck: dev's worker at DevVersion answers 8%
// errors (the demo's traffic source, scraped by the demo's Prometheus),
// so the dialog of its promotion into staging, once its soak passed,
// shows the error-rate check failed with its name, the query as run, the
// value and the threshold, and its button is disabled; a promotion posted
// anyway (the button enabled, as a stale page would post it) is refused
// by the server with the same words, and main is not written.
func TestPromotionRefusedByCheck(t *testing.T) {
	if demoEnv.state.Prometheus == "" {
		t.Fatal("the demo's state file names no Prometheus")
	}
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid=app-row]`))); err != nil {
		screenshot(t, ctx, "no-fleet")
		t.Fatalf("admin: fleet rows not shown: %v", err)
	}
	clone := filepath.Join(demoEnv.tmp, "demo", "manifests")
	reloadUntil(t, ctx, "/environments", `[data-testid=matrix-table]`, func() bool {
		return cellVersion(t, ctx, demo.FailingApp, demo.DevEnvironment) == demo.DevVersion && cellVersion(t, ctx, demo.FailingApp, demo.StagingEnvironment) == demo.StagingVersion
	}, 3*time.Minute)

	// The dialog is opened again until the soak passed and Prometheus
	// answered a value for the check (a check without samples fails too,
	// saying it could not be evaluated).
	path := openPromote(t, ctx, demo.FailingApp, demo.DevEnvironment, demo.StagingEnvironment)
	reloadUntil(t, ctx, path, `[data-testid=promote-form]`, func() bool {
		g := gateStates(t, ctx)
		msg := texts(t, ctx, checkGate+` .gate-msg`)
		return g["source-soaked"] == "passed" && g["source-checks"] == "failed" && len(msg) == 1 && strings.Contains(msg[0], " failed: ")
	}, 3*time.Minute)
	msg := texts(t, ctx, checkGate+` .gate-msg`)[0]
	if name := texts(t, ctx, checkGate+` .gate-name`); len(name) != 1 || name[0] == "" {
		t.Errorf("the checks gate is unnamed: %q", name)
	}
	value := regexp.MustCompile(`check ` + demo.ErrorRateCheck + ` failed: ([0-9.e-]+) at \d\d:\d\d:\d\d UTC`).FindStringSubmatch(msg)
	if value == nil {
		t.Fatalf("the checks gate reads %q, want the check %s failed with its value", msg, demo.ErrorRateCheck)
	}
	if v, err := strconv.ParseFloat(value[1], 64); err != nil || v <= demo.ErrorRateMax {
		t.Errorf("the check's value %q, want above the threshold %g (dev's worker answers %g)", value[1], demo.ErrorRateMax, demo.FailingErrorRatio)
	}
	for _, w := range []string{"breaks the threshold <= " + strconv.FormatFloat(demo.ErrorRateMax, 'g', -1, 64),
		`http_requests_total{app="worker",environment="dev",version="` + demo.DevVersion + `",code=~"5.."}`} {
		if !strings.Contains(msg, w) {
			t.Errorf("the checks gate reads %q, want %q (the threshold, the query as run)", msg, w)
		}
	}
	if n := len(texts(t, ctx, `[data-testid=promote-button][disabled]`)); n != 1 {
		t.Errorf("%d disabled Promote button(s), want 1 (a gate failed)", n)
	}
	for _, size := range screenSizes() {
		emulateScreen(t, ctx, size)
		screenshot(t, ctx, "check-failed-"+size.name)
		if size.phone {
			checkNoSideScroll(t, ctx, "promote dialog with a failed check")
		}
	}
	emulateScreen(t, ctx, screenSizes()[0])

	// Posted anyway: the server evaluates the gates itself and refuses.
	mainBefore := gitIn(t, clone, "ls-remote", "origin", "refs/heads/"+demo.ManifestBranch)
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid=promote-button]').disabled = false`),
		chromedp.Click(chromedp.CSS(`[data-testid=promote-button]`)),
	); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, ctx, `[data-testid=promote-result][data-result=refused]`, time.Minute)
	refused := texts(t, ctx, `[data-testid=promote-result]`)
	for _, w := range []string{"refused", demo.FailingApp + ": check " + demo.ErrorRateCheck + " failed", "<= 0.05", `version="` + demo.DevVersion + `"`} {
		if len(refused) != 1 || !strings.Contains(refused[0], w) {
			t.Errorf("the refusal reads %q, want %q", refused, w)
		}
	}
	screenshot(t, ctx, "refused")
	if after := gitIn(t, clone, "ls-remote", "origin", "refs/heads/"+demo.ManifestBranch); after != mainBefore {
		t.Errorf("main moved on a promotion the check refused: %q, was %q", after, mainBefore)
	}
}
