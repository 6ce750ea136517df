package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// logRows returns the texts of the log rows on the page.
func logRows(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return texts(t, ctx, `[data-testid=log-line] .lt`)
}

// waitRowsGrow waits until there are more than n rows, and returns them.
func waitRowsGrow(t *testing.T, ctx context.Context, what string, n int) []string {
	t.Helper()
	var rows []string
	waitFor(t, ctx, what, func() bool {
		rows = logRows(t, ctx)
		return len(rows) > n
	})
	return rows
}

// waitPanel waits for the viewer's panel to be replaced by the one for
// query: following, its stream's URL is exactly the stream path plus query;
// not following (query "-"), a panel without a stream.
func waitPanel(t *testing.T, ctx context.Context, query string) {
	t.Helper()
	want := "/clusters/devcluster/apps/storefront/web/logs/stream"
	if query != "" {
		want += "?" + query
	}
	if query == "-" {
		want = "-"
	}
	waitFor(t, ctx, "the panel for "+want, func() bool {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(function(){var l=document.getElementById("logs"); if(!l) return ""; var s=l.querySelector("[sse-connect]"); return s ? s.getAttribute("sse-connect") : (l.dataset.follow==="false" ? "-" : "")})()`))
		return err == nil && v == want
	})
}

// appendDemoLog appends one line to the log file KWOK serves for an App's
// container, as the app itself would.
func appendDemoLog(t *testing.T, app, text string) {
	t.Helper()
	path := filepath.Join(demoEnv.tmp, "demo", "pod-logs", app+".log")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("demo log file: %v", err)
	}
	defer f.Close()
	if _, err := f.WriteString(time.Now().UTC().Format(time.RFC3339Nano) + " stdout F " + text + "\n"); err != nil {
		t.Fatal(err)
	}
}

// clearFilter empties the filter box without sending the form.
func clearFilter(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(function(){document.getElementById("log-filter").value=""; return true})()`)); err != nil {
		t.Fatal(err)
	}
}

// TestLogsViewer opens the web app's logs from its page, sees new lines
// arrive, filters them on the server (case toggle, ! negation), pauses and
// resumes following, and sees a hostile line rendered as text.
func TestLogsViewer(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	base := strings.TrimSuffix(demoEnv.state.URL, "/")
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/clusters/devcluster/apps/storefront/web"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=logs-link]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=logs-link]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=log-box]`)),
	); err != nil {
		screenshot(t, ctx, "no-viewer")
		t.Fatal(err)
	}
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if !strings.HasSuffix(loc, "/clusters/devcluster/apps/storefront/web/logs") {
		t.Errorf("Logs link went to %s", loc)
	}

	// Following: the tail arrives, then lines appended after it.
	rows := waitRowsGrow(t, ctx, "the tail", 0)
	waitText(t, ctx, `[data-testid=log-state]`, func(s string) bool { return s == "streaming" }, 10*time.Second)
	tail := len(rows)
	rows = waitRowsGrow(t, ctx, "new lines after the tail", tail)
	t.Logf("tail %d rows, then %d", tail, len(rows))
	pod := texts(t, ctx, `[data-testid=log-stream-pod]`)
	if len(pod) != 1 || !strings.HasPrefix(pod[0], "web-") {
		t.Errorf("stream pod = %q, want a web pod", pod)
	}
	screenshot(t, ctx, "following")

	// A hostile line is text, and runs nothing.
	const hostile = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> event: y`
	appendDemoLog(t, "web", hostile)
	waitFor(t, ctx, "the hostile line", func() bool {
		for _, r := range logRows(t, ctx) {
			if r == hostile {
				return true
			}
		}
		return false
	})
	pwned, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.__pwned !== undefined`))
	if err != nil || pwned {
		t.Errorf("hostile log line ran script (pwned %v, err %v)", pwned, err)
	}
	screenshot(t, ctx, "hostile")

	// The server-side filter, case-insensitive by default.
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID(`log-filter`), "STATUS=200")); err != nil {
		t.Fatal(err)
	}
	waitPanel(t, ctx, "filter=STATUS%3D200")
	rows = waitRowsGrow(t, ctx, "filtered rows", 0)
	for _, r := range rows {
		if !strings.Contains(strings.ToLower(r), "status=200") {
			t.Errorf("row %q passed the filter STATUS=200", r)
		}
	}
	screenshot(t, ctx, "filtered")
	// Case-sensitive: STATUS=200 matches nothing in these logs.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=log-case]`))); err != nil {
		t.Fatal(err)
	}
	waitPanel(t, ctx, "case=1&filter=STATUS%3D200")
	waitText(t, ctx, `[data-testid=log-state]`, func(s string) bool { return s == "streaming" }, 10*time.Second)
	// An explicit signal, not a window: a line that matches case-sensitively
	// arrives, and it is the only row (the logs' own lines, written before
	// and after it, have a lower-case status=200).
	const caseMarker = "e2e-marker STATUS=200 case-sensitive"
	appendDemoLog(t, "web", caseMarker)
	waitFor(t, ctx, "the case-sensitive marker", func() bool { return slices.Contains(logRows(t, ctx), caseMarker) })
	if rows := logRows(t, ctx); len(rows) != 1 {
		t.Errorf("case-sensitive STATUS=200 shows %d rows, want the marker alone: %q", len(rows), rows)
	}
	// Negated: !status=200 (case toggle back off).
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid=log-case]`)),
	); err != nil {
		t.Fatal(err)
	}
	waitPanel(t, ctx, "filter=STATUS%3D200")
	clearFilter(t, ctx)
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID(`log-filter`), "!status=200")); err != nil {
		t.Fatal(err)
	}
	waitPanel(t, ctx, "filter=%21status%3D200")
	rows = waitRowsGrow(t, ctx, "negated rows", 0)
	for _, r := range rows {
		if strings.Contains(r, "status=200") {
			t.Errorf("row %q passed the filter !status=200", r)
		}
	}
	screenshot(t, ctx, "negated")

	// Pause: follow off shows a fixed read that no longer grows.
	clearFilter(t, ctx)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=log-follow]`))); err != nil {
		t.Fatal(err)
	}
	waitPanel(t, ctx, "-")
	paused := logRows(t, ctx)
	if len(paused) == 0 {
		t.Fatal("no rows with follow off")
	}
	// A new line the server has (its logs API reads it: an explicit
	// signal) and the paused view does not show.
	const pausedMarker = "e2e-marker written while paused"
	appendDemoLog(t, "web", pausedMarker)
	waitFor(t, ctx, "the paused marker in the logs API", func() bool {
		body, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch("/v1/deploy/web/logs?namespace=storefront&tail=200").then(r => r.text())`,
			chromedp.EvalAwaitPromise))
		return err == nil && strings.Contains(body, pausedMarker)
	})
	if now := logRows(t, ctx); len(now) != len(paused) || slices.Contains(now, pausedMarker) {
		t.Errorf("rows went from %d to %d while paused (the marker shown: %v)", len(paused), len(now), slices.Contains(now, pausedMarker))
	}
	screenshot(t, ctx, "paused")

	// Resume: the stream again, and new lines keep coming.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=log-follow]`))); err != nil {
		t.Fatal(err)
	}
	waitPanel(t, ctx, "")
	rows = waitRowsGrow(t, ctx, "the tail after resuming", 0)
	waitRowsGrow(t, ctx, "new lines after resuming", len(rows))
	screenshot(t, ctx, "resumed")

	// Scrolling up pauses auto-scroll; the jump button resumes it.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(function(){var b=document.getElementById("log-box"); b.scrollTop=0; b.dispatchEvent(new Event("scroll")); return true})()`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid=log-jump]`))); err != nil {
		screenshot(t, ctx, "no-jump")
		t.Fatalf("scrolled up: no jump button: %v", err)
	}
	screenshot(t, ctx, "scrolled-up")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=log-jump]`)), chromedp.WaitNotVisible(chromedp.CSS(`[data-testid=log-jump]`))); err != nil {
		t.Fatalf("jump to the newest line: %v", err)
	}
}

// TestLogsNoPods: an app scaled to zero gets an honest empty view.
func TestLogsNoPods(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	base := strings.TrimSuffix(demoEnv.state.URL, "/")
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/clusters/devcluster/apps/payments/reports/logs")); err != nil {
		t.Fatal(err)
	}
	waitText(t, ctx, `[data-testid=log-reason]`, func(s string) bool { return strings.Contains(s, "no pods") }, 15*time.Second)
	if rows := logRows(t, ctx); len(rows) != 0 {
		t.Errorf("rows for an app without pods: %q", rows)
	}
	screenshot(t, ctx, "no-pods")
}
