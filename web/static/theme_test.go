package static

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// themeColours reads the custom properties of app.css's :root blocks as
// (light, dark) pairs: light-dark(a, b) gives both, a plain colour is the
// same in both themes.
func themeColours(t *testing.T) map[string][2]string {
	t.Helper()
	b, err := FS.ReadFile("app.css")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]string{}
	block := regexp.MustCompile(`(?s):root \{(.*?)\}`)
	decl := regexp.MustCompile(`(--[\w-]+):\s*([^;]+);`)
	ld := regexp.MustCompile(`^light-dark\(\s*(#[0-9a-fA-F]{6})\s*,\s*(#[0-9a-fA-F]{6})\s*\)$`)
	hex := regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)
	for _, m := range block.FindAllStringSubmatch(string(b), -1) {
		for _, d := range decl.FindAllStringSubmatch(m[1], -1) {
			v := strings.TrimSpace(d[2])
			switch {
			case ld.MatchString(v):
				p := ld.FindStringSubmatch(v)
				out[d[1]] = [2]string{p[1], p[2]}
			case hex.MatchString(v):
				out[d[1]] = [2]string{v, v}
			}
		}
	}
	return out
}

// luminance is the WCAG relative luminance of "#rrggbb".
func luminance(t *testing.T, hex string) float64 {
	t.Helper()
	var c [3]float64
	for i := range c {
		n, err := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		if err != nil {
			t.Fatalf("colour %q: %v", hex, err)
		}
		v := float64(n) / 255
		if v <= 0.04045 {
			c[i] = v / 12.92
		} else {
			c[i] = math.Pow((v+0.055)/1.055, 2.4)
		}
	}
	return 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2]
}

// contrast is the WCAG contrast ratio of two colours.
func contrast(t *testing.T, a, b string) float64 {
	la, lb := luminance(t, a), luminance(t, b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// TestThemeContrast: every pair of custom properties that app.css draws
// as text on a background reaches WCAG AA (4.5:1) in both themes: the
// page's text, the health and sync badges (colour on its tint, and on the
// panel, where the tree and the timeline draw it), the diff's signs and
// line numbers, text on the accent and on a degraded button. A pair
// below AA, or a property missing, fails.
func TestThemeContrast(t *testing.T) {
	colours := themeColours(t)
	type pair struct{ fg, bg string }
	pairs := []pair{
		{"--ink", "--bg"}, {"--ink", "--panel"}, {"--ink-2", "--panel"}, {"--ink-2", "--bg"},
		{"--muted", "--panel"}, {"--muted", "--bg"}, {"--accent", "--panel"}, {"--accent", "--bg"},
		{"--on-accent", "--accent"}, {"--on-accent", "--degraded"}, {"--on-accent", "--drift"},
		{"--ink", "--field"}, {"--ink", "--line-2"},
		{"--diff-del-ink", "--diff-del-ln-bg"}, {"--diff-ins-ink", "--diff-ins-ln-bg"},
		{"--diff-del-ink", "--diff-del-bg"}, {"--diff-ins-ink", "--diff-ins-bg"},
		{"--ink", "--diff-del-bg"}, {"--ink", "--diff-ins-bg"}, {"--ink", "--diff-blank-bg"},
		{"--drift", "--drift-bg"}, {"--drift", "--panel"},
	}
	for _, h := range []string{"healthy", "progressing", "degraded", "suspended", "missing", "unknown", "synced", "outofsync"} {
		pairs = append(pairs, pair{"--" + h, "--" + h + "-bg"}, pair{"--" + h, "--panel"})
	}
	for _, p := range pairs {
		fg, ok1 := colours[p.fg]
		bg, ok2 := colours[p.bg]
		if !ok1 || !ok2 {
			t.Errorf("%s on %s: not both defined as colours in :root (%v, %v)", p.fg, p.bg, ok1, ok2)
			continue
		}
		for i, theme := range []string{"light", "dark"} {
			if r := contrast(t, fg[i], bg[i]); r < 4.5 {
				t.Errorf("%s theme: %s (%s) on %s (%s) = %.2f:1, want at least 4.5:1 (WCAG AA)", theme, p.fg, fg[i], p.bg, bg[i], r)
			}
		}
	}
}

// TestThemeFollowsChoice: app.css lets the system choose the theme
// (color-scheme: light dark) unless <html data-theme> holds the person's
// choice, and every colour of :root has a dark value.
func TestThemeFollowsChoice(t *testing.T) {
	b, err := FS.ReadFile("app.css")
	if err != nil {
		t.Fatal(err)
	}
	css := string(b)
	for _, want := range []string{":root[data-theme=light] { color-scheme: light; }", ":root[data-theme=dark] { color-scheme: dark; }", "color-scheme: light dark;"} {
		if !strings.Contains(css, want) {
			t.Errorf("app.css lacks %q", want)
		}
	}
	for name, c := range themeColours(t) {
		if c[0] == c[1] {
			t.Errorf("%s is %s in both themes, want a light-dark() pair", name, c[0])
		}
	}
}
