package handlers

import (
	"errors"
	"strings"
	"testing"
)

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
				"style-src":       "'self'",
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
