package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// testEnv is the app under test: an Auth wired to a testIdP, mounted on a
// mux like the handlers package will mount it, behind a real HTTP server
// and reachable in-process too (serve).
type testEnv struct {
	t      *testing.T
	idp    *testIdP
	auth   *Auth
	cfg    Config
	app    *httptest.Server
	mux    *http.ServeMux
	client *http.Client // cookie jar, does not follow redirects
	clock  *fakeClock
	logs   *syncBuffer
}

// newTestServer starts a testIdP and an app, applying opts to the Config
// before New.
func newTestServer(t *testing.T, opts ...func(*testIdP, *Config)) *testEnv {
	t.Helper()
	idp := newTestIdP(t)
	mux := http.NewServeMux()
	app := httptest.NewServer(mux)
	t.Cleanup(app.Close)

	keys, err := GenerateSessionKeys()
	if err != nil {
		t.Fatalf("GenerateSessionKeys() error = %v", err)
	}
	cfg := Config{
		IssuerURL:       idp.issuer(),
		ClientID:        testClientID,
		ClientSecret:    testClientSecret,
		RedirectURL:     app.URL + CallbackPath,
		SessionKeys:     keys,
		InsecureCookies: true,
	}
	for _, o := range opts {
		o(idp, &cfg)
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := New(context.Background(), cfg, log, testDenier{})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	clock := &fakeClock{}
	a.now = clock.Now

	// Registered after a is complete: the mux's lock orders the writes
	// above before any handler runs.
	login, callback, logout := a.Routes()
	mux.HandleFunc("GET "+LoginPath, login)
	mux.HandleFunc("GET "+CallbackPath, callback)
	mux.HandleFunc(LogoutPath, logout)
	mux.Handle("/", a.Require(http.HandlerFunc(echoIdentity)))

	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatalf("cookiejar.New() error = %v", err)
	}
	client := &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       30 * time.Second,
	}
	return &testEnv{t: t, idp: idp, auth: a, cfg: cfg, app: app, mux: mux, client: client, clock: clock, logs: logs}
}

// fakeClock is time.Now plus an offset the test can move.
type fakeClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// echoed is what echoIdentity writes: the request's context as Require left it.
type echoed struct {
	HasIdentity bool
	Identity    Identity
	CSRF        string
}

// echoIdentity is the protected handler: it echoes the Identity and CSRF
// token in the request's context.
func echoIdentity(w http.ResponseWriter, r *http.Request) {
	id, ok := FromContext(r.Context())
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(echoed{HasIdentity: ok, Identity: id, CSRF: CSRFToken(r.Context())})
}

// denial is what testDenier writes.
type denial struct {
	Denied  bool   `json:"denied"`
	Status  int    `json:"status"`
	Reason  string `json:"reason"`
	Subject string `json:"subject"` // Identity in the denial's context, if any
}

// testDenier writes the denial as JSON so tests can read it back.
type testDenier struct{}

func (testDenier) Deny(w http.ResponseWriter, r *http.Request, status int, reason string) {
	id, _ := FromContext(r.Context())
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(denial{Denied: true, Status: status, Reason: reason, Subject: id.Subject})
}

// response is a finished HTTP response with its body read.
type response struct {
	*http.Response
	body []byte
}

func (r response) location() string { return r.Header.Get("Location") }

// denial decodes a testDenier body; Denied is false when the body is not one.
func (r response) denial() denial {
	var d denial
	_ = json.Unmarshal(r.body, &d)
	return d
}

// echoed decodes an echoIdentity body.
func (r response) echoed(t *testing.T) echoed {
	t.Helper()
	var e echoed
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("decode echo body %q: %v", r.body, err)
	}
	return e
}

// cookie returns the Set-Cookie of the response named name, or nil.
func (r response) cookie(name string) *http.Cookie {
	for _, c := range r.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// do sends req with the env's client (and its cookie jar).
func (e *testEnv) do(req *http.Request) response {
	e.t.Helper()
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: read body: %v", req.Method, req.URL, err)
	}
	return response{Response: resp, body: body}
}

// get GETs target, a path on the app or an absolute URL.
func (e *testEnv) get(target string, header ...string) response {
	e.t.Helper()
	return e.do(e.newRequest(http.MethodGet, target, nil, header...))
}

// post POSTs a form to target on the app.
func (e *testEnv) post(target string, form url.Values, header ...string) response {
	e.t.Helper()
	req := e.newRequest(http.MethodPost, target, strings.NewReader(form.Encode()), header...)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return e.do(req)
}

// newRequest builds a request; header is name, value pairs.
func (e *testEnv) newRequest(method, target string, body io.Reader, header ...string) *http.Request {
	e.t.Helper()
	if strings.HasPrefix(target, "/") {
		target = e.app.URL + target
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		e.t.Fatalf("http.NewRequest(%s, %s): %v", method, target, err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return req
}

// startLogin GETs the login page with next and returns its response and the
// IdP authorization URL it redirects to.
func (e *testEnv) startLogin(next string) (response, *url.URL) {
	e.t.Helper()
	resp := e.get(LoginPath + "?next=" + url.QueryEscape(next))
	if resp.StatusCode != http.StatusFound {
		e.t.Fatalf("GET %s: status = %d, want %d; body %s", LoginPath, resp.StatusCode, http.StatusFound, resp.body)
	}
	u, err := url.Parse(resp.location())
	if err != nil {
		e.t.Fatalf("login redirect %q: %v", resp.location(), err)
	}
	return resp, u
}

// authorize visits the IdP authorization URL and returns the callback URL
// the IdP redirects back to.
func (e *testEnv) authorize(authURL *url.URL) *url.URL {
	e.t.Helper()
	resp := e.get(authURL.String())
	if resp.StatusCode != http.StatusFound {
		e.t.Fatalf("GET IdP %s: status = %d, want %d; body %s", authURL.Path, resp.StatusCode, http.StatusFound, resp.body)
	}
	u, err := url.Parse(resp.location())
	if err != nil {
		e.t.Fatalf("IdP redirect %q: %v", resp.location(), err)
	}
	return u
}

// login runs the whole flow (login, IdP, callback) for next and returns the
// callback's response.
func (e *testEnv) login(next string) response {
	e.t.Helper()
	_, authURL := e.startLogin(next)
	return e.get(e.authorize(authURL).String())
}

// mustLogin logs in and fails the test unless a session was stored.
func (e *testEnv) mustLogin() {
	e.t.Helper()
	resp := e.login("/")
	if resp.StatusCode != http.StatusFound || resp.cookie(SessionCookie) == nil {
		e.t.Fatalf("login: status = %d, session cookie %v; body %s", resp.StatusCode, resp.cookie(SessionCookie), resp.body)
	}
}

// csrf GETs a protected page and returns the session's CSRF token.
func (e *testEnv) csrf() string {
	e.t.Helper()
	resp := e.get("/apps")
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("GET /apps: status = %d, want 200; body %s", resp.StatusCode, resp.body)
	}
	return resp.echoed(e.t).CSRF
}

// serve runs req through the app in-process.
func (e *testEnv) serve(req *http.Request) response {
	rec := httptest.NewRecorder()
	e.mux.ServeHTTP(rec, req)
	res := rec.Result()
	return response{Response: res, body: rec.Body.Bytes()}
}

// sessionCookie encodes s as a session cookie with the env's keys.
func (e *testEnv) sessionCookie(s sessionData) *http.Cookie {
	e.t.Helper()
	rec := httptest.NewRecorder()
	if err := writeCookie(e.auth.sessions, rec, httptest.NewRequest(http.MethodGet, "/", nil), SessionCookie, s); err != nil {
		e.t.Fatalf("writeCookie: %v", err)
	}
	for _, c := range rec.Result().Cookies() {
		if c.Name == SessionCookie {
			return &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	e.t.Fatalf("writeCookie set no %s cookie", SessionCookie)
	return nil
}

// adminSession is a valid session of a superadmin, issued now.
func (e *testEnv) adminSession() sessionData {
	now := e.clock.Now()
	return sessionData{
		Version:  sessionVersion,
		Subject:  "alice-sub",
		Email:    "alice@example.com",
		Name:     "Alice",
		Claim:    "groups",
		Value:    json.RawMessage(`["developers","superadmin"]`),
		IssuedAt: now.Unix(),
		Expires:  now.Add(DefaultSessionTTL).Unix(),
		CSRF:     strings.Repeat("c", 43),
		Checked:  now.Unix(),
	}
}

// request builds an in-process request with cookies and name, value header pairs.
func request(method, target string, body io.Reader, cookies []*http.Cookie, header ...string) *http.Request {
	req := httptest.NewRequest(method, target, body)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return req
}
