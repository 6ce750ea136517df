package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// crampedText is one element whose own text is squeezed into a column a
// few characters wide (a sentence wrapping one character per line).
type crampedText struct {
	Tag, Class, Text string
	Width, Height    float64
}

// checkNotCramped fails when a visible element holding a sentence of its
// own text is narrower than about six characters and taller than three
// lines: text that wraps a character or two per line.
func checkNotCramped(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]crampedText](`(() => {
		const out = [];
		for (const e of document.querySelectorAll('body *')) {
			let own = '';
			for (const n of e.childNodes) if (n.nodeType === 3) own += n.textContent;
			own = own.trim();
			if (own.length < 12) continue;
			const r = e.getBoundingClientRect();
			if (r.width === 0 || r.height === 0) continue;
			const lh = parseFloat(getComputedStyle(e).lineHeight) || parseFloat(getComputedStyle(e).fontSize) * 1.3;
			if (r.width < 60 && r.height > 3 * lh) out.push({Tag: e.tagName, Class: e.className.baseVal ?? e.className, Text: own.slice(0, 40), Width: r.width, Height: r.height});
		}
		return out;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 0 {
		screenshot(t, ctx, page+"-cramped")
		for _, c := range got {
			t.Errorf("%s: <%s class=%q> %q is %.0fpx wide and %.0fpx tall: its text wraps a few characters per line", page, strings.ToLower(c.Tag), c.Class, c.Text, c.Width, c.Height)
		}
	}
}

// TestLayoutEveryPage opens every page at 1440x900 and at 390x844 (a
// phone) and keeps a screenshot of each; on the phone no page is wider
// than the screen (document.documentElement.scrollWidth <= innerWidth:
// wide tables scroll inside their own box, long names and hashes break)
// and no text is squeezed into a column a few characters wide.
//
// It plans dev first (read-only: nothing is written to the cluster) so the
// environment page has a report, a run and, when the plan is ready, the
// Apply form; in the package's file order it runs after
// TestEnvironmentPlanApply, which wants dev without a plan at its start.
func TestLayoutEveryPage(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)

	navigate(t, ctx, "/environments/dev", `[data-testid=plan-button]`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=plan-button]`))); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, ctx, `[data-testid=run-done] [data-testid=conclusion-banner]`, 90*time.Second)
	// Ready on a fresh demo (the plan is then offered for Apply); blocked
	// after TestEnvironmentPlanApply's kubectl edit of staging/api (a field
	// of another manager), which checks the Apply form on the phone itself.
	devVisible := `[data-testid=report]`
	if c := texts(t, ctx, `[data-testid=run-done] [data-testid=conclusion-banner] [data-testid=conclusion]`); len(c) == 1 && c[0] == "ready" {
		waitVisible(t, ctx, `[data-testid=apply-form]`, 15*time.Second)
		devVisible = `[data-testid=apply-form]`
	} else {
		t.Logf("dev plan conclusion %q: the Apply form is not offered, the report is checked without it", c)
	}
	runID, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=run-done]').dataset.run`))
	if err != nil || runID == "" {
		t.Fatalf("run id of the dev plan: %q, %v", runID, err)
	}
	reportID, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=history-entry]').dataset.id`))
	if err != nil || reportID == "" {
		t.Fatalf("report id of the dev plan: %q, %v", reportID, err)
	}

	const checkout = "/apps/storefront/checkout/resource/apps:Deployment:storefront:checkout"
	pages := []struct{ name, path, visible string }{
		{"fleet", "/", `[data-testid=app-row]`},
		{"fleet-storefront", "/?namespace=storefront", `[data-testid=app-row]`},
		{"app-tree", "/apps/storefront/catalog", `[data-testid=tree]`},
		{"app-list", "/apps/storefront/catalog?view=list", `[data-testid=tree-list]`},
		{"app-history", "/apps/storefront/web", `[data-testid=history]`},
		{"panel-summary", checkout, `[data-testid=summary-tab]`},
		{"panel-manifest", checkout + "?tab=manifest", `[data-testid=manifest]`},
		{"panel-diff", checkout + "?tab=diff", `[data-testid=diff-source]`},
		{"panel-diff-inline", checkout + "?tab=diff&mode=unified&context=full", `[data-testid=diff-source]`},
		{"panel-events", checkout + "?tab=events", `[data-testid=resource-panel]`},
		{"logs", "/apps/storefront/web/logs", `[data-testid=log-box]`},
		{"environments", "/environments", `[data-testid=envs-table]`},
		{"environment-dev", "/environments/dev", devVisible},
		{"environment-dev-run", "/environments/dev/runs/" + runID, `[data-testid=run-done]`},
		{"environment-dev-report", "/environments/dev/reports/" + reportID, `[data-testid=changes]`},
		{"environment-prod", "/environments/prod", `[data-testid=apply-protected]`},
	}
	for _, size := range screenSizes() {
		emulateScreen(t, ctx, size)
		for _, p := range pages {
			navigate(t, ctx, p.path, p.visible)
			if err := chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			name := p.name + "-" + size.name
			screenshot(t, ctx, name)
			if size.phone {
				checkNoSideScroll(t, ctx, name)
				checkNotCramped(t, ctx, name)
			}
		}
	}

	// On the phone the panel sits below the tree and the history: a tap on
	// a tree node brings it into view.
	navigate(t, ctx, "/apps/storefront/catalog", `[data-testid=tree]`)
	clickNode(t, ctx, "apps:Deployment:storefront:catalog")
	waitFor(t, ctx, "the panel in view after a tap on a tree node", func() bool {
		top, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelector('[data-testid=resource-panel]').getBoundingClientRect().top`))
		return err == nil && top >= 0 && top < 844/2
	})
	screenshot(t, ctx, "panel-tapped-phone")
}
