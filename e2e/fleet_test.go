package e2e

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/hanzoai/deploy-web/appcr"
)

// TestFilterDegraded picks Health = Degraded in the filter bar and sees only
// degraded apps; the filtered view is a URL that reproduces it on reload.
func TestFilterDegraded(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	// checkout turns Degraded once its rollout deadline (25s) has passed;
	// wait for it, not for any Degraded app: eu-west's pricing can get
	// there first, and the list would then rightly lack checkout.
	waitText(t, ctx, `[data-testid=app-row][data-app=checkout][data-cluster=devcluster] [data-testid=health]`, func(s string) bool { return strings.TrimSpace(s) == "Degraded" }, 90*time.Second)

	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`[data-testid=filter-health]`), "Degraded"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid=filter-health]').dispatchEvent(new Event('change', {bubbles: true}))`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "only degraded rows", func() bool {
		healths := texts(t, ctx, `[data-testid=app-row] [data-testid=health]`)
		if len(healths) == 0 {
			return false
		}
		for _, h := range healths {
			if strings.TrimSpace(h) != "Degraded" {
				return false
			}
		}
		return true
	})
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(loc, "health=Degraded") {
		t.Errorf("URL after filtering = %q, want it to carry health=Degraded", loc)
	}
	names := texts(t, ctx, `[data-testid=app-row] .app-name a`)
	screenshot(t, ctx, "degraded")

	// The same URL, loaded fresh, shows the same view.
	if err := chromedp.Do(ctx, chromedp.Navigate(loc), chromedp.WaitVisible(chromedp.CSS(`[data-testid=apps-table]`))); err != nil {
		t.Fatal(err)
	}
	if again := texts(t, ctx, `[data-testid=app-row] .app-name a`); strings.Join(again, ",") != strings.Join(names, ",") {
		t.Errorf("reloaded %s shows %v, want %v", loc, again, names)
	}
	if !contains(names, "checkout") {
		t.Errorf("degraded apps = %v, want checkout among them", names)
	}
}

// TestAppAppearsLive creates an App with the cluster API while the list is
// open, and sees its row appear without a reload.
func TestAppAppearsLive(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid=apps-table]`)),
		chromedp.Evaluate[chromedp.Void](`window.__marker = 'no-reload'`)); err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(demoEnv.restConfig(t))
	name := "live-" + time.Now().Format("150405")
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hanzo.ai/v1", "kind": "App",
		"metadata": map[string]any{"name": name, "namespace": "payments"},
		"spec":     map[string]any{"image": "registry.demo.local/payments/" + name + ":1.0.0", "replicas": int64(1)},
	}}
	apps := dyn.Resource(appcr.Resource).Namespace("payments")
	if _, err := apps.Create(context.Background(), app, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apps.Delete(context.Background(), name, metav1.DeleteOptions{}) })

	waitFor(t, ctx, "the new row", func() bool {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid=app-row][data-app="`+name+`"]').length`))
		return err == nil && n == 1
	})
	marker, err := chromedp.Run(ctx, chromedp.Evaluate[string](`String(window.__marker)`))
	if err != nil || marker != "no-reload" {
		t.Errorf("page was reloaded (marker %q, %v), want an HTMX refresh", marker, err)
	}
	// And it turns Healthy and Synced once the operator and KWOK are done.
	waitText(t, ctx, `[data-app="`+name+`"] [data-testid=sync]`, func(s string) bool { return strings.TrimSpace(s) == "Synced" }, 60*time.Second)
	screenshot(t, ctx, "live")
}

func texts(t *testing.T, ctx context.Context, sel string) []string {
	t.Helper()
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(`+jsString(sel)+`)).map(e => e.textContent.trim())`))
	if err != nil {
		t.Fatalf("texts(%s): %v", sel, err)
	}
	return out
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			screenshot(t, ctx, "timeout")
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func waitText(t *testing.T, ctx context.Context, sel string, ok func(string) bool, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := texts(t, ctx, sel)
		if len(got) > 0 && ok(got[0]) {
			return
		}
		if time.Now().After(deadline) {
			screenshot(t, ctx, "timeout")
			t.Fatalf("%s = %q after %s", sel, got, timeout)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestFleetReadsAsTable checks what the fleet's grid rows (issue 18: each
// row a grid box, not a table row) must keep. To a
// screen reader it is still a table at both widths: one table whose column
// headers are the columns, a row per app, and in every row (above the fold
// or far below it) a cell per column, the app's name first: no row may read
// empty, as rows skipped by content-visibility do in Chromium. On a wide
// screen every row's cells start where their column's header starts (the
// columns come from one template, not from the rows' content) and every
// row is as tall as the first, so a refresh never moves the rows below.
func TestFleetReadsAsTable(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	for _, size := range screenSizes() {
		emulateScreen(t, ctx, size)
		navigate(t, ctx, "/", `[data-testid=app-row]`)
		apps := texts(t, ctx, `[data-testid=app-row] .app-name a`)
		headers := texts(t, ctx, `[data-testid=apps-table] thead th`)
		if len(apps) < 2 || len(headers) < 7 {
			t.Fatalf("%s: %d rows and headers %q, want a fleet of several apps and every column", size.name, len(apps), headers)
		}

		check := func(when string) {
			tables := axTables(t, ctx)
			if len(tables) != 1 {
				t.Fatalf("%s%s: %d tables in the accessibility tree, want 1 (the fleet)", size.name, when, len(tables))
			}
			tbl := tables[0]
			// (Case aside: the headers are uppercased by the stylesheet,
			// which Chromium's names follow.)
			if !strings.EqualFold(strings.Join(tbl.headers, "|"), strings.Join(headers, "|")) {
				t.Errorf("%s%s: column headers read %q, want %q", size.name, when, tbl.headers, headers)
			}
			if len(tbl.rows) != len(apps) {
				t.Fatalf("%s%s: %d rows read, want %d (one per app)", size.name, when, len(tbl.rows), len(apps))
			}
			for i, cells := range tbl.rows {
				if len(cells) != len(headers) || !strings.HasPrefix(cells[0], apps[i]) {
					t.Errorf("%s%s: row %d reads %q, want %d cells starting with %q", size.name, when, i+1, cells, len(headers), apps[i])
				}
			}
		}
		check("")
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.documentElement.scrollHeight)`), chromedp.Sleep(500*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		check(" at the bottom")

		if size.phone {
			continue
		}
		// Columns: for every row, each cell's left edge minus its header's.
		off, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => {
			const th = Array.from(document.querySelectorAll('[data-testid=apps-table] thead th')).map(e => e.getBoundingClientRect());
			return Array.from(document.querySelectorAll('[data-testid=app-row]')).map(r =>
				Math.max(...Array.from(r.children).map((c, i) => {
					const b = c.getBoundingClientRect();
					return Math.max(Math.abs(b.left - th[i].left), Math.abs(b.width - th[i].width));
				})));
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range off {
			if d > 0.5 {
				screenshot(t, ctx, "columns")
				t.Errorf("desktop: row %d (%s) has a cell %.1fpx off its column header", i+1, apps[i], d)
			}
		}
		// Heights: every row as tall as the first without its border (the
		// last row has none), with or without a health reason.
		h, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`Array.from(document.querySelectorAll('[data-testid=app-row]')).map(r => r.getBoundingClientRect().height - parseFloat(getComputedStyle(r).borderBottomWidth))`))
		if err != nil {
			t.Fatal(err)
		}
		for i, got := range h {
			if math.Abs(got-h[0]) > 0.5 {
				screenshot(t, ctx, "row-height")
				t.Errorf("desktop: row %d (%s) is %.1fpx tall without its border, want %.1fpx as the first row", i+1, apps[i], got, h[0])
			}
		}
	}
}

// axTable is a table as the accessibility tree reads it: its column
// headers' names and, per other row, its cells' names (none for a row
// whose cells the tree leaves out).
type axTable struct {
	headers []string
	rows    [][]string
}

// axTables reads the page's accessibility tree (as a screen reader gets
// it) and returns its tables.
func axTables(t *testing.T, ctx context.Context) []axTable {
	t.Helper()
	res, err := chromedp.Run(ctx, func(ctx context.Context, tg *chromedp.Target) (accessibility.GetFullAXTreeResult, error) {
		return cdp.Call(ctx, tg, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[accessibility.NodeID]*accessibility.Node{}
	for _, n := range res.Nodes {
		byID[n.NodeID] = n
	}
	str := func(v *accessibility.Value) string {
		if v == nil {
			return ""
		}
		var s string
		_ = json.Unmarshal(v.Value, &s)
		return strings.TrimSpace(s)
	}
	// walk visits n's descendants, looking through ignored nodes and
	// generic containers (a row group) to the nodes that have a role.
	var walk func(n *accessibility.Node, visit func(*accessibility.Node) bool)
	walk = func(n *accessibility.Node, visit func(*accessibility.Node) bool) {
		for _, id := range n.ChildIDs {
			c := byID[id]
			if c == nil {
				continue
			}
			if c.Ignored || !visit(c) {
				walk(c, visit)
			}
		}
	}
	var out []axTable
	for _, n := range res.Nodes {
		if n.Ignored || str(n.Role) != "table" {
			continue
		}
		var tbl axTable
		walk(n, func(r *accessibility.Node) bool {
			if str(r.Role) != "row" {
				return false
			}
			var cells, headers []string
			walk(r, func(c *accessibility.Node) bool {
				switch str(c.Role) {
				case "columnheader":
					headers = append(headers, str(c.Name))
					return true
				case "cell", "gridcell":
					cells = append(cells, str(c.Name))
					return true
				}
				return false
			})
			if headers != nil {
				tbl.headers = append(tbl.headers, headers...)
			} else {
				tbl.rows = append(tbl.rows, cells)
			}
			return true
		})
		out = append(out, tbl)
	}
	return out
}
