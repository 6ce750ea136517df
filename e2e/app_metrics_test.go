package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hanzoai/deploy-web/demo"
)

// TestAppMetricsPanel: the demo's dev has metrics (its Prometheus) and
// staging's promotion checks error-rate against them. Dev's worker cell
// in the matrix loads its checks (error-rate failing, beside the soak
// state); worker's page in dev loads its Metrics panel after the page
// (the placeholder first), which shows error-rate's current value
// breaking its threshold and a chart of the last 24 hours, at 1440x900
// and 390x844 with nothing wider than the screen.
func TestAppMetricsPanel(t *testing.T) {
	envFile, err := os.ReadFile(filepath.Join(demoEnv.tmp, "demo", demo.EnvironmentsFileName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(envFile), "metrics:") {
		t.Skip("the demo's environments have no metrics: its Prometheus is issue #40 item 2 (make demo)")
	}
	const app = "worker"
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)

	checkSel := cellSel(app, demo.DevEnvironment) + ` [data-testid=matrix-check][data-check=error-rate]`
	reloadUntil(t, ctx, "/environments", `[data-testid=matrix-table]`, func() bool {
		// The checks load after the matrix: wait for the fragment.
		return visibleWithin(ctx, cellSel(app, demo.DevEnvironment)+` [data-testid=matrix-checks]`, 20*time.Second) && attrOf(t, ctx, checkSel, "data-state") == "failing"
	}, 3*time.Minute)
	if soak := texts(t, ctx, cellSel(app, demo.DevEnvironment)+` [data-testid=matrix-soak]`); len(soak) != 1 {
		t.Errorf("dev's %s cell shows no soak state beside its checks (%q)", app, soak)
	}
	screenshot(t, ctx, "matrix")

	href := attrOf(t, ctx, cellSel(app, demo.DevEnvironment)+` .matrix-version a`, "href")
	if href == "" {
		t.Fatalf("dev's %s cell links no app page", app)
	}
	metric := `[data-testid=app-metrics][data-loaded=yes] [data-testid=metric][data-check=error-rate]`
	reloadUntil(t, ctx, href, `#app-live`, func() bool {
		return visibleWithin(ctx, metric, 20*time.Second) && attrOf(t, ctx, metric, "data-state") == "breaks" && len(texts(t, ctx, metric+` [data-testid=metric-chart]`)) == 1
	}, 3*time.Minute)
	value := texts(t, ctx, metric+` [data-testid=metric-value]`)
	if len(value) != 1 || !strings.Contains(value[0], "breaks") || !strings.Contains(value[0], "<= ") {
		t.Errorf("error-rate's current value reads %q, want it breaking its threshold", value)
	}
	for _, size := range screenSizes() {
		emulateScreen(t, ctx, size)
		if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(`[data-testid=app-metrics]`))); err != nil {
			t.Fatal(err)
		}
		wide, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[data-testid=app-metrics] *')).filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).map(e => e.className.baseVal ?? e.className)`))
		if err != nil {
			t.Fatal(err)
		}
		if len(wide) != 0 {
			t.Errorf("%s: the metrics panel is wider than the screen: %q", size.name, wide)
		}
		screenshot(t, ctx, size.name)
	}
}

// attrOf is attribute name of the first element sel matches ("" when
// none).
func attrOf(t *testing.T, ctx context.Context, sel, name string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector(`+jsString(sel)+`) || {getAttribute: () => ''}).getAttribute(`+jsString(name)+`) || ''`))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// visibleWithin reports whether sel is visible within d (a fragment the
// page loads after its paint).
func visibleWithin(ctx context.Context, sel string, d time.Duration) bool {
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(sel))) == nil
}
