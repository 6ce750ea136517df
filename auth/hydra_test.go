package auth

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/devidp"
)

// hydraEnv is an Auth against the real demo IdP (Ory Hydra and the
// project's login app), with a clock the test moves.
type hydraEnv struct {
	t     *testing.T
	idp   *devidp.IdP
	app   *httptest.Server
	auth  *Auth
	clock *fakeClock
	logs  *syncBuffer
}

func newHydraEnv(t *testing.T, recheck time.Duration, opts ...func(*Config)) *hydraEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Ory Hydra")
	}
	mux := http.NewServeMux()
	app := httptest.NewServer(mux)
	t.Cleanup(app.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	users := append(devidp.DefaultUsers(),
		devidp.User{Username: "ops", Password: "ops", Email: "ops@demo.local", Name: "Ops", Groups: []string{"superadmin"}},
		devidp.User{Username: "carol", Password: "carol", Email: "carol@demo.local", Name: "Carol", Groups: []string{"superadmin"}})
	idp, err := devidp.Start(ctx, devidp.Options{RedirectURLs: []string{app.URL + CallbackPath}, Users: users})
	if err != nil {
		t.Fatalf("devidp.Start: %v", err)
	}
	t.Cleanup(idp.Stop)
	keys, err := GenerateSessionKeys()
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	cfg := Config{
		IssuerURL: idp.IssuerURL, ClientID: idp.ClientID, ClientSecret: idp.ClientSecret,
		RedirectURL: app.URL + CallbackPath, SessionKeys: keys, InsecureCookies: true, SessionRecheck: recheck,
	}
	for _, o := range opts {
		o(&cfg)
	}
	a, err := New(ctx, cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), testDenier{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	clock := &fakeClock{}
	a.now = clock.Now
	login, callback, logout := a.Routes()
	mux.HandleFunc("GET "+LoginPath, login)
	mux.HandleFunc("GET "+CallbackPath, callback)
	mux.HandleFunc(LogoutPath, logout)
	mux.Handle("/", a.Require(http.HandlerFunc(echoIdentity)))
	return &hydraEnv{t: t, idp: idp, app: app, auth: a, clock: clock, logs: logs}
}

// hydraBrowser is a cookie-jar client; it follows redirects except those
// whose answer the test reads (follow false).
type hydraBrowser struct {
	t      *testing.T
	client *http.Client
	follow bool
}

func (e *hydraEnv) browser() *hydraBrowser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	b := &hydraBrowser{t: e.t, follow: true}
	b.client = &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(_ *http.Request, via []*http.Request) error {
		if !b.follow {
			return http.ErrUseLastResponse
		}
		if len(via) > 20 {
			return errors.New("too many redirects")
		}
		return nil
	}}
	return b
}

func (b *hydraBrowser) do(req *http.Request) (response, *url.URL) {
	b.t.Helper()
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		b.t.Fatal(err)
	}
	return response{Response: resp, body: body}, resp.Request.URL
}

func (b *hydraBrowser) get(u string) (response, *url.URL) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

var hydraChallengeRE = regexp.MustCompile(`name="login_challenge" value="([^"]*)"`)

// signIn goes through deploy-web's login, the IdP's sign-in form and
// consent, back to deploy-web; it returns the last answer (the echo of
// /apps for a good login, the form again for a refused one).
func (e *hydraEnv) signIn(b *hydraBrowser, user, pass string) (response, *url.URL) {
	e.t.Helper()
	form, at := b.get(e.app.URL + LoginPath + "?next=/apps")
	m := hydraChallengeRE.FindStringSubmatch(string(form.body))
	if m == nil {
		e.t.Fatalf("login: ended at %s (status %d) without the sign-in form: %.500s", at, form.StatusCode, form.body)
	}
	v := url.Values{"login_challenge": {html.UnescapeString(m[1])}, "username": {user}, "password": {pass}}
	req, err := http.NewRequest(http.MethodPost, e.idp.LoginURL, strings.NewReader(v.Encode()))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// mustSignIn signs in a superadmin and returns the echoed identity.
func (e *hydraEnv) mustSignIn(b *hydraBrowser, user string) echoed {
	e.t.Helper()
	resp, at := e.signIn(b, user, user)
	if resp.StatusCode != http.StatusOK || at.Path != "/apps" {
		e.t.Fatalf("sign in %s: ended at %s with %d: %.500s", user, at, resp.StatusCode, resp.body)
	}
	var got echoed
	if err := json.Unmarshal(resp.body, &got); err != nil || !got.Identity.Admin || got.Identity.Subject != user {
		e.t.Fatalf("sign in %s: identity %+v (%v), want the admin %s", user, got.Identity, err, user)
	}
	return got
}

// status GETs path on deploy-web without following redirects.
func (e *hydraEnv) status(b *hydraBrowser, path string) response {
	e.t.Helper()
	b.follow = false
	defer func() { b.follow = true }()
	resp, _ := b.get(e.app.URL + path)
	return resp
}

// TestRecheckWithHydra: sessions re-check their user with the real IdP
// through the refresh token. A superadmin stays signed in across re-checks
// (Hydra rotates the refresh token each time); one removed from the admin
// group, or disabled, is signed out at the next re-check; logout revokes
// the refresh token and ends the IdP session.
func TestRecheckWithHydra(t *testing.T) {
	const recheck = time.Minute
	e := newHydraEnv(t, recheck)

	// admin: still a superadmin across two re-checks, then removed from
	// the group.
	admin := e.browser()
	e.mustSignIn(admin, "admin")
	for i := range 2 {
		e.clock.Advance(recheck + time.Second)
		if resp := e.status(admin, "/apps"); resp.StatusCode != http.StatusOK {
			t.Fatalf("re-check %d of a superadmin: status = %d, want 200: %s\nlog:\n%s", i+1, resp.StatusCode, resp.body, e.logs)
		}
	}
	if err := e.idp.SetGroups("admin", []string{"viewers"}); err != nil {
		t.Fatal(err)
	}
	if resp := e.status(admin, "/apps"); resp.StatusCode != http.StatusOK {
		t.Errorf("before the next re-check: status = %d, want 200 (the session is trusted until then)", resp.StatusCode)
	}
	e.clock.Advance(recheck + time.Second)
	resp := e.status(admin, "/apps")
	if resp.StatusCode != http.StatusUnauthorized || resp.denial().Reason != ReasonSessionEnded {
		t.Errorf("re-check after removal from the group: status = %d, reason %q, want 401 %q", resp.StatusCode, resp.denial().Reason, ReasonSessionEnded)
	}
	if resp := e.status(admin, "/v1/deploy/applications"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("API after the sign-out: status = %d, want 401", resp.StatusCode)
	}
	if !strings.Contains(e.logs.String(), "no longer a superadmin") || !strings.Contains(e.logs.String(), "email=admin@demo.local") {
		t.Errorf("no sign-out line naming admin@demo.local and the reason:\n%s", e.logs)
	}

	// ops: disabled at the IdP.
	ops := e.browser()
	e.mustSignIn(ops, "ops")
	if err := e.idp.Disable("ops"); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(recheck + time.Second)
	// Hydra refuses the refresh of a disabled user: a sign-out with a page
	// saying so, never the 503 of an IdP that could not answer.
	if resp := e.status(ops, "/apps"); resp.StatusCode != http.StatusUnauthorized || resp.denial().Reason != ReasonSessionEnded {
		t.Errorf("re-check of a disabled user: status = %d, reason %q, want 401 %q: %s", resp.StatusCode, resp.denial().Reason, ReasonSessionEnded, resp.body)
	}
	if resp := e.status(ops, "/v1/deploy/applications"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a disabled user after the sign-out: status = %d, want 401: %s", resp.StatusCode, resp.body)
	}
	if !strings.Contains(e.logs.String(), "refused") {
		t.Errorf("no sign-out line saying the IdP refused the refresh:\n%s", e.logs)
	}
	if resp, _ := e.signIn(e.browser(), "ops", "ops"); !strings.Contains(string(resp.body), "This account is disabled.") {
		t.Errorf("sign-in of a disabled user: %.300s, want the form saying the account is disabled", resp.body)
	}

	// carol: logout revokes the refresh token and ends the IdP session.
	carol := e.browser()
	got := e.mustSignIn(carol, "carol")
	u, _ := url.Parse(e.app.URL)
	copied := carol.client.Jar.Cookies(u)
	v := url.Values{"csrf_token": {got.CSRF}}
	req, err := http.NewRequest(http.MethodPost, e.app.URL+LogoutPath, strings.NewReader(v.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.app.URL)
	carol.follow = false
	out, _ := carol.do(req)
	carol.follow = true
	loc := out.Header.Get("Location")
	if out.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, e.idp.IssuerURL+"/") {
		t.Fatalf("logout: status = %d, Location %q, want 303 to the IdP's end_session_endpoint", out.StatusCode, loc)
	}
	if end, at := carol.get(loc); end.StatusCode != http.StatusOK || !strings.Contains(string(end.body), "Signed out") {
		t.Errorf("IdP logout: ended at %s with %d: %.300s, want the IdP's signed-out page", at, end.StatusCode, end.body)
	}
	if !strings.Contains(e.logs.String(), "refresh_token_revoked=yes") {
		t.Errorf("logout line does not say the refresh token was revoked:\n%s", e.logs)
	}
	e.clock.Advance(recheck + time.Second)
	copy := e.browser()
	copy.client.Jar.SetCookies(u, copied)
	if resp := e.status(copy, "/v1/deploy/applications"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a copy of the session cookie after logout, at its re-check: status = %d, want 401", resp.StatusCode)
	}
}
