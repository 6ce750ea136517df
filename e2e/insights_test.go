package e2e

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestInsightsPage: the top bar links the delivery metrics; /insights
// draws the four metrics as SVG charts with the table of numbers per
// environment and App beside them, from the demo's own record (its
// auto-sync applies dev at start); the filters are the URL (a fresh load
// of a bookmark keeps them, the form swaps the results and pushes the
// URL); the CSV link answers the table as CSV. Screenshots at desktop and
// phone size, the phone with nothing off to the side or cramped.
func TestInsightsPage(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	navigate(t, ctx, "/", `[data-testid=nav-insights]`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=nav-insights]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=insights-results]`))); err != nil {
		screenshot(t, ctx, "nav-failed")
		t.Fatalf("the top bar's Insights link: %v", err)
	}

	// The demo's first applies are in the record once its auto-sync ran:
	// wait for the page to count one (an explicit signal, generous).
	deadline := time.Now().Add(3 * time.Minute)
	for {
		navigate(t, ctx, "/insights?since=7d", `[data-testid=insights-results]`)
		rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid=insights-row]').length`))
		if err != nil {
			t.Fatal(err)
		}
		if rows > 0 {
			break
		}
		if time.Now().After(deadline) {
			screenshot(t, ctx, "no-rows")
			t.Fatalf("/insights shows no environment after 3 minutes: the demo's applies are not counted")
		}
		time.Sleep(2 * time.Second)
	}
	for _, id := range []string{"deploymentFrequency", "leadTime", "changeFailureRate", "timeToRestore"} {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid=chart-`+id+`] svg [data-testid=chart-bar]').length`))
		if err != nil || n != 7 {
			t.Errorf("chart %s has %d bars (%v), want 7 (a day each over 7 days)", id, n, err)
		}
	}
	deploys, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=chart-deploymentFrequency] [data-testid=chart-value]').textContent`))
	if err != nil || strings.HasPrefix(deploys, "0 ") {
		t.Errorf("deployment frequency says %q (%v), want the demo's applies counted", deploys, err)
	}

	// The form: 30 days, through HTMX, the URL pushed.
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`[data-testid=filter-since]`), "30d"),
		chromedp.Click(chromedp.CSS(`[data-testid=filter-apply]`)),
	); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for {
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(loc)
		bars, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid=chart-leadTime] [data-testid=chart-bar]').length`))
		if u != nil && u.Path == "/insights" && u.Query().Get("since") == "30d" && bars == 30 {
			break
		}
		if time.Now().After(deadline) {
			screenshot(t, ctx, "filter-failed")
			t.Fatalf("after choosing 30 days: address %s, %d bars; want /insights?since=30d and 30 bars", loc, bars)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// A bookmark loads fresh with its filters; the CSV link answers CSV.
	navigate(t, ctx, "/insights?env=dev&since=90d", `[data-testid=insights-results]`)
	sel, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.querySelector('[data-testid=filter-env]').value, document.querySelector('[data-testid=filter-since]').value]`))
	if err != nil || len(sel) != 2 || sel[0] != "dev" || sel[1] != "90d" {
		t.Errorf("fresh /insights?env=dev&since=90d: filters %v (%v), want dev and 90d", sel, err)
	}
	envs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[data-testid=insights-row]')).map(r => r.dataset.env)`))
	if err != nil || len(envs) == 0 {
		t.Errorf("env=dev: rows %v (%v), want dev's", envs, err)
	}
	for _, e := range envs {
		if e != "dev" {
			t.Errorf("env=dev shows a row of environment %q", e)
		}
	}
	csvText, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(async () => {
		const a = document.querySelector('[data-testid=insights-csv]');
		const r = await fetch(a.href);
		return r.headers.get('content-type') + '\n' + await r.text();
	})()`, chromedp.EvalAwaitPromise))
	if err != nil || !strings.HasPrefix(csvText, "text/csv") || !strings.Contains(csvText, "\nenvironment,cluster,namespace,app,deployments,") || !strings.Contains(csvText, "\ndev,") {
		t.Errorf("the CSV link answered %q (%v), want text/csv with the header and dev's rows", csvText, err)
	}

	for _, size := range screenSizes() {
		emulateScreen(t, ctx, size)
		navigate(t, ctx, "/insights?since=30d", `[data-testid=insights-results]`)
		if err := chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, size.name)
		if size.phone {
			checkNoSideScroll(t, ctx, "insights")
			// The table fits its box: no column is scrolled out of sight.
			w, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`(() => { const b = document.querySelector('.insights-table-wrap'); return [b.scrollWidth, b.clientWidth]; })()`))
			if err != nil || w[0] > w[1] {
				t.Errorf("on a phone the table is %v px wide in its box (scroll, client; %v): a column is cut off", w, err)
			}
			checkNotCramped(t, ctx, "insights")
		}
	}
}
