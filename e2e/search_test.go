package e2e

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// activeTestID is the data-testid of the focused element.
func activeTestID(t *testing.T, ctx context.Context) string {
	t.Helper()
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement ? (document.activeElement.getAttribute('data-testid') || '') : ''`))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// pressSlash presses "/" as a keyboard does: one keyDown that carries its
// text (so a handler's preventDefault keeps the character out, as in a
// real browser; chromedp.KeyEvent sends the character as an event of its
// own), then keyUp.
func pressSlash(t *testing.T, ctx context.Context) {
	t.Helper()
	for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
		p := input.DispatchKeyEventParams{Type: typ, Key: "/", Code: "Slash", WindowsVirtualKeyCode: 191, NativeVirtualKeyCode: 191}
		if typ == input.DispatchKeyEventTypeKeyDown {
			p.Text, p.UnmodifiedText = "/", "/"
		}
		if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSearchBox: "/" focuses the top bar's search box (and types a slash
// into another field when one has the focus); typing there shows the
// fleet's results as HTMX swaps them in, grouped by App across both
// clusters, at a bookmarkable /search URL; a hit opens the resource's
// panel; the bookmark loads fresh.
func TestSearchBox(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	navigate(t, ctx, "/?namespace=storefront", `[data-testid=app-row]`)

	// In the fleet's own filter, "/" is a character.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=search]`))); err != nil {
		t.Fatal(err)
	}
	pressSlash(t, ctx)
	if id := activeTestID(t, ctx); id != "search" {
		t.Errorf(`"/" typed in the fleet's filter moved the focus to %q`, id)
	}
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=search]').value`))
	if err != nil || v != "/" {
		t.Errorf(`fleet filter after "/" = %q, %v; want "/"`, v, err)
	}
	// Anywhere else, "/" focuses the box.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid=search]').value=''; document.activeElement.blur()`)); err != nil {
		t.Fatal(err)
	}
	pressSlash(t, ctx)
	if id := activeTestID(t, ctx); id != "topbar-search-input" {
		t.Fatalf(`"/" on the page focused %q, want the top bar's search box`, id)
	}
	if v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.value`)); err != nil || v != "" {
		t.Errorf(`the box after "/" holds %q, %v; want it empty (the "/" only focuses)`, v, err)
	}

	// Typing shows the results.
	if err := chromedp.Do(ctx, chromedp.KeyEvent("kind:Deployment cart")); err != nil {
		t.Fatal(err)
	}
	waitVisible(t, ctx, `[data-testid=search-hit]`, 60*time.Second)
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if u, err := url.Parse(loc); err != nil || u.Path != "/search" || u.Query().Get("q") != "kind:Deployment cart" {
		t.Errorf("after typing, the address is %s, want /search?q=kind:Deployment cart", loc)
	}
	clusters, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[data-testid=search-group] .search-where')).map(e => e.textContent.trim())`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{homeCluster, secondCluster} {
		if !slices.ContainsFunc(clusters, func(s string) bool { return strings.HasSuffix(s, c) }) {
			t.Errorf("results of kind:Deployment cart are in %q, want a group in %s", clusters, c)
		}
	}
	screenshot(t, ctx, "typed")

	// A hit opens its panel.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=search-hit] a`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=resource-panel]`))); err != nil {
		screenshot(t, ctx, "hit-failed")
		t.Fatalf("click a hit: %v", err)
	}
	// The bookmark loads fresh, with the query in the box.
	navigate(t, ctx, "/search?q="+url.QueryEscape("kind:Deployment cart"), `[data-testid=search-hit]`)
	v, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-testid=topbar-search-input]').value`))
	if err != nil || v != "kind:Deployment cart" {
		t.Errorf("fresh /search: box value %q, %v; want the query", v, err)
	}
	// Adding a term to the box narrows the results in place.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=topbar-search-input]`)), chromedp.KeyEvent(kb.End)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(" cluster:"+secondCluster)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		clusters, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[data-testid=search-group] .search-where')).map(e => e.textContent.trim())`))
		if err == nil && len(clusters) > 0 && !slices.ContainsFunc(clusters, func(s string) bool { return strings.HasSuffix(s, homeCluster) }) {
			break
		}
		if time.Now().After(deadline) {
			screenshot(t, ctx, "refine-failed")
			t.Fatalf("after adding cluster:%s the groups are in %q, want %s only", secondCluster, clusters, secondCluster)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// rootBackground is the page's background colour (app.css draws it on
// <html> from --bg).
func rootBackground(t *testing.T, ctx context.Context) string {
	t.Helper()
	bg, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.documentElement).backgroundColor`))
	if err != nil {
		t.Fatal(err)
	}
	return bg
}

// The page backgrounds of the two themes (--bg).
const (
	lightBackground = "rgb(245, 247, 250)"
	darkBackground  = "rgb(15, 20, 25)"
)

// TestThemes: the pages follow the system's colour scheme; the theme
// picker's choice is kept in a cookie the server draws on <html>, so a
// fresh load has it at once; desktop and phone screenshots of the pages in
// both themes, with no page wider than a phone or cramped.
func TestThemes(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	navigate(t, ctx, "/", `[data-testid=app-row]`)
	if bg := rootBackground(t, ctx); bg != lightBackground {
		t.Errorf("light system, no choice: background %s, want %s", bg, lightBackground)
	}
	// System: dark.
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}); err != nil {
		t.Fatal(err)
	}
	if bg := rootBackground(t, ctx); bg != darkBackground {
		t.Errorf("dark system, no choice: background %s, want %s", bg, darkBackground)
	}
	// The person picks light on a dark system: the page turns light at
	// once and after a reload (the server draws the cookie's choice).
	pick := func(theme string) {
		t.Helper()
		if err := chromedp.Do(ctx,
			chromedp.SetValue(chromedp.CSS(`[data-testid=theme-toggle]`), theme),
			chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid=theme-toggle]').dispatchEvent(new Event('change', {bubbles: true}))`),
		); err != nil {
			t.Fatal(err)
		}
	}
	pick("light")
	if bg := rootBackground(t, ctx); bg != lightBackground {
		t.Errorf("picked light on a dark system: background %s, want %s", bg, lightBackground)
	}
	navigate(t, ctx, "/", `[data-testid=app-row]`)
	attr, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.getAttribute('data-theme') || ''`))
	if err != nil || attr != "light" || rootBackground(t, ctx) != lightBackground {
		t.Errorf("reload after picking light: <html data-theme=%q>, background %s; want light", attr, rootBackground(t, ctx))
	}

	pages := []struct{ name, path, visible string }{
		{"fleet", "/?namespace=storefront", `[data-testid=app-row]`},
		{"search", "/search?q=" + url.QueryEscape("cart"), `[data-testid=search-hit]`},
		{"search-help", "/search", `[data-testid=search-help]`},
		{"app", "/clusters/devcluster/apps/storefront/checkout", `[data-testid=tree]`},
		{"app-panel", "/clusters/devcluster/apps/storefront/web/resource/apps:Deployment:storefront:web", `[data-testid=resource-panel]`},
		{"timeline", "/clusters/devcluster/apps/storefront/web/timeline", `header.topbar`},
		{"environment-dev", "/environments/dev", `header.topbar`},
	}
	for _, theme := range []string{"light", "dark"} {
		pick(theme)
		for _, size := range screenSizes() {
			emulateScreen(t, ctx, size)
			for _, p := range pages {
				navigate(t, ctx, p.path, p.visible)
				if got := rootBackground(t, ctx); (theme == "dark") != (got == darkBackground) {
					t.Errorf("%s %s: background %s, want the %s theme's", theme, p.name, got, theme)
				}
				if err := chromedp.Do(ctx, chromedp.Sleep(300*time.Millisecond)); err != nil {
					t.Fatal(err)
				}
				screenshot(t, ctx, theme+"-"+size.name+"-"+p.name)
				if size.phone {
					checkNoSideScroll(t, ctx, theme+" "+p.name)
					checkNotCramped(t, ctx, theme+" "+p.name)
				}
			}
		}
	}
	pick("system")
	navigate(t, ctx, "/", `[data-testid=app-row]`)
	if attr, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.getAttribute('data-theme') || ''`)); err != nil || attr != "" {
		t.Errorf("after picking system: <html data-theme=%q>, want none", attr)
	}
	if bg := rootBackground(t, ctx); bg != darkBackground {
		t.Errorf("system again on a dark system: background %s, want %s", bg, darkBackground)
	}
}
