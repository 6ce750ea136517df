package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/sessions"
)

// serveRequire runs req through a.Require in front of echoIdentity.
func serveRequire(a *Auth, req *http.Request) response {
	rec := httptest.NewRecorder()
	a.Require(http.HandlerFunc(echoIdentity)).ServeHTTP(rec, req)
	return response{Response: rec.Result(), body: rec.Body.Bytes()}
}

// TestRequireUnauthenticated covers the answers to a request without a
// session, per kind of client.
func TestRequireUnauthenticated(t *testing.T) {
	env := newTestServer(t)
	tests := []struct {
		name          string
		method        string
		target        string
		header        []string
		wantStatus    int
		wantLocation  string
		wantHXRedir   string
		wantDenialRsn string
	}{
		{
			name: "HTML GET redirects to login", method: http.MethodGet, target: "/apps/web?tab=tree",
			wantStatus: http.StatusFound, wantLocation: "/auth/login?next=%2Fapps%2Fweb%3Ftab%3Dtree",
		},
		{
			name: "HTML HEAD redirects to login", method: http.MethodHead, target: "/apps",
			wantStatus: http.StatusFound, wantLocation: "/auth/login?next=%2Fapps",
		},
		{
			name: "HTML POST is 401", method: http.MethodPost, target: "/apps/web/sync",
			wantStatus: http.StatusUnauthorized, wantDenialRsn: ReasonUnauthenticated,
		},
		{
			name: "JSON API is 401", method: http.MethodGet, target: "/v1/deploy/applications",
			wantStatus: http.StatusUnauthorized, wantDenialRsn: ReasonUnauthenticated,
		},
		{
			name: "Accept JSON is 401", method: http.MethodGet, target: "/apps",
			header:     []string{"Accept", "application/json"},
			wantStatus: http.StatusUnauthorized, wantDenialRsn: ReasonUnauthenticated,
		},
		{
			name: "HTMX is 401 with HX-Redirect", method: http.MethodGet, target: "/apps/web/tree",
			header:     []string{"HX-Request", "true", "Accept", "*/*"},
			wantStatus: http.StatusUnauthorized, wantHXRedir: LoginPath, wantDenialRsn: ReasonUnauthenticated,
		},
		{
			name: "HTMX POST is 401 with HX-Redirect", method: http.MethodPost, target: "/apps/web/sync",
			header:     []string{"HX-Request", "true"},
			wantStatus: http.StatusUnauthorized, wantHXRedir: LoginPath, wantDenialRsn: ReasonUnauthenticated,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := env.serve(request(tt.method, tt.target, nil, nil, tt.header...))
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("%s %s: status = %d, want %d; body %s", tt.method, tt.target, resp.StatusCode, tt.wantStatus, resp.body)
			}
			if got := resp.location(); got != tt.wantLocation {
				t.Errorf("%s %s: Location = %q, want %q", tt.method, tt.target, got, tt.wantLocation)
			}
			if got := resp.Header.Get("HX-Redirect"); got != tt.wantHXRedir {
				t.Errorf("%s %s: HX-Redirect = %q, want %q", tt.method, tt.target, got, tt.wantHXRedir)
			}
			if tt.wantDenialRsn != "" {
				if d := resp.denial(); !d.Denied || d.Reason != tt.wantDenialRsn {
					t.Errorf("%s %s: denial = %+v, want reason %q", tt.method, tt.target, d, tt.wantDenialRsn)
				}
			}
		})
	}
}

// TestRequireBadSession covers session cookies that must not authenticate:
// each is presented to an HTML page (302 to login) and to the API (401).
func TestRequireBadSession(t *testing.T) {
	env := newTestServer(t)
	valid := env.sessionCookie(env.adminSession())
	now := env.clock.Now()

	otherKeys, err := GenerateSessionKeys()
	if err != nil {
		t.Fatal(err)
	}
	otherCfg := env.cfg
	otherCfg.SessionKeys = otherKeys
	otherStore := newCookieStore(otherCfg, DefaultSessionTTL)

	session := func(edit func(*sessionData)) string {
		s := env.adminSession()
		edit(&s)
		return env.sessionCookie(s).Value
	}
	tests := []struct {
		name  string
		value string
	}{
		{"tampered", tamper(valid.Value)},
		{"truncated", valid.Value[:len(valid.Value)/2]},
		{"garbage", "not-a-session"},
		{"empty", ""},
		{"other keys", encodeWith(t, otherStore, SessionCookie, env.adminSession())},
		{"login cookie as session", encodeWith(t, env.auth.logins, LoginCookie, env.adminSession())},
		{"expired", session(func(s *sessionData) {
			s.IssuedAt, s.Expires = now.Add(-9*time.Hour).Unix(), now.Add(-time.Hour).Unix()
		})},
		{"expired, issued recently", session(func(s *sessionData) {
			s.IssuedAt, s.Expires = now.Add(-time.Hour).Unix(), now.Add(-time.Second).Unix()
		})},
		{"older than TTL", session(func(s *sessionData) {
			s.IssuedAt, s.Expires = now.Add(-9*time.Hour).Unix(), now.Add(time.Hour).Unix()
		})},
		{"issued in the future", session(func(s *sessionData) {
			s.IssuedAt, s.Expires = now.Add(time.Hour).Unix(), now.Add(2*time.Hour).Unix()
		})},
		{"no subject", session(func(s *sessionData) { s.Subject = "" })},
		{"no CSRF token", session(func(s *sessionData) { s.CSRF = "" })},
		{"other version", session(func(s *sessionData) { s.Version = 99 })},
		{"not JSON", encodeRaw(t, env.auth.sessions, "{not json")},
		{"not a string", encodeRaw(t, env.auth.sessions, 42)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := []*http.Cookie{{Name: SessionCookie, Value: tt.value}}
			resp := env.serve(request(http.MethodGet, "/apps", nil, c))
			if resp.StatusCode != http.StatusFound || !strings.HasPrefix(resp.location(), LoginPath) {
				t.Errorf("GET /apps: status = %d, Location %q, want 302 to login", resp.StatusCode, resp.location())
			}
			if tt.value != "" {
				if sc := resp.cookie(SessionCookie); sc == nil || sc.MaxAge >= 0 {
					t.Errorf("GET /apps: %s cookie = %v, want the bad cookie cleared", SessionCookie, sc)
				}
			}
			resp = env.serve(request(http.MethodGet, "/v1/deploy/applications", nil, c))
			if d := resp.denial(); resp.StatusCode != http.StatusUnauthorized || d.Reason != ReasonUnauthenticated {
				t.Errorf("GET /v1/deploy/applications: status = %d, denial %+v, want 401 %q", resp.StatusCode, d, ReasonUnauthenticated)
			}
		})
	}

	// The valid cookie itself passes, so the cases above fail for their own reason.
	if resp := env.serve(request(http.MethodGet, "/apps", nil, []*http.Cookie{valid})); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /apps with valid session: status = %d, want 200", resp.StatusCode)
	}
}

// TestRequireSessionExpiresServerSide checks a real session stops working
// after SessionTTL, by the server's clock, whatever the browser does with
// Max-Age.
func TestRequireSessionExpiresServerSide(t *testing.T) {
	env := newTestServer(t)
	env.mustLogin()
	if resp := env.get("/apps"); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /apps: status = %d, want 200", resp.StatusCode)
	}
	env.clock.Advance(DefaultSessionTTL + time.Second)
	if resp := env.get("/v1/deploy/applications"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /v1/deploy/applications after TTL: status = %d, want 401", resp.StatusCode)
	}
}

func tamper(v string) string {
	b := []byte(v)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// encodeWith encodes s as a cookie named name with store.
func encodeWith(t *testing.T, store *sessions.CookieStore, name string, s sessionData) string {
	t.Helper()
	rec := httptest.NewRecorder()
	if err := writeCookie(store, rec, httptest.NewRequest(http.MethodGet, "/", nil), name, s); err != nil {
		t.Fatalf("writeCookie: %v", err)
	}
	return rec.Result().Cookies()[0].Value
}

// encodeRaw encodes v, as is, as the session value.
func encodeRaw(t *testing.T, store *sessions.CookieStore, v any) string {
	t.Helper()
	rec := httptest.NewRecorder()
	s := sessions.NewSession(store, SessionCookie)
	s.Options = store.Options
	s.Values[valueKey] = v
	if err := store.Save(httptest.NewRequest(http.MethodGet, "/", nil), rec, s); err != nil {
		t.Fatalf("store.Save: %v", err)
	}
	return rec.Result().Cookies()[0].Value
}

// TestRequireCSRF covers the CSRF token on unsafe methods with a session.
func TestRequireCSRF(t *testing.T) {
	env := newTestServer(t)
	s := env.adminSession()
	c := []*http.Cookie{env.sessionCookie(s)}
	form := func(v string) *strings.Reader { return strings.NewReader(url.Values{"csrf_token": {v}}.Encode()) }
	formType := []string{"Content-Type", "application/x-www-form-urlencoded"}
	tests := []struct {
		name       string
		req        *http.Request
		wantStatus int
	}{
		{"GET needs none", request(http.MethodGet, "/apps", nil, c), http.StatusOK},
		{"POST without token", request(http.MethodPost, "/apps/web/sync", nil, c), http.StatusForbidden},
		{"POST with wrong header token", request(http.MethodPost, "/apps/web/sync", nil, c, "X-CSRF-Token", "wrong"), http.StatusForbidden},
		{"POST with token prefix", request(http.MethodPost, "/apps/web/sync", nil, c, "X-CSRF-Token", s.CSRF[:20]), http.StatusForbidden},
		{"POST with wrong form token", request(http.MethodPost, "/apps/web/sync", form("wrong"), c, formType...), http.StatusForbidden},
		{"POST with empty form token", request(http.MethodPost, "/apps/web/sync", form(""), c, formType...), http.StatusForbidden},
		{"POST with token in query only", request(http.MethodPost, "/apps/web/sync?csrf_token="+s.CSRF, nil, c), http.StatusForbidden},
		{"PUT without token", request(http.MethodPut, "/apps/web", nil, c), http.StatusForbidden},
		{"PATCH without token", request(http.MethodPatch, "/apps/web", nil, c), http.StatusForbidden},
		{"DELETE without token", request(http.MethodDelete, "/apps/web", nil, c), http.StatusForbidden},
		{"API POST without token", request(http.MethodPost, "/v1/deploy/web/sync", nil, c), http.StatusForbidden},
		{"POST with header token", request(http.MethodPost, "/apps/web/sync", nil, c, "X-CSRF-Token", s.CSRF), http.StatusOK},
		{"POST with form token", request(http.MethodPost, "/apps/web/sync", form(s.CSRF), c, formType...), http.StatusOK},
		{"DELETE with header token", request(http.MethodDelete, "/apps/web", nil, c, "X-CSRF-Token", s.CSRF), http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := env.serve(tt.req)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("%s %s: status = %d, want %d; body %s", tt.req.Method, tt.req.URL, resp.StatusCode, tt.wantStatus, resp.body)
			}
			if tt.wantStatus == http.StatusForbidden && resp.denial().Reason != ReasonCSRF {
				t.Errorf("%s %s: reason = %q, want %q", tt.req.Method, tt.req.URL, resp.denial().Reason, ReasonCSRF)
			}
		})
	}
}

// TestRequireCrossOrigin covers cross-origin unsafe requests: denied before
// anything else, even with a valid session and CSRF token, or a bearer token.
func TestRequireCrossOrigin(t *testing.T) {
	env := newTestServer(t)
	s := env.adminSession()
	c := []*http.Cookie{env.sessionCookie(s)}
	bearer := "Bearer " + env.idp.mint(nil)
	tests := []struct {
		name       string
		req        *http.Request
		wantStatus int
	}{
		{"Sec-Fetch-Site cross-site", request(http.MethodPost, "/apps/web/sync", nil, c, "X-CSRF-Token", s.CSRF, "Sec-Fetch-Site", "cross-site"), http.StatusForbidden},
		{"Sec-Fetch-Site same-site", request(http.MethodPost, "/apps/web/sync", nil, c, "X-CSRF-Token", s.CSRF, "Sec-Fetch-Site", "same-site"), http.StatusForbidden},
		{"mismatching Origin", request(http.MethodPost, "/apps/web/sync", nil, c, "X-CSRF-Token", s.CSRF, "Origin", "https://evil.example"), http.StatusForbidden},
		{"cross-site without session", request(http.MethodPost, "/apps/web/sync", nil, nil, "Sec-Fetch-Site", "cross-site"), http.StatusForbidden},
		{"cross-site with bearer", request(http.MethodPost, "/v1/deploy/web/sync", nil, nil, "Authorization", bearer, "Sec-Fetch-Site", "cross-site"), http.StatusForbidden},
		{"cross-site DELETE", request(http.MethodDelete, "/apps/web", nil, c, "X-CSRF-Token", s.CSRF, "Origin", "https://evil.example"), http.StatusForbidden},
		{"cross-site GET is not checked", request(http.MethodGet, "/apps", nil, c, "Sec-Fetch-Site", "cross-site"), http.StatusOK},
		{"same-origin POST", request(http.MethodPost, "/apps/web/sync", nil, c, "X-CSRF-Token", s.CSRF, "Sec-Fetch-Site", "same-origin"), http.StatusOK},
		{"matching Origin", request(http.MethodPost, "/apps/web/sync", nil, c, "X-CSRF-Token", s.CSRF, "Origin", "http://example.com"), http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := env.serve(tt.req)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("%s %s: status = %d, want %d; body %s", tt.req.Method, tt.req.URL, resp.StatusCode, tt.wantStatus, resp.body)
			}
			if tt.wantStatus == http.StatusForbidden && resp.denial().Reason != ReasonCrossOrigin {
				t.Errorf("%s %s: reason = %q, want %q", tt.req.Method, tt.req.URL, resp.denial().Reason, ReasonCrossOrigin)
			}
		})
	}
}

// TestRequireBearer covers Authorization: Bearer ID tokens on the JSON API.
func TestRequireBearer(t *testing.T) {
	env := newTestServer(t)
	past := time.Now().Add(-2 * time.Hour)
	cookie := env.sessionCookie(env.adminSession())
	otherKeyToken, err := signJWT(otherRSAKey(), env.idp.defaultClaims())
	if err != nil {
		t.Fatal(err)
	}
	admin := env.idp.mint(nil)
	tests := []struct {
		name       string
		method     string
		target     string
		auth       string
		cookie     bool
		wantStatus int
		wantReason string
	}{
		{"garbage", http.MethodGet, "/v1/deploy/applications", "Bearer garbage", false, http.StatusUnauthorized, ReasonInvalidBearer},
		{"empty", http.MethodGet, "/v1/deploy/applications", "Bearer ", false, http.StatusUnauthorized, ReasonInvalidBearer},
		{"not bearer", http.MethodGet, "/v1/deploy/applications", "Basic dXNlcjpwYXNz", false, http.StatusUnauthorized, ReasonInvalidBearer},
		{"alg none", http.MethodGet, "/v1/deploy/applications", "Bearer " + unsignedJWT(env.idp.defaultClaims()), false, http.StatusUnauthorized, ReasonInvalidBearer},
		{"wrong audience", http.MethodGet, "/v1/deploy/applications", "Bearer " + env.idp.mint(map[string]any{"aud": "other-client"}), false, http.StatusUnauthorized, ReasonInvalidBearer},
		{"wrong issuer", http.MethodGet, "/v1/deploy/applications", "Bearer " + env.idp.mint(map[string]any{"iss": "https://evil.example.com"}), false, http.StatusUnauthorized, ReasonInvalidBearer},
		{"expired", http.MethodGet, "/v1/deploy/applications", "Bearer " + env.idp.mint(map[string]any{"iat": past.Unix(), "exp": past.Add(time.Hour).Unix()}), false, http.StatusUnauthorized, ReasonInvalidBearer},
		{"unknown key", http.MethodGet, "/v1/deploy/applications", "Bearer " + otherKeyToken, false, http.StatusUnauthorized, ReasonInvalidBearer},
		{"invalid bearer beside valid cookie", http.MethodGet, "/v1/deploy/applications", "Bearer garbage", true, http.StatusUnauthorized, ReasonInvalidBearer},
		{"non-admin", http.MethodGet, "/v1/deploy/applications", "Bearer " + env.idp.mint(map[string]any{"groups": []string{"developers"}}), false, http.StatusForbidden, ReasonNotAdmin},
		{"non-admin beside admin cookie", http.MethodGet, "/v1/deploy/applications", "Bearer " + env.idp.mint(map[string]any{"groups": nil}), true, http.StatusForbidden, ReasonNotAdmin},
		{"admin", http.MethodGet, "/v1/deploy/applications", "Bearer " + admin, false, http.StatusOK, ""},
		{"admin lower-case scheme", http.MethodGet, "/v1/deploy/applications", "bearer " + admin, false, http.StatusOK, ""},
		{"admin POST skips CSRF", http.MethodPost, "/v1/deploy/web/sync", "Bearer " + admin, false, http.StatusOK, ""},
		{"not accepted off the API", http.MethodGet, "/apps", "Bearer " + admin, false, http.StatusFound, ""},
		{"not accepted via dot segments", http.MethodGet, "/v1/../apps", "Bearer " + admin, false, http.StatusFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cookies []*http.Cookie
			if tt.cookie {
				cookies = append(cookies, cookie)
			}
			req := request(tt.method, tt.target, nil, cookies, "Authorization", tt.auth)
			resp := serveRequire(env.auth, req)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("%s %s: status = %d, want %d; body %s", tt.method, tt.target, resp.StatusCode, tt.wantStatus, resp.body)
			}
			if tt.wantReason != "" && resp.denial().Reason != tt.wantReason {
				t.Errorf("%s %s: reason = %q, want %q", tt.method, tt.target, resp.denial().Reason, tt.wantReason)
			}
			if tt.wantStatus == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s: no WWW-Authenticate header", tt.method, tt.target)
			}
			if tt.wantStatus == http.StatusOK {
				e := resp.echoed(t)
				want := echoed{HasIdentity: true, Identity: Identity{
					Subject: "alice-sub", Email: "alice@example.com", Name: "Alice", Admin: true, Bearer: true,
				}}
				if diff := cmp.Diff(want, e, cmpIgnoreExpires); diff != "" {
					t.Errorf("%s %s: context mismatch (-want +got):\n%s", tt.method, tt.target, diff)
				}
				if d := time.Until(e.Identity.Expires); d < 50*time.Minute || d > time.Hour {
					t.Errorf("%s %s: Identity.Expires in %v, want the token's expiry (about 1h)", tt.method, tt.target, d)
				}
			}
		})
	}
}

// unsignedJWT returns an "alg": "none" JWT of claims.
func unsignedJWT(claims map[string]any) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "none", "typ": "JWT"}) + "." + enc(claims) + "."
}

// TestRequireLogsDenials checks denials are logged with method, path and
// reason, and that no token or cookie reaches the log.
func TestRequireLogsDenials(t *testing.T) {
	env := newTestServer(t)
	cookie := env.sessionCookie(env.adminSession())
	token := env.idp.mint(map[string]any{"aud": "other-client"})
	env.serve(request(http.MethodGet, "/v1/deploy/applications", nil, []*http.Cookie{cookie}, "Authorization", "Bearer "+token))
	env.serve(request(http.MethodPost, "/apps/web/sync", nil, []*http.Cookie{cookie}))
	env.serve(request(http.MethodGet, "/apps", nil, []*http.Cookie{{Name: SessionCookie, Value: tamper(cookie.Value)}}))

	logs := env.logs.String()
	for _, want := range []string{
		"path=/v1/deploy/applications", "method=GET", `reason="` + ReasonInvalidBearer + `"`,
		"path=/apps/web/sync", "method=POST", `reason="` + ReasonCSRF + `"`,
		`reason=` + ReasonUnauthenticated,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
	for _, secret := range []string{token, cookie.Value, tamper(cookie.Value), env.adminSession().CSRF} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs contain a token or cookie value:\n%s", logs)
		}
	}
}

func TestContext(t *testing.T) {
	ctx := context.Background()
	if id, ok := FromContext(ctx); ok || id != (Identity{}) {
		t.Errorf("FromContext(empty) = %+v, %v, want zero, false", id, ok)
	}
	if got := CSRFToken(ctx); got != "" {
		t.Errorf("CSRFToken(empty) = %q, want \"\"", got)
	}
	want := Identity{Subject: "s", Admin: true}
	ctx = NewContext(ctx, want, "tok")
	if id, ok := FromContext(ctx); !ok || id != want {
		t.Errorf("FromContext(NewContext(%+v)) = %+v, %v, want it back", want, id, ok)
	}
	if got := CSRFToken(ctx); got != "tok" {
		t.Errorf("CSRFToken(NewContext(tok)) = %q, want %q", got, "tok")
	}
}

func TestPrefersJSON(t *testing.T) {
	tests := []struct {
		accept string
		want   bool
	}{
		{"", false},
		{"*/*", false},
		{"application/json", true},
		{"application/json, text/plain, */*", true},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", false},
		{"text/html;q=0.5, application/json", true},
		{"application/json;q=0.5, text/html", false},
		{"application/*", true},
		{"text/*, application/json;q=0.9", false},
		{"text/html;q=0, */*", true},
		{"application/json;q=0.8, */*;q=0.8", true},
		{"text/html, application/json", false},
		{"garbage;;", false},
	}
	for _, tt := range tests {
		if got := prefersJSON(tt.accept); got != tt.want {
			t.Errorf("prefersJSON(%q) = %v, want %v", tt.accept, got, tt.want)
		}
	}
}

func TestIsAPI(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"/v1/deploy/applications", true},
		{"/v1/", true},
		{"/v1", false},
		{"/v1x/deploy", false},
		{"/apps", false},
		{"/v1/../apps", false},
		{"/v1/deploy/../../apps", false},
		{"/v1/deploy/../applications", true},
	}
	for _, tt := range tests {
		r := &http.Request{URL: &url.URL{Path: tt.path}}
		if got := isAPI(r); got != tt.want {
			t.Errorf("isAPI(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}
