package devidp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

// hydraBin returns the hydra binary. Without it the tests fail, unless run
// with -short, where they skip.
func hydraBin(t *testing.T) string {
	t.Helper()
	bin, err := findHydra()
	if err != nil {
		if testing.Short() {
			t.Skip(err)
		}
		t.Fatal(err) // the message says "run make cluster-bin"
	}
	return bin
}

// rp is the relying party of a test: a callback URL on a throwaway
// listener that nothing ever reaches, since the test's browser stops there.
type rp struct {
	origin   string // http://127.0.0.1:<port>
	callback string // origin + /auth/callback
}

func newRP(t *testing.T) rp {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	origin := "http://" + ln.Addr().String()
	return rp{origin: origin, callback: origin + "/auth/callback"}
}

// startIdP starts an IdP for r and stops it when the test ends.
func startIdP(t *testing.T, r rp) *IdP {
	t.Helper()
	bin := hydraBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	begin := time.Now()
	p, err := Start(ctx, Options{HydraBin: bin, RedirectURLs: []string{r.callback}})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(p.Stop)
	t.Logf("Start took %v (issuer %s, app %s)", time.Since(begin).Round(time.Millisecond), p.IssuerURL, p.AppURL)
	return p
}

// browser is an HTTP client with a cookie jar that follows redirects until
// one leads to the relying party's origin.
type browser struct {
	t      *testing.T
	client *http.Client
}

func newBrowser(t *testing.T, r rp) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, client: &http.Client{
		Jar:     jar,
		Timeout: 30 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if strings.HasPrefix(req.URL.String(), r.origin+"/") {
				return http.ErrUseLastResponse
			}
			if len(via) > 20 {
				return errors.New("too many redirects")
			}
			return nil
		},
	}}
}

// page is a response with its body read.
type page struct {
	url    *url.URL // of the request that produced it
	status int
	header http.Header
	body   string
}

func (b *browser) do(req *http.Request) page {
	b.t.Helper()
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return page{url: resp.Request.URL, status: resp.StatusCode, header: resp.Header, body: string(body)}
}

func (b *browser) get(u string) page {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

var challengeRE = regexp.MustCompile(`name="login_challenge" value="([^"]*)"`)

// submitLogin posts the sign-in form on pg with the given fields.
func (b *browser) submitLogin(pg page, fields url.Values) page {
	b.t.Helper()
	m := challengeRE.FindStringSubmatch(pg.body)
	if m == nil {
		b.t.Fatalf("%s: no sign-in form (status %d):\n%s", pg.url, pg.status, pg.body)
	}
	fields.Set("login_challenge", html.UnescapeString(m[1]))
	action := pg.url.ResolveReference(&url.URL{Path: "/login"})
	req, err := http.NewRequest(http.MethodPost, action.String(), strings.NewReader(fields.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

const (
	testState = "xyz1234567"
	testNonce = "n0nce12345"
)

// authorize starts the flow and returns the sign-in form.
func (b *browser) authorize(p *IdP, r rp, scope string) page {
	b.t.Helper()
	q := url.Values{
		"client_id":     {p.ClientID},
		"response_type": {"code"},
		"scope":         {scope},
		"redirect_uri":  {r.callback},
		"state":         {testState},
		"nonce":         {testNonce},
	}
	pg := b.get(p.IssuerURL + "/oauth2/auth?" + q.Encode())
	if pg.status != http.StatusOK || !strings.HasPrefix(pg.url.String(), p.LoginURL+"?") {
		b.t.Fatalf("authorize: ended at %s with status %d, want the sign-in form at %s:\n%s", pg.url, pg.status, p.LoginURL, pg.body)
	}
	return pg
}

// callback checks that pg is the redirect to the callback and returns its
// query.
func callback(t *testing.T, r rp, pg page) url.Values {
	t.Helper()
	if pg.status != http.StatusFound && pg.status != http.StatusSeeOther {
		t.Fatalf("%s: status %d, want a redirect to the callback:\n%s", pg.url, pg.status, pg.body)
	}
	loc, err := url.Parse(pg.header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != r.callback {
		t.Fatalf("redirect to %s, want %s", loc, r.callback)
	}
	q := loc.Query()
	if got := q.Get("state"); got != testState {
		t.Errorf("callback state = %q, want %q", got, testState)
	}
	return q
}

// signIn runs the flow for username and password and returns the callback
// query.
func signIn(t *testing.T, p *IdP, r rp, username, password string) url.Values {
	t.Helper()
	b := newBrowser(t, r)
	form := b.authorize(p, r, "openid profile email groups")
	return callback(t, r, b.submitLogin(form, url.Values{"username": {username}, "password": {password}, "action": {"login"}}))
}

type tokens struct {
	IDToken      string `json:"id_token"`
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	RefreshToken string `json:"refresh_token"`
}

// exchange redeems code at the token endpoint with client_secret_basic.
func exchange(t *testing.T, p *IdP, r rp, code string) tokens {
	t.Helper()
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {r.callback}}
	req, err := http.NewRequest(http.MethodPost, p.IssuerURL+"/oauth2/token", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(p.ClientID), url.QueryEscape(p.ClientSecret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("token endpoint: status %d: %s", resp.StatusCode, body)
	}
	var tok tokens
	if err := json.Unmarshal(body, &tok); err != nil {
		t.Fatalf("token endpoint: %v: %s", err, body)
	}
	if tok.IDToken == "" || tok.AccessToken == "" {
		t.Fatalf("token endpoint: no id_token or access_token: %s", body)
	}
	return tok
}

type idClaims struct {
	Iss           string   `json:"iss"`
	Sub           string   `json:"sub"`
	Aud           []string `json:"aud"`
	Nonce         string   `json:"nonce"`
	Email         string   `json:"email"`
	EmailVerified bool     `json:"email_verified"`
	Name          string   `json:"name"`
	Groups        []string `json:"groups"`
}

// payload decodes a JWT's claims without checking its signature.
func payload(t *testing.T, jwt string) idClaims {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("ID token has %d parts, want 3", len(parts))
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("ID token payload: %v", err)
	}
	var c idClaims
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("ID token payload: %v: %s", err, raw)
	}
	return c
}

func TestAuthorizationCodeFlow(t *testing.T) {
	r := newRP(t)
	p := startIdP(t, r)

	t.Run("admin", func(t *testing.T) {
		q := signIn(t, p, r, "admin", "admin")
		code := q.Get("code")
		if code == "" {
			t.Fatalf("callback has no code: %v", q)
		}
		tok := exchange(t, p, r, code)
		got := payload(t, tok.IDToken)
		want := idClaims{
			Iss: p.IssuerURL, Sub: "admin", Aud: []string{p.ClientID}, Nonce: testNonce,
			Email: "admin@demo.local", EmailVerified: true, Name: "Demo Admin", Groups: []string{"superadmin"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ID token claims (-want +got):\n%s", diff)
		}

		// deploy-web verifies with go-oidc; so does this test once.
		ctx := context.Background()
		provider, err := oidc.NewProvider(ctx, p.IssuerURL)
		if err != nil {
			t.Fatalf("oidc.NewProvider(%s): %v", p.IssuerURL, err)
		}
		idt, err := provider.Verifier(&oidc.Config{ClientID: p.ClientID}).Verify(ctx, tok.IDToken)
		if err != nil {
			t.Fatalf("verify ID token: %v", err)
		}
		if idt.Nonce != testNonce || idt.Subject != "admin" {
			t.Errorf("verified ID token: nonce %q sub %q, want %q and admin", idt.Nonce, idt.Subject, testNonce)
		}
	})

	t.Run("viewer", func(t *testing.T) {
		q := signIn(t, p, r, "viewer", "viewer")
		got := payload(t, exchange(t, p, r, q.Get("code")).IDToken)
		if got.Sub != "viewer" || !slices.Equal(got.Groups, []string{"viewers"}) || got.Email != "viewer@demo.local" {
			t.Errorf("viewer's ID token: sub %q groups %q email %q, want viewer [viewers] viewer@demo.local", got.Sub, got.Groups, got.Email)
		}
	})

	t.Run("wrong password", func(t *testing.T) {
		b := newBrowser(t, r)
		form := b.authorize(p, r, "openid groups")
		again := b.submitLogin(form, url.Values{"username": {"admin"}, "password": {"wrong"}})
		if again.status != http.StatusOK {
			t.Fatalf("wrong password: status %d, want 200", again.status)
		}
		for _, s := range []string{`data-testid="login-error"`, msgWrong, `id="login-submit"`, `name="password"`} {
			if !strings.Contains(again.body, s) {
				t.Errorf("wrong password: page lacks %q:\n%s", s, again.body)
			}
		}
		// The same sign-in request still works with the right password.
		q := callback(t, r, b.submitLogin(again, url.Values{"username": {"admin"}, "password": {"admin"}}))
		if q.Get("code") == "" {
			t.Errorf("right password after a wrong one: no code: %v", q)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		b := newBrowser(t, r)
		form := b.authorize(p, r, "openid")
		q := callback(t, r, b.submitLogin(form, url.Values{"action": {"cancel"}}))
		if q.Get("error") != "access_denied" || q.Get("code") != "" {
			t.Errorf("cancel: callback query %v, want error=access_denied and no code", q)
		}
	})

	t.Run("logout", func(t *testing.T) {
		b := newBrowser(t, r)
		form := b.authorize(p, r, "openid")
		q := callback(t, r, b.submitLogin(form, url.Values{"username": {"viewer"}, "password": {"viewer"}}))
		tok := exchange(t, p, r, q.Get("code"))
		lq := url.Values{"id_token_hint": {tok.IDToken}, "post_logout_redirect_uri": {r.origin + "/"}, "state": {testState}}
		pg := b.get(p.IssuerURL + "/oauth2/sessions/logout?" + lq.Encode())
		if got, want := pg.header.Get("Location"), r.origin+"/?state="+testState; got != want {
			t.Errorf("logout: ended at %s (status %d, Location %q), want a redirect to %s:\n%s", pg.url, pg.status, got, want, pg.body)
		}
	})

	t.Run("bad challenge", func(t *testing.T) {
		b := newBrowser(t, r)
		pg := b.get(p.LoginURL + "?login_challenge=bm9wZQ==")
		if pg.status != http.StatusBadRequest || !strings.Contains(pg.body, "no longer valid") {
			t.Errorf("unknown challenge: status %d, want 400 and an error page:\n%s", pg.status, pg.body)
		}
	})
}

func TestStop(t *testing.T) {
	r := newRP(t)
	p := startIdP(t, r)
	pid, dir := p.Pid(), p.Dir
	if pid == 0 {
		t.Fatal("Pid() = 0 after Start")
	}
	p.Stop()
	p.Stop() // idempotent
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("after Stop, kill(%d, 0) = %v, want ESRCH", pid, err)
	}
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("after Stop, kill(-%d, 0) = %v, want ESRCH: the process group lives on", pid, err)
	}
	if _, err := http.Get(p.AppURL + "/logged-out"); err == nil {
		t.Errorf("after Stop, the app at %s still answers", p.AppURL)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Stop, the temporary folder %s: %v, want it removed", dir, err)
	}
}

func TestStartFailure(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "hydra")
	script := "#!/bin/sh\necho 'fake hydra: configuration is broken' >&2\nexit 3\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(dir, "work")
	_, err := Start(context.Background(), Options{HydraBin: fake, Dir: logDir, RedirectURLs: []string{"http://127.0.0.1:1/cb"}})
	if err == nil {
		t.Fatal("Start with a hydra that exits: no error")
	}
	for _, s := range []string{"devidp: ", "exited", "fake hydra: configuration is broken"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Start error lacks %q:\n%v", s, err)
		}
	}
}

func TestStartOptionErrors(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no redirect URL", Options{HydraBin: "/bin/true"}, "RedirectURLs is empty"},
		{"relative redirect URL", Options{HydraBin: "/bin/true", RedirectURLs: []string{"/cb"}}, "not an absolute URL"},
		{"bad users", Options{HydraBin: "/bin/true", RedirectURLs: []string{"http://x/cb"}, Users: []User{{Username: "a"}}}, "must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Start(context.Background(), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Start(%+v) = %v, want an error with %q", tt.opts, err, tt.want)
			}
		})
	}
}

func TestFindHydraMissing(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := findHydra()
	if err == nil || !strings.Contains(err.Error(), "run make cluster-bin") {
		t.Errorf("findHydra() in an empty folder = %v, want an error saying run make cluster-bin", err)
	}
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
