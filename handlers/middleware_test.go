package handlers

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/web/static"
)

// appCSSHash is the CSP hash of app.css, computed here independently of
// the code under test.
func appCSSHash(t *testing.T) string {
	t.Helper()
	b, err := fs.ReadFile(static.FS, "app.css")
	if err != nil {
		t.Fatalf("fs.ReadFile(app.css) error = %v", err)
	}
	sum := sha256.Sum256(b)
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// TestInlineStyleHash checks that every full page inlines exactly one
// stylesheet, in <head>, that the CSP's style-src carries the hash of
// exactly the text the page inlines (and no other hash, no
// 'unsafe-inline'), and that fragments inline none.
func TestInlineStyleHash(t *testing.T) {
	for _, tt := range []struct {
		name      string
		req       request
		wantStyle bool
	}{
		{"fleet page", request{target: "/", admin: true}, true},
		{"fleet fragment", request{target: "/", admin: true, header: htmxHeader}, false},
		{"not found page", request{target: "/nope", admin: true}, true},
		{"denied page", request{target: "/"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, newFakeView(testRows()))
			w := ts.do(t, tt.req)
			styles := byTag(parseHTML(t, w.Body.String()), "style")
			csp := w.Header().Get("Content-Security-Policy")
			var styleSrc []string
			for _, d := range strings.Split(csp, ";") {
				if name, value, _ := strings.Cut(strings.TrimSpace(d), " "); name == "style-src" {
					styleSrc = strings.Fields(value)
				}
			}
			if len(styleSrc) != 2 || styleSrc[0] != "'self'" || !strings.HasPrefix(styleSrc[1], "'sha256-") {
				t.Fatalf("GET %s: CSP style-src = %q, want 'self' and one sha256 hash", tt.req.target, styleSrc)
			}
			if !tt.wantStyle {
				if len(styles) != 0 {
					t.Errorf("GET %s: %d <style> elements, want none in a fragment", tt.req.target, len(styles))
				}
				return
			}
			if len(styles) != 1 {
				t.Fatalf("GET %s: %d <style> elements, want 1", tt.req.target, len(styles))
			}
			if p := styles[0].Parent; p == nil || p.Data != "head" {
				t.Errorf("GET %s: <style> outside <head>", tt.req.target)
			}
			// The hash of the text exactly as the browser sees it.
			var inlined strings.Builder
			for c := styles[0].FirstChild; c != nil; c = c.NextSibling {
				inlined.WriteString(c.Data)
			}
			sum := sha256.Sum256([]byte(inlined.String()))
			if got, want := styleSrc[1], "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'"; got != want {
				t.Errorf("GET %s: CSP style-src hash = %s, want %s (the hash of the inlined <style>)", tt.req.target, got, want)
			}
			if got, want := styleSrc[1], "'"+appCSSHash(t)+"'"; got != want {
				t.Errorf("GET %s: CSP style-src hash = %s, want %s (the hash of app.css)", tt.req.target, got, want)
			}
			if strings.Contains(csp, "unsafe-") {
				t.Errorf("GET %s: CSP %q allows something unsafe", tt.req.target, csp)
			}
		})
	}
}

func TestSecurityHeaders(t *testing.T) {
	failing := newFakeView(testRows())
	failing.err = errors.New("boom")
	for _, tt := range []struct {
		name string
		view *fakeView
		req  request
	}{
		{"page", newFakeView(testRows()), request{target: "/", admin: true}},
		{"fragment", newFakeView(testRows()), request{target: "/", admin: true, header: htmxHeader}},
		{"api", newFakeView(testRows()), request{target: "/v1/deploy/applications", admin: true}},
		{"denied", newFakeView(testRows()), request{target: "/"}},
		{"not found", newFakeView(testRows()), request{target: "/nope", admin: true}},
		{"internal error", failing, request{target: "/", admin: true}},
		{"static", newFakeView(testRows()), request{target: "/static/app.css"}},
		{"probe", newFakeView(testRows()), request{target: "/healthz"}},
		{"login", newFakeView(testRows()), request{target: "/auth/login"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, tt.view)
			w := ts.do(t, tt.req)
			for k, want := range map[string]string{
				"X-Content-Type-Options": "nosniff",
				"Referrer-Policy":        "same-origin",
				"X-Frame-Options":        "DENY",
			} {
				if got := w.Header().Get(k); got != want {
					t.Errorf("GET %s: %s = %q, want %q", tt.req.target, k, got, want)
				}
			}
			if id := w.Header().Get("X-Request-Id"); len(id) != 16 {
				t.Errorf("GET %s: X-Request-Id = %q, want 16 hex digits", tt.req.target, id)
			}
			csp := w.Header().Get("Content-Security-Policy")
			directives := map[string]string{}
			for _, d := range strings.Split(csp, ";") {
				name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
				directives[name] = value
			}
			for name, want := range map[string]string{
				"default-src":     "'self'",
				"script-src":      "'self'",
				"style-src":       "'self' '" + appCSSHash(t) + "'",
				"frame-ancestors": "'none'",
				"base-uri":        "'none'",
				"form-action":     "'self'",
			} {
				if got := directives[name]; got != want {
					t.Errorf("GET %s: CSP %s = %q, want %q (CSP %q)", tt.req.target, name, got, want, csp)
				}
			}
			for _, bad := range []string{"unsafe-inline", "unsafe-eval", "*"} {
				if strings.Contains(csp, bad) {
					t.Errorf("GET %s: CSP %q contains %q", tt.req.target, csp, bad)
				}
			}
		})
	}
}

func TestRequestIDsDiffer(t *testing.T) {
	ts := newTestServer(t, newFakeView(testRows()))
	a := ts.do(t, request{target: "/healthz"}).Header().Get("X-Request-Id")
	b := ts.do(t, request{target: "/healthz"}).Header().Get("X-Request-Id")
	if a == b {
		t.Errorf("X-Request-Id of two requests = %q, %q, want different ids", a, b)
	}
}
