package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/kubeview"
)

// wantPublic is every route that may be served without authentication
// (DESIGN.md, security invariant 1). Adding a public route means changing
// this list, in review.
var wantPublic = []string{
	"GET /auth/callback",
	"GET /auth/login",
	"GET /healthz",
	"GET /readyz",
	"GET /static/{file}",
	"POST /auth/logout",
}

// requestFor returns a method and a path that pattern matches.
func requestFor(pattern string) (method, path string) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = http.MethodGet, pattern
	}
	segs := strings.Split(path, "/")
	for i, s := range segs {
		switch {
		case s == "{$}":
			segs[i] = ""
		case s == "{file}":
			segs[i] = "app.css"
		case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "...}"):
			segs[i] = "x/y"
		case strings.HasPrefix(s, "{"):
			segs[i] = "x"
		}
	}
	path = strings.Join(segs, "/")
	if strings.HasSuffix(pattern, "/") {
		path += "no-such-page" // a subtree pattern: some URL under it
	}
	return method, path
}

func TestRequestFor(t *testing.T) {
	for _, tt := range []struct{ pattern, method, path string }{
		{"GET /{$}", "GET", "/"},
		{"/", "GET", "/no-such-page"},
		{"GET /static/{file}", "GET", "/static/app.css"},
		{"POST /v1/deploy/{name}/sync", "POST", "/v1/deploy/x/sync"},
		{"GET /v1/deploy/{name}/resource/{ref...}", "GET", "/v1/deploy/x/resource/x/y"},
	} {
		method, path := requestFor(tt.pattern)
		if method != tt.method || path != tt.path {
			t.Errorf("requestFor(%q) = %q, %q, want %q, %q", tt.pattern, method, path, tt.method, tt.path)
		}
	}
}

func TestPublicRoutesAreExactlyTheAllowList(t *testing.T) {
	ts := newTestServer(t, newFakeView(testRows()))
	var public []string
	for _, rt := range ts.srv.routes {
		if rt.public {
			public = append(public, rt.pattern)
		}
	}
	slices.Sort(public)
	if diff := cmp.Diff(wantPublic, public); diff != "" {
		t.Errorf("public routes mismatch (-want +got):\n%s", diff)
	}
}

func TestProtectedRoutesDenyUnauthenticated(t *testing.T) {
	ts := newTestServer(t, newFakeView(testRows()))
	var protected []string
	for _, rt := range ts.srv.routes {
		if !rt.public {
			protected = append(protected, rt.pattern)
		}
	}
	// The catch-all must be protected, or unknown URLs would escape Require.
	if !slices.Contains(protected, "/") {
		t.Errorf("protected routes = %q, want the catch-all %q among them", protected, "/")
	}
	for _, pattern := range protected {
		method, path := requestFor(pattern)
		for _, variant := range []struct {
			name   string
			header map[string]string
		}{
			{"plain", nil},
			{"htmx", htmxHeader},
			{"json", map[string]string{"Accept": "application/json"}},
		} {
			t.Run(pattern+"/"+variant.name, func(t *testing.T) {
				beforeReq, beforeDenied := ts.auth.counts()
				w := ts.do(t, request{method: method, target: path, header: variant.header})
				if w.Code != http.StatusUnauthorized {
					t.Errorf("%s %s unauthenticated: status = %d, want %d", method, path, w.Code, http.StatusUnauthorized)
				}
				req, denied := ts.auth.counts()
				if req != beforeReq+1 || denied != beforeDenied+1 {
					t.Errorf("%s %s unauthenticated: Require saw %d and denied %d requests, want 1 and 1", method, path, req-beforeReq, denied-beforeDenied)
				}
				if got, want := ts.auth.last(), method+" "+path; got != want {
					t.Errorf("%s %s unauthenticated: Require saw %q, want %q", method, path, got, want)
				}
				// "items" quoted: the JSON list's key (the inlined stylesheet says align-items).
				for _, leak := range []string{"app-row", "fleet-results", `"items"`} {
					if strings.Contains(w.Body.String(), leak) {
						t.Errorf("%s %s unauthenticated: body contains %q, want a bare denial", method, path, leak)
					}
				}
			})
		}
		t.Run(pattern+"/authenticated", func(t *testing.T) {
			beforeReq, beforeDenied := ts.auth.counts()
			w := ts.do(t, request{method: method, target: path, admin: true})
			if w.Code == http.StatusUnauthorized {
				t.Errorf("%s %s authenticated: status = %d, want the handler's answer", method, path, w.Code)
			}
			req, denied := ts.auth.counts()
			if req != beforeReq+1 || denied != beforeDenied {
				t.Errorf("%s %s authenticated: Require saw %d and denied %d requests, want 1 and 0", method, path, req-beforeReq, denied-beforeDenied)
			}
		})
	}
}

func TestPublicRoutesSkipRequire(t *testing.T) {
	ts := newTestServer(t, newFakeView(testRows()))
	wantBody := map[string]string{
		"GET /auth/login":    "fake-login",
		"GET /auth/callback": "fake-callback",
		"POST /auth/logout":  "fake-logout",
	}
	for _, pattern := range wantPublic {
		t.Run(pattern, func(t *testing.T) {
			method, path := requestFor(pattern)
			beforeReq, _ := ts.auth.counts()
			w := ts.do(t, request{method: method, target: path})
			if w.Code != http.StatusOK {
				t.Errorf("%s %s unauthenticated: status = %d, want %d", method, path, w.Code, http.StatusOK)
			}
			if req, _ := ts.auth.counts(); req != beforeReq {
				t.Errorf("%s %s: Require saw %d requests, want 0 (public route)", method, path, req-beforeReq)
			}
			if want, ok := wantBody[pattern]; ok && w.Body.String() != want {
				t.Errorf("%s %s: body = %q, want %q", method, path, w.Body.String(), want)
			}
		})
	}
}

// TestTrickyRequestsFailClosed sends requests that are near a public route
// but not on it: each must reach Require (or be a mux redirect to a clean
// path, which serves nothing).
func TestTrickyRequestsFailClosed(t *testing.T) {
	ts := newTestServer(t, newFakeView(testRows()))
	for _, tt := range []struct {
		method, target string
		wantStatus     int
		wantRequire    bool
	}{
		{"POST", "/", http.StatusUnauthorized, true},
		{"HEAD", "/", http.StatusUnauthorized, true},
		{"PUT", "/healthz", http.StatusUnauthorized, true},
		{"DELETE", "/readyz", http.StatusUnauthorized, true},
		{"POST", "/static/app.css", http.StatusUnauthorized, true},
		{"GET", "/auth/logout", http.StatusUnauthorized, true},
		{"POST", "/auth/login", http.StatusUnauthorized, true},
		{"GET", "/healthz/", http.StatusUnauthorized, true},
		{"GET", "/static/", http.StatusUnauthorized, true},
		{"GET", "/static/sub/app.css", http.StatusUnauthorized, true},
		{"GET", "/STATIC/app.css", http.StatusUnauthorized, true},
		{"GET", "/v1/deploy/applications/", http.StatusUnauthorized, true},
		{"GET", "/v1/deploy/web/tree", http.StatusUnauthorized, true},
		{"GET", "/apps/apps/web", http.StatusUnauthorized, true},
		{"GET", "/index.html", http.StatusUnauthorized, true},
		// The mux redirects to the clean path, which is then served (or
		// denied) like any other; the redirect itself serves nothing.
		{"GET", "/static/../v1/deploy/applications", http.StatusTemporaryRedirect, false},
		{"GET", "//healthz", http.StatusTemporaryRedirect, false},
	} {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			beforeReq, _ := ts.auth.counts()
			w := ts.do(t, request{method: tt.method, target: tt.target})
			if w.Code != tt.wantStatus {
				t.Errorf("%s %s: status = %d, want %d", tt.method, tt.target, w.Code, tt.wantStatus)
			}
			req, _ := ts.auth.counts()
			if got := req > beforeReq; got != tt.wantRequire {
				t.Errorf("%s %s: reached Require = %t, want %t", tt.method, tt.target, got, tt.wantRequire)
			}
		})
	}
}

// TestRoutesRegisteredOnlyThroughTable fails if a handler is registered on a
// mux other than through Server.public and Server.protect, which is how a
// route could escape the route table (and the tests above).
func TestRoutesRegisteredOnlyThroughTable(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatalf("filepath.Glob() error = %v", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatalf("parser.ParseFile(%q) error = %v", name, err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if fn.Recv != nil && (fn.Name.Name == "public" || fn.Name.Name == "protect") {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Handle" || sel.Sel.Name == "HandleFunc") {
					t.Errorf("%s: %s calls %s outside Server.public/protect; add the route with s.public or s.protect", fset.Position(call.Pos()), fn.Name.Name, sel.Sel.Name)
				}
				return true
			})
		}
	}
	if len(files) < 2 {
		t.Errorf("filepath.Glob(\"*.go\") = %q, want the package's files", files)
	}
}

func TestUnknownPathsAreProtected(t *testing.T) {
	ts := newTestServer(t, newFakeView(testRows()))
	for _, target := range []string{"/no/such/page", "/clusters/in-cluster/nope", "/v1/deploy/nope"} {
		t.Run(target, func(t *testing.T) {
			if w := ts.do(t, request{target: target}); w.Code != http.StatusUnauthorized {
				t.Errorf("GET %s unauthenticated: status = %d, want %d", target, w.Code, http.StatusUnauthorized)
			}
			if w := ts.do(t, request{target: target, admin: true}); w.Code != http.StatusNotFound {
				t.Errorf("GET %s authenticated: status = %d, want %d", target, w.Code, http.StatusNotFound)
			}
		})
	}
	t.Run("error page", func(t *testing.T) {
		w := ts.get(t, "/no/such/page", nil)
		doc := parseHTML(t, w.Body.String())
		if got, want := text(oneByTestID(t, doc, "error-message")), "page /no/such/page not found"; got != want {
			t.Errorf("GET /no/such/page: error message = %q, want %q", got, want)
		}
		if got, want := text(oneByTestID(t, doc, "user-name")), "Ada Admin"; got != want {
			t.Errorf("GET /no/such/page: user name = %q, want %q", got, want)
		}
	})
}

func TestJSONErrors(t *testing.T) {
	internal := fmt.Errorf("kubeview: list apps: %w", errors.New("dial tcp 10.0.0.1:6443: secret-internal-detail"))
	for _, tt := range []struct {
		name       string
		req        request
		viewErr    error
		wantStatus int
		want       map[string]string
	}{
		{
			name:       "unauthenticated",
			req:        request{target: "/v1/deploy/applications"},
			wantStatus: http.StatusUnauthorized,
			want:       map[string]string{"error": "Sign in to use deploy-web.", "reason": "unauthenticated"},
		},
		{
			name:       "bad limit",
			req:        request{target: "/v1/deploy/applications?limit=0", admin: true},
			wantStatus: http.StatusBadRequest,
			want:       map[string]string{"error": `limit: "0" is not between 1 and 10000`, "reason": "BadRequest"},
		},
		{
			name:       "bad namespace",
			req:        request{target: "/v1/deploy/applications?namespace=kube-system", admin: true},
			wantStatus: http.StatusBadRequest,
			want:       map[string]string{"error": `namespace: "kube-system" is not a platform namespace`, "reason": "BadRequest"},
		},
		{
			name:       "bad continue",
			req:        request{target: "/v1/deploy/applications?continue=forged", admin: true},
			viewErr:    kubeview.ErrBadContinue,
			wantStatus: http.StatusBadRequest,
			want:       map[string]string{"error": "continue: not a token this server issued", "reason": "BadRequest"},
		},
		{
			name:       "unknown API path",
			req:        request{target: "/v1/deploy/nope", admin: true},
			wantStatus: http.StatusNotFound,
			want:       map[string]string{"error": "page /v1/deploy/nope not found", "reason": "NotFound"},
		},
		{
			name:       "JSON client off the API",
			req:        request{target: "/nope", admin: true, header: map[string]string{"Accept": "application/json"}},
			wantStatus: http.StatusNotFound,
			want:       map[string]string{"error": "page /nope not found", "reason": "NotFound"},
		},
		{
			name:       "internal error",
			req:        request{target: "/v1/deploy/applications", admin: true},
			viewErr:    internal,
			wantStatus: http.StatusInternalServerError,
			want:       map[string]string{"error": "internal error", "reason": "InternalError"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			view := newFakeView(testRows())
			view.err = tt.viewErr
			ts := newTestServer(t, view)
			w := ts.do(t, tt.req)
			if w.Code != tt.wantStatus {
				t.Errorf("GET %s: status = %d, want %d", tt.req.target, w.Code, tt.wantStatus)
			}
			if got, want := w.Header().Get("Content-Type"), "application/json"; got != want {
				t.Errorf("GET %s: Content-Type = %q, want %q", tt.req.target, got, want)
			}
			var got map[string]string
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatalf("GET %s: body %q: %v", tt.req.target, w.Body.String(), err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("GET %s: body mismatch (-want +got):\n%s", tt.req.target, diff)
			}
		})
	}
}

// TestInternalErrorsDoNotLeak: a 5xx answer says "internal error", whatever
// the request kind; the cause goes to the log only.
func TestInternalErrorsDoNotLeak(t *testing.T) {
	const secret = "secret-internal-detail"
	for _, tt := range []struct {
		name   string
		target string
		header map[string]string
	}{
		{"api", "/v1/deploy/applications", nil},
		{"page", "/", nil},
		{"fragment", "/?since=1.1", htmxHeader},
		{"json client", "/", map[string]string{"Accept": "application/json"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			view := newFakeView(testRows())
			view.err = fmt.Errorf("kubeview: list apps: %w", errors.New("token=abc "+secret))
			ts := newTestServer(t, view)
			w := ts.get(t, tt.target, tt.header)
			if w.Code != http.StatusInternalServerError {
				t.Errorf("GET %s: status = %d, want %d", tt.target, w.Code, http.StatusInternalServerError)
			}
			if body := w.Body.String(); strings.Contains(body, secret) || strings.Contains(body, "kubeview") || !strings.Contains(body, "internal error") {
				t.Errorf("GET %s: body = %q, want \"internal error\" and no trace of the cause", tt.target, body)
			}
			if logs := ts.log.String(); !strings.Contains(logs, secret) || !strings.Contains(logs, "request_id="+w.Header().Get("X-Request-Id")) {
				t.Errorf("GET %s: log = %q, want the cause and the request id %s", tt.target, logs, w.Header().Get("X-Request-Id"))
			}
		})
	}
}

// TestClientErrorsAreNotLoggedAsFailures: only 5xx are logged as failures.
func TestClientErrorsAreNotLoggedAsFailures(t *testing.T) {
	ts := newTestServer(t, newFakeView(testRows()))
	for _, target := range []string{"/?page=0", "/v1/deploy/applications?limit=x", "/nope"} {
		ts.get(t, target, nil)
	}
	if logs := ts.log.String(); strings.Contains(logs, "request failed") || strings.Contains(logs, "level=ERROR") {
		t.Errorf("log after 4xx answers = %q, want no error lines", logs)
	}
}

// TestDenySessionEnded: a session its re-check ended (auth.ReasonSessionEnded)
// gets a 401 page that says the person was signed out and why, and the JSON
// error says so too, not a bare "sign in".
func TestDenySessionEnded(t *testing.T) {
	site, err := NewSite(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	const want = "You were signed out: the identity provider no longer accepts this session. Sign in again."
	w := httptest.NewRecorder()
	site.Deny(w, httptest.NewRequest(http.MethodGet, "/apps", nil), http.StatusUnauthorized, auth.ReasonSessionEnded)
	if w.Code != http.StatusUnauthorized {
		t.Fatalf("status = %d, want 401", w.Code)
	}
	if got := text(oneByTestID(t, parseHTML(t, w.Body.String()), "error-message")); got != want {
		t.Errorf("page message = %q, want %q", got, want)
	}
	w = httptest.NewRecorder()
	site.Deny(w, httptest.NewRequest(http.MethodGet, "/v1/deploy/applications", nil), http.StatusUnauthorized, auth.ReasonSessionEnded)
	var body map[string]string
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body["error"] != want || body["reason"] != auth.ReasonSessionEnded {
		t.Errorf("JSON = %s (%v), want error %q, reason %q", w.Body, err, want, auth.ReasonSessionEnded)
	}
}
