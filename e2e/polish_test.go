package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// rect is an element's box in CSS pixels.
type rect struct {
	Sel                      string
	Left, Top, Right, Bottom float64
}

func (a rect) overlaps(b rect) bool {
	const eps = 0.5
	return a.Left < b.Right-eps && b.Left < a.Right-eps && a.Top < b.Bottom-eps && b.Top < a.Bottom-eps
}

// rects returns the boxes of the visible elements matching sel.
func rects(t *testing.T, ctx context.Context, sel string) []rect {
	t.Helper()
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]rect](`Array.from(document.querySelectorAll(`+jsString(sel)+`)).map(e => e.getBoundingClientRect()).filter(r => r.width > 0 && r.height > 0).map(r => ({Sel: `+jsString(sel)+`, Left: r.left, Top: r.top, Right: r.right, Bottom: r.bottom}))`))
	if err != nil {
		t.Fatalf("rects(%s): %v", sel, err)
	}
	return out
}

func oneRect(t *testing.T, ctx context.Context, sel string) rect {
	t.Helper()
	rs := rects(t, ctx, sel)
	if len(rs) != 1 {
		screenshot(t, ctx, "missing-element")
		t.Fatalf("visible %s: %d, want 1", sel, len(rs))
	}
	return rs[0]
}

// checkNoSideScroll fails when the page is wider than the screen: part of
// it would be off to the side on a phone. The screen is the narrowest of
// window.innerWidth, the root's clientWidth and screen.width: with mobile
// emulation Chromium zooms out to fit a too-wide page, and innerWidth
// grows with it (to 809 for a 809px page on a 390px phone).
func checkNoSideScroll(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	w, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, Math.min(window.innerWidth, document.documentElement.clientWidth, screen.width)]`))
	if err != nil {
		t.Fatal(err)
	}
	if w[0] > w[1] {
		screenshot(t, ctx, page+"-too-wide")
		t.Errorf("%s on a phone is %dpx wide, the screen %dpx: part of it is off to the side", page, w[0], w[1])
	}
}

func navigate(t *testing.T, ctx context.Context, path, visible string) {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.Navigate(strings.TrimSuffix(demoEnv.state.URL, "/")+path),
		chromedp.WaitVisible(chromedp.CSS(visible)),
	); err != nil {
		screenshot(t, ctx, "navigate-failed")
		t.Fatalf("open %s, wait for %s: %v", path, visible, err)
	}
}

// TestCulpritLinksAndTreeFit opens an app that is not healthy: the header
// lists each object behind its health as a link with its message; a click
// opens that object's panel, and with the panel open every tree node stays
// inside the tree's box (the tree scales to its column) with the selected
// node in view.
func TestCulpritLinksAndTreeFit(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	navigate(t, ctx, "/clusters/devcluster/apps/storefront/catalog", `[data-testid=tree]`)
	waitVisible(t, ctx, `[data-testid=culprit-link]`, 60*time.Second)
	screenshot(t, ctx, "header")

	refs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[data-testid=culprit-link]')).map(a => a.dataset.ref)`))
	if err != nil {
		t.Fatal(err)
	}
	if !contains(refs, "apps:Deployment:storefront:catalog") {
		t.Fatalf("culprit links = %q, want the Deployment apps:Deployment:storefront:catalog among them", refs)
	}
	msgs := texts(t, ctx, `[data-testid=culprit] .culprit-msg`)
	if len(msgs) == 0 || msgs[0] == "" {
		t.Errorf("culprit messages = %q, want each culprit's message beside its link", msgs)
	}
	// No run-on text: the header holds no "Caused by" sentence any more.
	if hdr := texts(t, ctx, `[data-testid=app-header]`); len(hdr) != 1 || strings.Contains(hdr[0], "Caused by") {
		t.Errorf("app header = %q, want culprits as a list, not a 'Caused by' sentence", hdr)
	}

	sel := `[data-testid=culprit-link][data-ref="apps:Deployment:storefront:catalog"]`
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(sel)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=resource-panel][data-ref="apps:Deployment:storefront:catalog"]`)),
	); err != nil {
		screenshot(t, ctx, "culprit-click")
		t.Fatalf("culprit link opens no panel: %v", err)
	}
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if !strings.Contains(loc, "/resource/") {
		t.Errorf("URL after the culprit click = %q, want the resource's bookmarkable URL", loc)
	}
	waitFor(t, ctx, "the selected tree node", func() bool {
		return len(rects(t, ctx, `svg.tree .node.selected`)) == 1
	})
	checkTreeFits(t, ctx)
	screenshot(t, ctx, "panel-open")

	// The same on a fresh load of the bookmark (panel rendered by the server).
	navigate(t, ctx, "/clusters/devcluster/apps/storefront/checkout/resource/apps:Deployment:storefront:checkout", `[data-testid=resource-panel]`)
	checkTreeFits(t, ctx)
	screenshot(t, ctx, "bookmark-panel-open")
}

// checkTreeFits fails when a tree node sticks out of the tree's box or the
// selected node is out of view.
func checkTreeFits(t *testing.T, ctx context.Context) {
	t.Helper()
	box := oneRect(t, ctx, `[data-testid=tree]`)
	nodes := rects(t, ctx, `svg.tree .node .card`)
	if len(nodes) == 0 {
		t.Fatal("no tree nodes")
	}
	for i, n := range nodes {
		if n.Left < box.Left-1 || n.Right > box.Right+1 {
			screenshot(t, ctx, "tree-clipped")
			t.Fatalf("tree node %d spans x %.0f-%.0f, outside the tree's box %.0f-%.0f: clipped", i, n.Left, n.Right, box.Left, box.Right)
		}
	}
	panel := oneRect(t, ctx, `[data-testid=resource-panel]`)
	if box.overlaps(panel) {
		t.Errorf("tree box %+v overlaps the panel %+v", box, panel)
	}
	selected := rects(t, ctx, `svg.tree .node.selected .card`)
	if len(selected) != 1 {
		t.Fatalf("selected tree nodes: %d, want 1", len(selected))
	}
	s := selected[0]
	if s.Top < box.Top-1 || s.Bottom > box.Bottom+1 {
		screenshot(t, ctx, "selected-out-of-view")
		t.Errorf("selected node y %.0f-%.0f is outside the tree's visible box %.0f-%.0f", s.Top, s.Bottom, box.Top, box.Bottom)
	}
}

// TestPhoneLayout looks at the pages at 390x844: the fleet's rows are
// cards that show name, health, sync and versions within the screen, and
// nothing in the app header overlaps.
func TestPhoneLayout(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}
	navigate(t, ctx, "/?namespace=storefront", `[data-testid=app-row]`)
	screenshot(t, ctx, "fleet")
	checkNoSideScroll(t, ctx, "fleet")
	// The top bar: every section (an admin's six) and the search button
	// within the screen, none scrolled out of its row.
	nav := rects(t, ctx, `.mainnav a`)
	if len(nav) < 6 {
		t.Errorf("phone top bar: %d section links drawn, want an admin's 6", len(nav))
	}
	for _, r := range append(nav, rects(t, ctx, `[data-testid=topbar-search-link]`)...) {
		if r.Left < 0 || r.Right > 390 {
			screenshot(t, ctx, "topbar-clipped")
			t.Errorf("phone top bar: %s spans x %.0f-%.0f, off a 390px screen", r.Sel, r.Left, r.Right)
		}
	}
	if w, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`(() => { const n = document.querySelector('.mainnav'); return n.scrollWidth - n.clientWidth; })()`)); err != nil || w > 0 {
		t.Errorf("phone top bar: the section links overflow their row by %.0fpx (%v), want them all drawn", w, err)
	}
	for _, sel := range []string{
		`[data-testid=app-row] .c-name a`, `[data-testid=app-row] [data-testid=health]`,
		`[data-testid=app-row] [data-testid=sync]`, `[data-testid=app-row] [data-testid=version-chip]`,
	} {
		rs := rects(t, ctx, sel)
		if len(rs) == 0 {
			t.Errorf("phone fleet: no visible %s", sel)
		}
		for _, r := range rs {
			if r.Left < 0 || r.Right > 390 {
				t.Errorf("phone fleet: %s spans x %.0f-%.0f, off a 390px screen", sel, r.Left, r.Right)
				break
			}
		}
	}
	// In each card, the name, the badges and the versions do not overlap.
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid=app-row]').length`))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		row := `[data-testid=app-row]:nth-child(` + strconv.Itoa(i) + `) `
		var parts []rect
		for _, sel := range []string{".c-name", ".c-health", ".c-sync", ".c-running", ".c-ready"} {
			parts = append(parts, rects(t, ctx, row+sel)...)
		}
		for a := range parts {
			for b := a + 1; b < len(parts); b++ {
				if parts[a].overlaps(parts[b]) {
					screenshot(t, ctx, "fleet-overlap")
					t.Fatalf("phone fleet row %d: %s overlaps %s", i, parts[a].Sel, parts[b].Sel)
				}
			}
		}
	}

	navigate(t, ctx, "/clusters/devcluster/apps/storefront/catalog", `[data-testid=tree]`)
	waitVisible(t, ctx, `[data-testid=culprit-link]`, 60*time.Second)
	screenshot(t, ctx, "app")
	checkNoSideScroll(t, ctx, "app page")
	facts := rects(t, ctx, `[data-testid=app-header] .facts > div`)
	facts = append(facts, rects(t, ctx, `[data-testid=app-header] [data-testid=health-message]`)...)
	for a := range facts {
		if facts[a].Right > 390 {
			t.Errorf("phone app header: %s ends at x %.0f, off a 390px screen", facts[a].Sel, facts[a].Right)
		}
		for b := a + 1; b < len(facts); b++ {
			if facts[a].overlaps(facts[b]) {
				screenshot(t, ctx, "header-overlap")
				t.Fatalf("phone app header: %s %+v overlaps %s %+v", facts[a].Sel, facts[a], facts[b].Sel, facts[b])
			}
		}
	}
	navigate(t, ctx, "/clusters/devcluster/apps/storefront/catalog/resource/apps:Deployment:storefront:catalog", `[data-testid=resource-panel]`)
	screenshot(t, ctx, "app-panel")
	navigate(t, ctx, "/environments", `header.topbar`)
	screenshot(t, ctx, "environments")
	checkNoSideScroll(t, ctx, "environments")
	navigate(t, ctx, "/environments/dev", `header.topbar`)
	screenshot(t, ctx, "environment-dev")
}

// TestScreenshotsDesktop keeps a 1440x900 screenshot of every page.
func TestScreenshotsDesktop(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	for _, p := range []struct{ name, path, visible string }{
		{"fleet", "/", `[data-testid=app-row]`},
		{"fleet-storefront", "/?namespace=storefront", `[data-testid=app-row]`},
		{"app", "/clusters/devcluster/apps/storefront/checkout", `[data-testid=tree]`},
		{"app-list", "/clusters/devcluster/apps/storefront/checkout?view=list", `[data-testid=tree-list]`},
		{"app-panel", "/clusters/devcluster/apps/storefront/web/resource/apps:Deployment:storefront:web", `[data-testid=resource-panel]`},
		{"logs", "/clusters/devcluster/apps/storefront/web/logs", `header.topbar`},
		{"environments", "/environments", `header.topbar`},
		{"environment-dev", "/environments/dev", `header.topbar`},
	} {
		navigate(t, ctx, p.path, p.visible)
		if err := chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, p.name)
	}
}
