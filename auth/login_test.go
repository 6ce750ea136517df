package auth

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestLoginFlow drives the whole happy path: protected page -> login ->
// IdP (PKCE, nonce) -> callback -> session -> GET and CSRF-checked POST.
func TestLoginFlow(t *testing.T) {
	env := newTestServer(t)

	// 1. A protected page without a session redirects to the login page.
	resp := env.get("/apps/web?tab=tree")
	if got, want := resp.StatusCode, http.StatusFound; got != want {
		t.Fatalf("GET /apps/web: status = %d, want %d", got, want)
	}
	wantLogin := LoginPath + "?next=" + url.QueryEscape("/apps/web?tab=tree")
	if got := resp.location(); got != wantLogin {
		t.Fatalf("GET /apps/web: Location = %q, want %q", got, wantLogin)
	}

	// 2. The login page redirects to the IdP with state, nonce and PKCE S256.
	resp, authURL := env.startLogin("/apps/web?tab=tree")
	if got, want := authURL.Scheme+"://"+authURL.Host+authURL.Path, env.idp.issuer()+"/authorize"; got != want {
		t.Errorf("login redirect = %q, want %q", got, want)
	}
	q := authURL.Query()
	for _, p := range []struct{ name, want string }{
		{"response_type", "code"},
		{"client_id", testClientID},
		{"redirect_uri", env.cfg.RedirectURL},
		{"code_challenge_method", "S256"},
	} {
		if got := q.Get(p.name); got != p.want {
			t.Errorf("authorization request %s = %q, want %q", p.name, got, p.want)
		}
	}
	for _, name := range []string{"state", "nonce", "code_challenge"} {
		if len(q.Get(name)) < 43 {
			t.Errorf("authorization request %s = %q, want a random value of at least 43 chars", name, q.Get(name))
		}
	}
	for _, s := range []string{"openid", "profile", "email", "groups"} {
		if !hasScope(q.Get("scope"), s) {
			t.Errorf("authorization request scope = %q, want it to include %q", q.Get("scope"), s)
		}
	}
	lc := resp.cookie(LoginCookie)
	if lc == nil {
		t.Fatalf("login response sets no %s cookie", LoginCookie)
	}
	checkCookieAttrs(t, lc, int(loginTTL/time.Second), false)
	if strings.Contains(lc.Value, q.Get("state")) || strings.Contains(lc.Value, q.Get("nonce")) {
		t.Errorf("login cookie holds state or nonce in clear text")
	}

	// 3. The IdP grants and redirects back; the callback stores a session.
	cbURL := env.authorize(authURL)
	if got := cbURL.Path; got != CallbackPath {
		t.Fatalf("IdP redirect path = %q, want %q", got, CallbackPath)
	}
	resp = env.get(cbURL.String())
	if got, want := resp.StatusCode, http.StatusFound; got != want {
		t.Fatalf("callback: status = %d, want %d; body %s", got, want, resp.body)
	}
	if got, want := resp.location(), "/apps/web?tab=tree"; got != want {
		t.Errorf("callback: Location = %q, want %q", got, want)
	}
	sc := resp.cookie(SessionCookie)
	if sc == nil {
		t.Fatalf("callback sets no %s cookie", SessionCookie)
	}
	checkCookieAttrs(t, sc, int(DefaultSessionTTL/time.Second), false)
	if c := resp.cookie(LoginCookie); c == nil || c.MaxAge >= 0 {
		t.Errorf("callback: %s cookie = %v, want it cleared (MaxAge < 0)", LoginCookie, c)
	}

	// 4. The session authenticates a protected GET; Identity is in context.
	resp = env.get("/apps/web")
	if got, want := resp.StatusCode, http.StatusOK; got != want {
		t.Fatalf("GET /apps/web with session: status = %d, want %d; body %s", got, want, resp.body)
	}
	e := resp.echoed(t)
	if !e.HasIdentity {
		t.Fatalf("FromContext() ok = false, want true")
	}
	wantID := Identity{Subject: "alice-sub", Email: "alice@example.com", Name: "Alice", Admin: true}
	if diff := cmp.Diff(wantID, e.Identity, cmpIgnoreExpires); diff != "" {
		t.Errorf("FromContext() mismatch (-want +got):\n%s", diff)
	}
	if d := time.Until(e.Identity.Recheck); d < DefaultSessionRecheck-time.Minute || d > DefaultSessionRecheck+time.Minute {
		t.Errorf("Identity.Recheck in %v, want about %v", d, DefaultSessionRecheck)
	}
	if d := time.Until(e.Identity.Expires); d < DefaultSessionTTL-time.Minute || d > DefaultSessionTTL+time.Minute {
		t.Errorf("Identity.Expires in %v, want about %v", d, DefaultSessionTTL)
	}
	if len(e.CSRF) < 43 {
		t.Errorf("CSRFToken() = %q, want a random token", e.CSRF)
	}

	// 5. Unsafe methods pass with the CSRF token, as header or form field.
	resp = env.post("/apps/web/sync", nil, "X-CSRF-Token", e.CSRF)
	if got, want := resp.StatusCode, http.StatusOK; got != want {
		t.Errorf("POST with X-CSRF-Token: status = %d, want %d; body %s", got, want, resp.body)
	}
	resp = env.post("/apps/web/sync", url.Values{"csrf_token": {e.CSRF}})
	if got, want := resp.StatusCode, http.StatusOK; got != want {
		t.Errorf("POST with csrf_token field: status = %d, want %d; body %s", got, want, resp.body)
	}
}

var cmpIgnoreExpires = cmpopts.IgnoreFields(Identity{}, "Expires", "Recheck")

func checkCookieAttrs(t *testing.T, c *http.Cookie, maxAge int, secure bool) {
	t.Helper()
	if !c.HttpOnly {
		t.Errorf("cookie %s HttpOnly = false, want true", c.Name)
	}
	if c.SameSite != http.SameSiteLaxMode {
		t.Errorf("cookie %s SameSite = %v, want Lax", c.Name, c.SameSite)
	}
	if c.Path != "/" {
		t.Errorf("cookie %s Path = %q, want \"/\"", c.Name, c.Path)
	}
	if c.MaxAge != maxAge {
		t.Errorf("cookie %s MaxAge = %d, want %d", c.Name, c.MaxAge, maxAge)
	}
	if c.Secure != secure {
		t.Errorf("cookie %s Secure = %v, want %v", c.Name, c.Secure, secure)
	}
}

// TestSecureCookies checks that without InsecureCookies both cookies are Secure.
func TestSecureCookies(t *testing.T) {
	env := newTestServer(t, func(_ *testIdP, c *Config) {
		c.RedirectURL = "https://deploy.example.com" + CallbackPath
		c.InsecureCookies = false
	})
	resp := env.serve(request(http.MethodGet, LoginPath, nil, nil))
	if c := resp.cookie(LoginCookie); c != nil {
		t.Errorf("login sets a Secure cookie named %s, want the %s prefix", c.Name, HostPrefix)
	}
	lc := resp.cookie(HostPrefix + LoginCookie)
	if lc == nil {
		t.Fatalf("login sets no %s cookie", HostPrefix+LoginCookie)
	}
	checkCookieAttrs(t, lc, int(loginTTL/time.Second), true)
	if lc.Domain != "" {
		t.Errorf("cookie %s Domain = %q, want none (__Host- cookies have none)", lc.Name, lc.Domain)
	}

	authURL, err := url.Parse(resp.location())
	if err != nil {
		t.Fatal(err)
	}
	cb := env.authorize(authURL) // https://deploy.example.com/auth/callback?...
	resp = env.serve(request(http.MethodGet, cb.RequestURI(), nil, []*http.Cookie{lc}))
	sc := resp.cookie(HostPrefix + SessionCookie)
	if resp.StatusCode != http.StatusFound || sc == nil {
		t.Fatalf("callback: status = %d, session cookie %v, want 302 and a %s cookie; body %s", resp.StatusCode, sc, HostPrefix+SessionCookie, resp.body)
	}
	checkCookieAttrs(t, sc, int(DefaultSessionTTL/time.Second), true)

	// The prefixed cookie is the session; an unprefixed one is no session.
	resp = env.serve(request(http.MethodGet, "/apps", nil, []*http.Cookie{{Name: sc.Name, Value: sc.Value}}))
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /apps with the %s cookie: status = %d, want 200", sc.Name, resp.StatusCode)
	}
	resp = env.serve(request(http.MethodGet, "/apps", nil, []*http.Cookie{{Name: SessionCookie, Value: sc.Value}}))
	if resp.StatusCode != http.StatusFound {
		t.Errorf("GET /apps with the value under the unprefixed name: status = %d, want 302 to login", resp.StatusCode)
	}
}

// TestCallbackDenied covers every ID-token check of the callback: each case
// gets the IdP to issue a bad token, and must end in a 401 without a session.
func TestCallbackDenied(t *testing.T) {
	past := time.Now().Add(-2 * time.Hour)
	tests := []struct {
		name       string
		claims     map[string]any
		otherKey   bool
		wantReason string
	}{
		{"wrong audience", map[string]any{"aud": "someone-else"}, false, "login failed: invalid id token"},
		{"wrong issuer", map[string]any{"iss": "https://evil.example.com"}, false, "login failed: invalid id token"},
		{"expired", map[string]any{"iat": past.Unix(), "exp": past.Add(time.Hour).Unix()}, false, "login failed: invalid id token"},
		{"signed by unknown key", nil, true, "login failed: invalid id token"},
		{"wrong nonce", map[string]any{"nonce": "not-the-nonce"}, false, "login failed: nonce mismatch"},
		{"no nonce", map[string]any{"nonce": nil}, false, "login failed: nonce mismatch"},
		{"no subject", map[string]any{"sub": nil}, false, "login failed: invalid id token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestServer(t)
			env.idp.setClaims(tt.claims)
			if tt.otherKey {
				env.idp.useSigningKey(otherRSAKey())
			}
			resp := env.login("/apps")
			checkLoginFailed(t, env, resp, tt.wantReason)
		})
	}
}

// checkLoginFailed asserts a callback response is a 401 denial with reason
// that stored no session, and that the app still has no session.
func checkLoginFailed(t *testing.T, env *testEnv, resp response, wantReason string) {
	t.Helper()
	if got, want := resp.StatusCode, http.StatusUnauthorized; got != want {
		t.Errorf("callback: status = %d, want %d; body %s", got, want, resp.body)
	}
	if got := resp.denial(); !got.Denied || got.Reason != wantReason {
		t.Errorf("callback: denial = %+v, want reason %q", got, wantReason)
	}
	if c := resp.cookie(SessionCookie); c != nil {
		t.Errorf("callback: sets %s cookie, want none", SessionCookie)
	}
	if c := resp.cookie(LoginCookie); c == nil || c.MaxAge >= 0 {
		t.Errorf("callback: %s cookie = %v, want it cleared", LoginCookie, c)
	}
	if got := env.get("/apps"); got.StatusCode != http.StatusFound {
		t.Errorf("GET /apps after failed login: status = %d, want %d", got.StatusCode, http.StatusFound)
	}
}

// TestCallbackRequestDenied covers the callback's checks of its own request:
// state, IdP error, code, PKCE verifier, login cookie.
func TestCallbackRequestDenied(t *testing.T) {
	tests := []struct {
		name string
		// edit changes the callback URL (or the env) before it is visited.
		edit       func(env *testEnv, authURL, cb *url.URL)
		wantReason string
	}{
		{
			name: "wrong state",
			edit: func(_ *testEnv, _, cb *url.URL) {
				setQuery(cb, "state", "forged-state-forged-state-forged-state-xx")
			},
			wantReason: "login failed: state mismatch",
		},
		{
			name:       "missing state",
			edit:       func(_ *testEnv, _, cb *url.URL) { setQuery(cb, "state", "") },
			wantReason: "login failed: state mismatch",
		},
		{
			name: "IdP error",
			edit: func(_ *testEnv, _, cb *url.URL) {
				q := cb.Query()
				q.Del("code")
				q.Set("error", "access_denied")
				q.Set("error_description", "<script>alert(1)</script>")
				cb.RawQuery = q.Encode()
			},
			wantReason: "login failed: identity provider returned access_denied",
		},
		{
			name:       "IdP error with markup",
			edit:       func(_ *testEnv, _, cb *url.URL) { setQuery(cb, "error", "<script>x</script>") },
			wantReason: "login failed: identity provider returned scriptxscript",
		},
		{
			name:       "no code",
			edit:       func(_ *testEnv, _, cb *url.URL) { setQuery(cb, "code", "") },
			wantReason: "login failed: no authorization code",
		},
		{
			name:       "unknown code",
			edit:       func(_ *testEnv, _, cb *url.URL) { setQuery(cb, "code", "not-a-code") },
			wantReason: "login failed: code exchange",
		},
		{
			name: "no login cookie",
			edit: func(env *testEnv, _, _ *url.URL) {
				u, _ := url.Parse(env.app.URL)
				env.client.Jar.SetCookies(u, []*http.Cookie{{Name: LoginCookie, Value: "", MaxAge: -1}})
			},
			wantReason: "login failed: missing or expired login state",
		},
		{
			name:       "login cookie older than 10 minutes",
			edit:       func(env *testEnv, _, _ *url.URL) { env.clock.Advance(loginTTL + time.Minute) },
			wantReason: "login failed: missing or expired login state",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestServer(t)
			_, authURL := env.startLogin("/apps")
			cb := env.authorize(authURL)
			tt.edit(env, authURL, cb)
			checkLoginFailed(t, env, env.get(cb.String()), tt.wantReason)
		})
	}
}

func setQuery(u *url.URL, k, v string) {
	q := u.Query()
	q.Set(k, v)
	u.RawQuery = q.Encode()
}

// TestCallbackPKCE checks the code verifier is sent and checked: an
// authorization request whose challenge is not the login's verifier's fails
// at the token endpoint.
func TestCallbackPKCE(t *testing.T) {
	env := newTestServer(t)
	_, authURL := env.startLogin("/apps")
	setQuery(authURL, "code_challenge", "bm90LXRoZS1jaGFsbGVuZ2Utbm90LXRoZS1jaGFsbGVuZ2U")
	checkLoginFailed(t, env, env.get(env.authorize(authURL).String()), "login failed: code exchange")
}

// TestCallbackReplay checks a callback URL works once: the login cookie is
// spent.
func TestCallbackReplay(t *testing.T) {
	env := newTestServer(t)
	_, authURL := env.startLogin("/apps")
	cb := env.authorize(authURL)
	if resp := env.get(cb.String()); resp.StatusCode != http.StatusFound {
		t.Fatalf("first callback: status = %d, want %d", resp.StatusCode, http.StatusFound)
	}
	resp := env.get(cb.String())
	if got := resp.denial(); resp.StatusCode != http.StatusUnauthorized || got.Reason != "login failed: missing or expired login state" {
		t.Errorf("second callback: status = %d, denial %+v, want 401 missing login state", resp.StatusCode, got)
	}
}

// TestLoginOpenRedirect checks that next lands only on local paths.
func TestLoginOpenRedirect(t *testing.T) {
	tests := []struct{ next, want string }{
		{"//evil.com", "/"},
		{"https://evil.com", "/"},
		{"/\\evil.com", "/"},
		{"/\t/evil.com", "/"},
		{"javascript:alert(1)", "/"},
		{"", "/"},
		{"apps", "/"},
		{"/apps/web?tab=logs", "/apps/web?tab=logs"},
	}
	for _, tt := range tests {
		t.Run(tt.next, func(t *testing.T) {
			env := newTestServer(t)
			resp := env.login(tt.next)
			if resp.StatusCode != http.StatusFound {
				t.Fatalf("callback: status = %d, want %d; body %s", resp.StatusCode, http.StatusFound, resp.body)
			}
			if got := resp.location(); got != tt.want {
				t.Errorf("login(next=%q) lands on %q, want %q", tt.next, got, tt.want)
			}
		})
	}
}

func TestSafeNext(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/", "/"},
		{"/apps", "/apps"},
		{"/apps/web?tab=tree#x", "/apps/web?tab=tree#x"},
		{"", "/"},
		{"apps", "/"},
		{"//evil.com", "/"},
		{"//evil.com/apps", "/"},
		{"/\\evil.com", "/"},
		{"/\t/evil.com", "/"},
		{"/\n/evil.com", "/"},
		{"/apps\r\nSet-Cookie: x=y", "/"},
		{"https://evil.com", "/"},
		{"http:/evil.com", "/"},
		{"\\\\evil.com", "/"},
		{"/%zz", "/"},
	}
	for _, tt := range tests {
		if got := safeNext(tt.in); got != tt.want {
			t.Errorf("safeNext(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestAdminClaims logs in users with different claims and checks who gets
// through Require.
func TestAdminClaims(t *testing.T) {
	tests := []struct {
		name       string
		adminClaim string
		adminValue string
		claims     map[string]any
		wantStatus int
	}{
		{"groups list with superadmin", "", "", map[string]any{"groups": []string{"dev", "superadmin"}}, http.StatusOK},
		{"groups string superadmin", "", "", map[string]any{"groups": "superadmin"}, http.StatusOK},
		{"groups list without superadmin", "", "", map[string]any{"groups": []string{"dev", "superadmins"}}, http.StatusForbidden},
		{"no groups claim", "", "", map[string]any{"groups": nil}, http.StatusForbidden},
		{"bool claim true", "isAdmin", "true", map[string]any{"isAdmin": true}, http.StatusOK},
		{"bool claim false", "isAdmin", "true", map[string]any{"isAdmin": false}, http.StatusForbidden},
		{"bool claim absent", "isAdmin", "true", map[string]any{}, http.StatusForbidden},
		{"custom value in roles", "roles", "platform-admin", map[string]any{"roles": []string{"platform-admin"}}, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestServer(t, func(_ *testIdP, c *Config) {
				c.AdminClaim, c.AdminValue = tt.adminClaim, tt.adminValue
			})
			env.idp.setClaims(tt.claims)
			env.mustLogin()
			resp := env.get("/apps")
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("GET /apps: status = %d, want %d; body %s", resp.StatusCode, tt.wantStatus, resp.body)
			}
			if tt.wantStatus == http.StatusForbidden {
				d := resp.denial()
				if d.Reason != ReasonNotAdmin {
					t.Errorf("GET /apps: reason = %q, want %q", d.Reason, ReasonNotAdmin)
				}
				if d.Subject != "alice-sub" {
					t.Errorf("403 denial context subject = %q, want %q (the page shows who is signed in)", d.Subject, "alice-sub")
				}
				// The JSON API denies a non-admin session too.
				if r := env.get("/v1/deploy/applications"); r.StatusCode != http.StatusForbidden {
					t.Errorf("GET /v1/deploy/applications: status = %d, want %d", r.StatusCode, http.StatusForbidden)
				}
			}
		})
	}
}

// TestAdminReevaluated checks IsAdmin is evaluated per request from the
// stored claim value, not trusted from login: the same cookie presented to
// an Auth configured with another AdminValue is denied.
func TestAdminReevaluated(t *testing.T) {
	env := newTestServer(t)
	cookie := env.sessionCookie(env.adminSession())
	if resp := env.serve(request(http.MethodGet, "/apps", nil, []*http.Cookie{cookie})); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /apps with admin session: status = %d, want 200", resp.StatusCode)
	}

	for _, tt := range []struct {
		name       string
		edit       func(*Config)
		wantStatus int
	}{
		{"other admin value", func(c *Config) { c.AdminValue = "platform-admin" }, http.StatusForbidden},
		{"other admin claim", func(c *Config) { c.AdminClaim = "roles" }, http.StatusFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := env.cfg
			tt.edit(&cfg)
			a2, err := New(context.Background(), cfg, nil, testDenier{})
			if err != nil {
				t.Fatalf("New() error = %v", err)
			}
			resp := serveRequire(a2, request(http.MethodGet, "/apps", nil, []*http.Cookie{cookie}))
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("GET /apps: status = %d, want %d; body %s", resp.StatusCode, tt.wantStatus, resp.body)
			}
		})
	}
}

// TestLogout covers logout: it needs POST, same origin and the CSRF token,
// and clears the session.
func TestLogout(t *testing.T) {
	t.Run("clears the session", func(t *testing.T) {
		env := newTestServer(t)
		env.mustLogin()
		token := env.csrf()
		resp := env.post(LogoutPath, url.Values{"csrf_token": {token}})
		if resp.StatusCode != http.StatusSeeOther || resp.location() != "/" {
			t.Fatalf("POST %s: status = %d, Location %q, want 303 to \"/\"", LogoutPath, resp.StatusCode, resp.location())
		}
		if c := resp.cookie(SessionCookie); c == nil || c.MaxAge >= 0 {
			t.Errorf("POST %s: %s cookie = %v, want it cleared", LogoutPath, SessionCookie, c)
		}
		if got := env.get("/apps"); got.StatusCode != http.StatusFound {
			t.Errorf("GET /apps after logout: status = %d, want %d", got.StatusCode, http.StatusFound)
		}
	})
	t.Run("local logout though the IdP advertises end_session", func(t *testing.T) {
		env := newTestServer(t, func(p *testIdP, c *Config) {
			p.endSession = true
			c.LocalLogout = true
		})
		env.mustLogin()
		resp := env.post(LogoutPath, url.Values{"csrf_token": {env.csrf()}})
		if resp.StatusCode != http.StatusSeeOther || resp.location() != "/" {
			t.Errorf("POST %s: status = %d, Location %q, want 303 to \"/\"", LogoutPath, resp.StatusCode, resp.location())
		}
	})
	t.Run("end session at IdP", func(t *testing.T) {
		env := newTestServer(t, func(p *testIdP, c *Config) {
			p.endSession = true
		})
		env.mustLogin()
		resp := env.post(LogoutPath, url.Values{"csrf_token": {env.csrf()}})
		want := env.idp.issuer() + "/logout?client_id=" + testClientID
		if resp.StatusCode != http.StatusSeeOther || resp.location() != want {
			t.Errorf("POST %s: status = %d, Location %q, want 303 to %q", LogoutPath, resp.StatusCode, resp.location(), want)
		}
	})
	t.Run("without a session", func(t *testing.T) {
		env := newTestServer(t)
		resp := env.post(LogoutPath, nil)
		if resp.StatusCode != http.StatusSeeOther || resp.location() != "/" {
			t.Errorf("POST %s: status = %d, Location %q, want 303 to \"/\"", LogoutPath, resp.StatusCode, resp.location())
		}
	})

	denied := []struct {
		name       string
		method     string
		form       url.Values
		header     []string
		wantStatus int
		wantReason string
	}{
		{"GET", http.MethodGet, nil, nil, http.StatusMethodNotAllowed, ""},
		{"missing CSRF token", http.MethodPost, nil, nil, http.StatusForbidden, ReasonCSRF},
		{"wrong CSRF token", http.MethodPost, url.Values{"csrf_token": {"wrong"}}, nil, http.StatusForbidden, ReasonCSRF},
		{"cross-site", http.MethodPost, nil, []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden, ReasonCrossOrigin},
	}
	for _, tt := range denied {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestServer(t)
			env.mustLogin()
			req := env.newRequest(tt.method, LogoutPath, strings.NewReader(tt.form.Encode()), tt.header...)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp := env.do(req)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("%s %s: status = %d, want %d", tt.method, LogoutPath, resp.StatusCode, tt.wantStatus)
			}
			if tt.wantReason != "" && resp.denial().Reason != tt.wantReason {
				t.Errorf("%s %s: reason = %q, want %q", tt.method, LogoutPath, resp.denial().Reason, tt.wantReason)
			}
			if c := resp.cookie(SessionCookie); c != nil {
				t.Errorf("%s %s: touched %s cookie, want it kept", tt.method, LogoutPath, SessionCookie)
			}
			if got := env.get("/apps"); got.StatusCode != http.StatusOK {
				t.Errorf("GET /apps after denied logout: status = %d, want %d", got.StatusCode, http.StatusOK)
			}
		})
	}
}
