package devidp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeAdmin stands in for Hydra's admin API and records the calls it gets.
type fakeAdmin struct {
	login   *loginRequest
	consent *consentRequest
	err     error // returned by every call when set

	mu    sync.Mutex
	calls []string
	body  any // the last accept or reject body
}

const fakeRedirect = "http://hydra.test/oauth2/auth?verifier=v"

func (f *fakeAdmin) record(call string, body any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	f.body = body
}

func (f *fakeAdmin) LoginRequest(_ context.Context, c string) (*loginRequest, error) {
	f.record("LoginRequest "+c, nil)
	if f.err != nil {
		return nil, f.err
	}
	return f.login, nil
}

func (f *fakeAdmin) AcceptLogin(_ context.Context, c string, b acceptLogin) (string, error) {
	f.record("AcceptLogin "+c, b)
	return fakeRedirect, f.err
}

func (f *fakeAdmin) RejectLogin(_ context.Context, c string, b rejectRequest) (string, error) {
	f.record("RejectLogin "+c, b)
	return fakeRedirect, f.err
}

func (f *fakeAdmin) ConsentRequest(_ context.Context, c string) (*consentRequest, error) {
	f.record("ConsentRequest "+c, nil)
	if f.err != nil {
		return nil, f.err
	}
	return f.consent, nil
}

func (f *fakeAdmin) AcceptConsent(_ context.Context, c string, b acceptConsent) (string, error) {
	f.record("AcceptConsent "+c, b)
	return fakeRedirect, f.err
}

func (f *fakeAdmin) AcceptLogout(_ context.Context, c string) (string, error) {
	f.record("AcceptLogout "+c, nil)
	return fakeRedirect, f.err
}

// newTestServer serves the app in front of fake.
func newTestServer(t *testing.T, fake *fakeAdmin) *httptest.Server {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewServer(newApp(log, fake, newDirectory(DefaultUsers()), ""))
	t.Cleanup(srv.Close)
	return srv
}

// noRedirect is a client that returns redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

type result struct {
	status   int
	location string
	body     string
}

func do(t *testing.T, srv *httptest.Server, method, path string, form url.Values) result {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return result{resp.StatusCode, resp.Header.Get("Location"), string(b)}
}

func TestApp(t *testing.T) {
	notFound := &hydraError{Op: "get login request", Status: 404, Code: "not_found", Description: "secret detail"}
	gone := &hydraError{Op: "get login request", Status: 410, RedirectTo: "http://hydra.test/oauth2/auth?again"}
	down := errors.New("dial tcp 127.0.0.1:1: connection refused")
	tests := []struct {
		name       string
		fake       *fakeAdmin
		method     string
		path       string
		form       url.Values
		wantStatus int
		wantLoc    string
		wantBody   []string // substrings of the body
		wantCalls  []string
		wantBodyTo any // the body sent to the admin API
	}{
		{
			name: "login form", method: "GET", path: "/login?login_challenge=C1",
			fake:       &fakeAdmin{login: &loginRequest{Challenge: "C1"}},
			wantStatus: 200,
			wantBody: []string{"<title>Sign in to deploy-web (demo identity provider)</title>",
				`name="username"`, `name="password"`, `id="login-submit"`, `value="cancel"`, `name="login_challenge" value="C1"`},
			wantCalls: []string{"LoginRequest C1"},
		},
		{
			name: "login skip accepts the known subject", method: "GET", path: "/login?login_challenge=C1",
			fake:       &fakeAdmin{login: &loginRequest{Challenge: "C1", Skip: true, Subject: "viewer"}},
			wantStatus: 302, wantLoc: fakeRedirect,
			wantCalls:  []string{"LoginRequest C1", "AcceptLogin C1"},
			wantBodyTo: acceptLogin{Subject: "viewer"},
		},
		{
			name: "login without challenge", method: "GET", path: "/login",
			wantStatus: 400, wantBody: []string{"missing its login_challenge"},
		},
		{
			name: "login with a malformed challenge", method: "GET", path: "/login?login_challenge=%3Cscript%3E",
			wantStatus: 400, wantBody: []string{"malformed"},
		},
		{
			name: "login with an unknown challenge", method: "GET", path: "/login?login_challenge=C1",
			fake:       &fakeAdmin{err: notFound},
			wantStatus: 400, wantBody: []string{"no longer valid"},
			wantCalls: []string{"LoginRequest C1"},
		},
		{
			name: "login already handled", method: "GET", path: "/login?login_challenge=C1",
			fake:       &fakeAdmin{err: gone},
			wantStatus: 302, wantLoc: gone.RedirectTo,
			wantCalls: []string{"LoginRequest C1"},
		},
		{
			name: "hydra unreachable", method: "GET", path: "/login?login_challenge=C1",
			fake:       &fakeAdmin{err: down},
			wantStatus: 502, wantBody: []string{"could not be reached"},
			wantCalls: []string{"LoginRequest C1"},
		},
		{
			name: "right password", method: "POST", path: "/login",
			form:       url.Values{"login_challenge": {"C1"}, "username": {"admin"}, "password": {"admin"}, "action": {"login"}},
			wantStatus: 302, wantLoc: fakeRedirect,
			wantCalls:  []string{"AcceptLogin C1"},
			wantBodyTo: acceptLogin{Subject: "admin", Remember: false},
		},
		{
			name: "wrong password shows the form again", method: "POST", path: "/login",
			form:       url.Values{"login_challenge": {"C1"}, "username": {"admin"}, "password": {"nope"}},
			wantStatus: 200,
			wantBody:   []string{`data-testid="login-error"`, msgWrong, `id="login-submit"`, `name="username" value="admin"`, `name="login_challenge" value="C1"`},
		},
		{
			name: "cancel", method: "POST", path: "/login",
			form:       url.Values{"login_challenge": {"C1"}, "action": {"cancel"}},
			wantStatus: 302, wantLoc: fakeRedirect,
			wantCalls:  []string{"RejectLogin C1"},
			wantBodyTo: rejectRequest{Error: "access_denied", ErrorDescription: "The user cancelled the sign-in."},
		},
		{
			name: "post without challenge", method: "POST", path: "/login",
			form:       url.Values{"username": {"admin"}, "password": {"admin"}},
			wantStatus: 400, wantBody: []string{"missing its login_challenge"},
		},
		{
			name: "accept fails", method: "POST", path: "/login",
			form:       url.Values{"login_challenge": {"C1"}, "username": {"admin"}, "password": {"admin"}},
			fake:       &fakeAdmin{err: notFound},
			wantStatus: 400, wantBody: []string{"no longer valid"},
			wantCalls:  []string{"AcceptLogin C1"},
			wantBodyTo: acceptLogin{Subject: "admin"},
		},
		{
			name: "consent", method: "GET", path: "/consent?consent_challenge=K1",
			fake: &fakeAdmin{consent: &consentRequest{Subject: "admin", RequestedScope: []string{"openid", "groups"},
				RequestedAccessTokenAudience: []string{"api"}}},
			wantStatus: 302, wantLoc: fakeRedirect,
			wantCalls: []string{"ConsentRequest K1", "AcceptConsent K1"},
			wantBodyTo: acceptConsent{
				GrantScope:               []string{"openid", "groups"},
				GrantAccessTokenAudience: []string{"api"},
				Session: consentSession{IDToken: map[string]any{
					"groups": []string{"superadmin"}, "email": "admin@demo.local", "email_verified": true, "name": "Demo Admin",
				}},
			},
		},
		{
			name: "consent for an unknown subject", method: "GET", path: "/consent?consent_challenge=K1",
			fake:       &fakeAdmin{consent: &consentRequest{Subject: "mallory"}},
			wantStatus: 400, wantBody: []string{"not one of this identity provider"},
			wantCalls: []string{"ConsentRequest K1"},
		},
		{
			name: "consent without challenge", method: "GET", path: "/consent?login_challenge=K1",
			wantStatus: 400, wantBody: []string{"missing its consent_challenge"},
		},
		{
			name: "logout", method: "GET", path: "/logout?logout_challenge=L1",
			wantStatus: 302, wantLoc: fakeRedirect,
			wantCalls: []string{"AcceptLogout L1"},
		},
		{
			name: "logged out", method: "GET", path: "/logged-out",
			wantStatus: 200, wantBody: []string{"signed out"},
		},
		{
			name: "unknown page", method: "GET", path: "/nope",
			wantStatus: 404,
		},
		{
			name: "consent is not a POST route", method: "POST", path: "/consent?consent_challenge=K1",
			form:       url.Values{},
			wantStatus: 405,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := tt.fake
			if fake == nil {
				fake = &fakeAdmin{}
			}
			srv := newTestServer(t, fake)
			got := do(t, srv, tt.method, tt.path, tt.form)
			if got.status != tt.wantStatus {
				t.Errorf("%s %s: status = %d, want %d; body:\n%s", tt.method, tt.path, got.status, tt.wantStatus, got.body)
			}
			if got.location != tt.wantLoc {
				t.Errorf("%s %s: Location = %q, want %q", tt.method, tt.path, got.location, tt.wantLoc)
			}
			for _, s := range tt.wantBody {
				if !strings.Contains(got.body, s) {
					t.Errorf("%s %s: body lacks %q; body:\n%s", tt.method, tt.path, s, got.body)
				}
			}
			for _, secret := range []string{"secret detail", "connection refused"} {
				if strings.Contains(got.body, secret) {
					t.Errorf("%s %s: body shows the internal error %q", tt.method, tt.path, secret)
				}
			}
			if diff := cmp.Diff(tt.wantCalls, fake.calls); diff != "" {
				t.Errorf("%s %s: admin calls (-want +got):\n%s", tt.method, tt.path, diff)
			}
			if tt.wantBodyTo != nil {
				if diff := cmp.Diff(tt.wantBodyTo, fake.body); diff != "" {
					t.Errorf("%s %s: admin request body (-want +got):\n%s", tt.method, tt.path, diff)
				}
			}
		})
	}
}

// TestHTMLInjection checks that what a browser sends comes back escaped.
func TestHTMLInjection(t *testing.T) {
	srv := newTestServer(t, &fakeAdmin{})
	const evil = `"><script>alert(1)</script>`
	got := do(t, srv, "POST", "/login", url.Values{"login_challenge": {"C1"}, "username": {evil}, "password": {"x"}})
	if got.status != 200 {
		t.Fatalf("status = %d, want 200", got.status)
	}
	if strings.Contains(got.body, "<script>") {
		t.Errorf("body contains an unescaped <script>:\n%s", got.body)
	}
	if !strings.Contains(got.body, "&lt;script&gt;") {
		t.Errorf("body lacks the escaped user name:\n%s", got.body)
	}
}

func TestPagesHeaders(t *testing.T) {
	srv := newTestServer(t, &fakeAdmin{login: &loginRequest{}})
	resp, err := http.Get(srv.URL + "/login?login_challenge=C1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for k, want := range map[string]string{
		"Content-Type":    "text/html; charset=utf-8",
		"Cache-Control":   "no-store",
		"X-Frame-Options": "DENY",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
}
