package handlers

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"slices"
	"testing"

	"golang.org/x/net/html"

	"github.com/hanzoai/deploy-web/web/static"
)

func TestStaticAssets(t *testing.T) {
	ts := newTestServer(t, newFakeView(testRows()))
	hashOf := func(name string) string {
		t.Helper()
		b, err := fs.ReadFile(static.FS, name)
		if err != nil {
			t.Fatalf("fs.ReadFile(%q) error = %v", name, err)
		}
		sum := sha256.Sum256(b)
		return hex.EncodeToString(sum[:6])
	}
	const immutable = "public, max-age=31536000, immutable"
	for _, tt := range []struct {
		target, wantCache, wantType string
		wantStatus                  int
	}{
		{"/static/app.css?v=" + hashOf("app.css"), immutable, "text/css; charset=utf-8", http.StatusOK},
		{"/static/htmx-2.0.11.min.js?v=" + hashOf("htmx-2.0.11.min.js"), immutable, "text/javascript; charset=utf-8", http.StatusOK},
		{"/static/favicon.svg?v=" + hashOf("favicon.svg"), immutable, "image/svg+xml", http.StatusOK},
		{"/static/app.css", "no-cache", "text/css; charset=utf-8", http.StatusOK},
		{"/static/app.css?v=0123456789ab", "no-cache", "text/css; charset=utf-8", http.StatusOK},
		{"/static/app.css?v=" + hashOf("favicon.svg"), "no-cache", "text/css; charset=utf-8", http.StatusOK},
		{"/static/nope.css?v=" + hashOf("app.css"), "", "text/plain; charset=utf-8", http.StatusNotFound},
		{"/static/embed.go", "", "text/plain; charset=utf-8", http.StatusNotFound},
		{"/static/LICENSE.htmx", "", "text/plain; charset=utf-8", http.StatusNotFound},
	} {
		t.Run(tt.target, func(t *testing.T) {
			w := ts.do(t, request{target: tt.target})
			if w.Code != tt.wantStatus {
				t.Errorf("GET %s: status = %d, want %d", tt.target, w.Code, tt.wantStatus)
			}
			if got := w.Header().Get("Cache-Control"); got != tt.wantCache {
				t.Errorf("GET %s: Cache-Control = %q, want %q", tt.target, got, tt.wantCache)
			}
			if got := w.Header().Get("Content-Type"); got != tt.wantType {
				t.Errorf("GET %s: Content-Type = %q, want %q", tt.target, got, tt.wantType)
			}
		})
	}

	// The page links each asset at its current hash.
	doc := parseHTML(t, ts.get(t, "/", nil).Body.String())
	var links []string
	for _, n := range byTag(doc, "link") {
		links = append(links, attr(n, "href"))
		// The stylesheet is inlined: nothing in <head> blocks the first paint.
		if attr(n, "rel") == "stylesheet" {
			t.Errorf("GET /: render-blocking <link rel=stylesheet href=%q>, want the stylesheet inlined", attr(n, "href"))
		}
	}
	for _, n := range byTag(doc, "script") {
		if !slices.ContainsFunc(n.Attr, func(a html.Attribute) bool { return a.Key == "defer" }) {
			t.Errorf("GET /: <script src=%q> without defer blocks the parser", attr(n, "src"))
		}
	}
	for _, n := range byTag(doc, "script") {
		links = append(links, attr(n, "src"))
	}
	want := map[string]bool{
		"/static/favicon.svg?v=" + hashOf("favicon.svg"):                             true,
		"/static/htmx-2.0.11.min.js?v=" + hashOf("htmx-2.0.11.min.js"):               true,
		"/static/htmx-ext-sse-2.2.4.min.js?v=" + hashOf("htmx-ext-sse-2.2.4.min.js"): true,
		"/static/app.js?v=" + hashOf("app.js"):                                       true,
	}
	if len(links) != len(want) {
		t.Errorf("GET /: asset links = %q, want %d", links, len(want))
	}
	for _, l := range links {
		if !want[l] {
			t.Errorf("GET /: asset link %q, want one of the hashed URLs", l)
		}
	}
}
