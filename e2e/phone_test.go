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
	planOnPage(t, ctx)
	waitVisible(t, ctx, `[data-testid=run-done] [data-testid=conclusion-banner]`, 90*time.Second)
	// Ready on a fresh demo (the plan is then offered for Apply); blocked
	// after TestEnvironmentPlanApply's kubectl edit of staging/api (a field
	// of another manager), which checks the Apply form on the phone itself.
	devVisible := `#report-fold > summary`
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
		{"environment-dev-report", "/environments/dev/reports/" + reportID, `#report-fold > summary`},
		{"environment-prod", "/environments/prod", `[data-testid=apply-protected]`},
		{"timeline", "/apps/storefront/web/timeline", `[data-testid=timeline]`},
		{"activity", "/activity", `[data-testid=activity-results]`},
		{"audit", "/audit", `[data-testid=audit-filters]`},
		{"freezes", "/freezes", `[data-testid=freezes]`},
		{"me", "/me", `[data-testid=me]`},
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

// foldState is one fold of a page (a details[data-fold=narrow]) as the
// browser draws it.
type foldState struct {
	ID   string
	Open bool
	// BodyHeight is the drawn height of what the fold holds (0 folded).
	BodyHeight float64
}

// folds returns the page's folds, in document order.
func folds(t *testing.T, ctx context.Context) []foldState {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]foldState](`Array.from(document.querySelectorAll('details[data-fold=narrow]')).map(d => ({
		ID: d.id, Open: d.open,
		BodyHeight: d.getBoundingClientRect().height - d.querySelector(':scope > summary').getBoundingClientRect().height,
	}))`))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// pageHeight is the drawn height of the whole page.
func pageHeight(t *testing.T, ctx context.Context) float64 {
	t.Helper()
	h, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.documentElement.scrollHeight`))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestEnvironmentPageFolds: on a phone the environment page opens with
// its sections folded (the GitOps panel's details, the plan report, the
// plan history, the audit trail, the notifications), at most 2,000px
// tall, its first screen holding the Plan button, the commit live, the
// auto-sync state and the plan's conclusion; each section opens with a
// tap, or from the keyboard. A fold keeps its state across the GitOps
// panel's 10-second refresh and across the plan history's swap when a
// run ends, and a reason typed into the pause form survives the refresh.
// An address into a section (#notifications) opens it. On the desktop
// every section is open, and a run sits beside the plan history.
func TestEnvironmentPageFolds(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	phone := screenSizes()[1]
	emulateScreen(t, ctx, phone)

	navigate(t, ctx, "/environments/dev", `[data-testid=plan-button]`)
	if len(texts(t, ctx, `#report-fold`)) == 0 { // no plan of dev yet (auto-sync makes one within 15s of the start)
		planOnPage(t, ctx)
		navigate(t, ctx, "/environments/dev", `[data-testid=plan-button]`)
	}
	wantFolds := []string{"report-fold", "gitops-more", "plan-history-fold", "audit-fold", "notifications-fold"}
	var ids []string
	for _, f := range folds(t, ctx) {
		ids = append(ids, f.ID)
		if f.Open || f.BodyHeight != 0 {
			t.Errorf("phone, fold %s at load: open %v, body %.0fpx tall; want folded", f.ID, f.Open, f.BodyHeight)
		}
	}
	if strings.Join(ids, " ") != strings.Join(wantFolds, " ") {
		t.Errorf("phone: folds %q, want %q", ids, wantFolds)
	}
	screenshot(t, ctx, "folded-phone")
	if h := pageHeight(t, ctx); h > 2000 {
		t.Errorf("phone: the environment page with its sections folded is %.0fpx tall, want at most 2000", h)
	}
	// The first screen: what the environment is at and what one can do.
	for _, sel := range []string{`[data-testid=plan-button]`, `[data-testid=gitops-live]`, `[data-testid=gitops-autosync]`,
		`#report-fold > summary [data-testid=conclusion]`} {
		bottom, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`(() => { const e = document.querySelector(`+jsString(sel)+`); if (!e) return -1; const r = e.getBoundingClientRect(); return r.height > 0 ? r.bottom : -1; })()`))
		if err != nil {
			t.Fatal(err)
		}
		if bottom < 0 || bottom > float64(phone.height) {
			t.Errorf("phone: %s ends at %.0fpx, want it drawn on the first screen (%dpx)", sel, bottom, phone.height)
		}
	}

	// The GitOps panel refreshes itself: its fold stays as it was left.
	waitGitOpsRefresh(t, ctx)
	if open, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('gitops-more').open`)); open {
		t.Errorf("phone: the GitOps panel's fold after its refresh is open, want it folded as it was left")
	}

	// Each fold opens with a tap on its heading, the notifications with
	// the keyboard (Tab to the summary, Enter).
	for _, id := range wantFolds[:len(wantFolds)-1] {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#`+id+` > summary`), chromedp.NodeVisible)); err != nil {
			t.Fatalf("tap %s: %v", id, err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(`#notifications-fold > summary`)), chromedp.KeyEvent("\r")); err != nil {
		t.Fatalf("Enter on the notifications' heading: %v", err)
	}
	for _, f := range folds(t, ctx) {
		if !f.Open || f.BodyHeight < 20 {
			t.Errorf("phone, fold %s after a tap: open %v, body %.0fpx tall; want it open and drawn", f.ID, f.Open, f.BodyHeight)
		}
	}
	screenshot(t, ctx, "unfolded-phone")
	checkNoSideScroll(t, ctx, "unfolded-phone")

	// Through the next refresh, the fold stays open, the recent automatic
	// runs (drawn folded) stay open, and a reason being typed stays.
	const reason = "e2e: typing through a refresh"
	recent := len(texts(t, ctx, `#autosync-recent`)) == 1
	if recent {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#autosync-recent > summary`), chromedp.NodeVisible)); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`[data-testid=pause-reason]`), reason)); err != nil {
		t.Fatal(err)
	}
	waitGitOpsRefresh(t, ctx)
	for _, id := range []string{"gitops-more", "autosync-recent"} {
		if id == "autosync-recent" && !recent {
			continue
		}
		if open, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById(`+jsString(id)+`).open`)); !open {
			t.Errorf("phone: %s after the GitOps panel's refresh is folded, want it open as it was left", id)
		}
	}
	if v, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=pause-reason]').value`)); v != reason {
		t.Errorf("phone: the pause reason after the GitOps panel's refresh = %q, want %q", v, reason)
	}

	// A plan ends: the plan history is swapped for a fresh copy, one entry
	// longer, and keeps the state its reader gave it (folded here).
	entries := len(texts(t, ctx, `[data-testid=history-entry]`))
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#plan-history-fold > summary`), chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	planOnPage(t, ctx)
	waitFor(t, ctx, "the plan history with the new plan, settled", func() bool {
		settling := len(texts(t, ctx, `.htmx-settling`)) > 0
		return !settling && (len(texts(t, ctx, `[data-testid=history-entry]`)) > entries || entries == 20) // the store keeps 20
	})
	if open, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('plan-history-fold').open`)); open {
		t.Errorf("phone: the plan history after the run's swap is open, want it folded as it was left")
	}
	// The run's report, just asked for, is drawn open; its page, loaded
	// afresh on a phone, folds it like the other sections.
	if open, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.getElementById('run-report-fold') && document.getElementById('run-report-fold').open`)); !open {
		t.Errorf("phone: the report of the plan just made is folded, want it open")
	}
	runURL, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`'/environments/dev/runs/' + document.querySelector('[data-testid=run-done]').dataset.run`))
	navigate(t, ctx, runURL, `[data-testid=run-done]`)
	for _, f := range folds(t, ctx) {
		if f.Open {
			t.Errorf("phone, the run's page at load: fold %s open, want folded", f.ID)
		}
	}
	if h := pageHeight(t, ctx); h > 2000 {
		t.Errorf("phone: the run's page with its sections folded is %.0fpx tall, want at most 2000", h)
	}
	screenshot(t, ctx, "run-folded-phone")

	// An address into a section opens it, and only it (a new document:
	// from another page, not a jump within this one).
	navigate(t, ctx, "/environments", `[data-testid=envs-table]`)
	navigate(t, ctx, "/environments/dev#notifications", `[data-testid=plan-button]`)
	for _, f := range folds(t, ctx) {
		if want := f.ID == "notifications-fold"; f.Open != want {
			t.Errorf("phone, /environments/dev#notifications: fold %s open %v, want %v", f.ID, f.Open, want)
		}
	}

	// The desktop: every section open; the run beside the plan history,
	// their tops level.
	emulateScreen(t, ctx, screenSizes()[0])
	navigate(t, ctx, runURL, `[data-testid=run-done]`)
	for _, f := range folds(t, ctx) {
		if !f.Open || f.BodyHeight == 0 {
			t.Errorf("desktop, fold %s at load: open %v, body %.0fpx tall; want open", f.ID, f.Open, f.BodyHeight)
		}
	}
	tops, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[document.querySelector('[data-testid=run-done]').getBoundingClientRect().top, document.getElementById('env-history').getBoundingClientRect().top]`))
	if err != nil {
		t.Fatal(err)
	}
	if d := tops[0] - tops[1]; d > 1 || d < -1 {
		t.Errorf("desktop run page: the run's top is at %.0fpx, the plan history's at %.0fpx; want them side by side", tops[0], tops[1])
	}
	screenshot(t, ctx, "run-desktop")
}

// openFold opens the fold with this id (folded at load on a phone) as a
// reader does, with a tap on its heading; an open fold is left open.
func openFold(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	open, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById(`+jsString(id)+`).open`))
	if err != nil {
		t.Fatalf("fold %s: %v", id, err)
	}
	if !open {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#`+id+` > summary`), chromedp.NodeVisible)); err != nil {
			t.Fatalf("open fold %s: %v", id, err)
		}
	}
}

// planOnPage clicks the environment page's Plan button and waits for the
// run to finish. A plan refused because another run of the environment
// is going (auto-sync's, every 15 seconds in the demo) is asked again
// once that refusal is shown.
func planOnPage(t *testing.T, ctx context.Context) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=plan-button]`), chromedp.NodeVisible)); err != nil {
			t.Fatal(err)
		}
		// A plan takes seconds, minutes on a loaded machine.
		var refused string
		for end := time.Now().Add(2 * time.Minute); ; {
			if r := texts(t, ctx, `[data-testid=run-refused]`); len(r) > 0 {
				refused = r[0]
				break
			}
			if len(texts(t, ctx, `[data-testid=run-done]`)) > 0 {
				break
			}
			if time.Now().After(end) {
				screenshot(t, ctx, "plan-timeout")
				t.Fatalf("the plan neither ended nor was refused within 2 minutes")
			}
			time.Sleep(200 * time.Millisecond)
		}
		if refused == "" || !strings.Contains(refused, "already running") {
			if refused != "" {
				t.Fatalf("plan refused: %s", refused)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("plan still refused after 3 minutes: %s", refused)
		}
		t.Logf("plan refused (%s): asking again", refused)
		// The refusal is replaced by the next answer, so the wait above
		// sees only that answer.
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('run-area').replaceChildren()`)); err != nil {
			t.Fatal(err)
		}
	}
}

// waitGitOpsRefresh waits for the GitOps panel's next refresh (every 10
// seconds) to settle: the panel is marked, and its replacement is not;
// HTMX takes the settling class off it in the task that ends the swap.
func waitGitOpsRefresh(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('gitops-panel').dataset.e2eOld = '1'`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the GitOps panel's refresh", func() bool {
		settled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
			const p = document.getElementById('gitops-panel');
			return !!p && p.dataset.e2eOld !== '1' && !p.classList.contains('htmx-settling');
		})()`))
		return err == nil && settled
	})
}
