// Package devidp runs the demo's identity provider: Ory Hydra v2.3.0, a real
// OpenID Connect provider, on loopback with in-memory storage, together with
// the small login and consent app Hydra needs (Hydra has no login page of its
// own). The app signs in a list of demo users and puts their groups, email
// and name into the ID token; Hydra's token hook asks it again at every
// refresh, so a user whose groups change (IdP.SetGroups) or who is disabled
// (IdP.Disable) shows at the relying party's next refresh.
//
// deploy-web treats it as any other OIDC provider: Start returns the issuer
// URL and a registered client, and the browser (or a test's HTTP client)
// goes through the ordinary authorization-code flow.
package devidp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hanzoai/deploy-web/internal/proc"
)

// User is a demo login.
type User struct {
	Username string
	Password string
	Email    string
	Name     string
	Groups   []string
	// Disabled users cannot sign in, and their refresh tokens are refused
	// (see IdP.Disable).
	Disabled bool
}

// DefaultUsers returns the demo logins, each named after its password: admin
// in group superadmin, viewer in viewers, deployer in deployers, approver in
// approvers (the groups the demo's roles file binds) and guest in guests, a
// group no role names. The demo prints them.
func DefaultUsers() []User {
	return []User{
		{Username: "admin", Password: "admin", Email: "admin@demo.local", Name: "Demo Admin", Groups: []string{"superadmin"}},
		{Username: "viewer", Password: "viewer", Email: "viewer@demo.local", Name: "Demo Viewer", Groups: []string{"viewers"}},
		{Username: "deployer", Password: "deployer", Email: "deployer@demo.local", Name: "Demo Deployer", Groups: []string{"deployers"}},
		{Username: "approver", Password: "approver", Email: "approver@demo.local", Name: "Demo Approver", Groups: []string{"approvers"}},
		{Username: "guest", Password: "guest", Email: "guest@demo.local", Name: "Demo Guest", Groups: []string{"guests"}},
	}
}

// Options configures Start. Only RedirectURLs is required.
type Options struct {
	// HydraBin is the path of the hydra binary. When empty, Start looks for
	// bin/hydra-v2.3.0/hydra in the working directory and its parents, up to
	// the folder holding go.mod.
	HydraBin string
	// Dir is the working folder, where the logs go (hydra.log, app.log).
	// When empty, Start uses a temporary folder that Stop removes.
	Dir string
	// Users are the logins the app accepts; DefaultUsers() when nil.
	Users []User
	// ClientID and ClientSecret are the OIDC client Start registers;
	// "deploy-web" and a random secret when empty.
	ClientID, ClientSecret string
	// RedirectURLs are deploy-web's callback URLs.
	RedirectURLs []string
	// PostLogoutRedirectURLs are where deploy-web may send browsers after
	// RP-initiated logout; when nil, the origin of each redirect URL with
	// path "/".
	PostLogoutRedirectURLs []string
	// PublicPort, AdminPort and AppPort are the loopback ports of Hydra's
	// public API, Hydra's admin API and the login app; 0 picks a free port.
	PublicPort, AdminPort, AppPort int
	// Logger receives the app's server errors; by default they go to
	// Dir/app.log.
	Logger *slog.Logger
}

// IdP is a running identity provider. Stop it when done.
type IdP struct {
	// IssuerURL is the OIDC issuer, exactly as in the discovery document
	// (IssuerURL + "/.well-known/openid-configuration").
	IssuerURL string
	// ClientID and ClientSecret are the registered client's credentials
	// (token endpoint auth method client_secret_basic).
	ClientID, ClientSecret string
	// LoginURL is the app's sign-in page, where Hydra sends browsers.
	LoginURL string
	// AppURL is the base URL of the login and consent app.
	AppURL string
	// AdminURL is the base URL of Hydra's admin API.
	AdminURL string
	// Dir is the working folder and LogPath Hydra's log file in it.
	Dir, LogPath string
	// Users are the logins at start; IdP.SetGroups and IdP.Disable change
	// the app's directory, not this list.
	Users []User

	dir      *directory
	hydra    *proc.Process
	srv      *http.Server
	appLog   *os.File
	hookURL  string // the app's token hook, which Hydra calls
	tmpDir   string // removed by Stop
	stopOnce sync.Once
}

// HydraVersion is the Hydra release pinned in tools/hydra/go.mod; the binary
// lives in bin/hydra-<version>/.
const HydraVersion = "v2.3.0"

const (
	hydraRel     = "bin/hydra-" + HydraVersion + "/hydra"
	startTimeout = 90 * time.Second
	stopGrace    = 5 * time.Second
	clientScope  = "openid profile email groups offline_access"
)

// Start starts the login and consent app in-process and `hydra serve all
// --dev` as a child process, waits until both of Hydra's APIs are ready, and
// registers the OIDC client. ctx bounds the start-up only; the IdP runs until
// Stop. On failure Start stops what it started, keeps the working folder,
// and returns an error that ends with the tail of Hydra's log.
func Start(ctx context.Context, opts Options) (_ *IdP, err error) {
	bin := opts.HydraBin
	if bin == "" {
		if bin, err = findHydra(); err != nil {
			return nil, err
		}
	}
	users := opts.Users
	if users == nil {
		users = DefaultUsers()
	}
	if err := checkUsers(users); err != nil {
		return nil, err
	}
	if len(opts.RedirectURLs) == 0 {
		return nil, errors.New("devidp: Options.RedirectURLs is empty: give deploy-web's callback URL")
	}
	postLogout := opts.PostLogoutRedirectURLs
	for _, s := range opts.RedirectURLs {
		u, err := url.Parse(s)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("devidp: redirect URL %q is not an absolute URL", s)
		}
		if opts.PostLogoutRedirectURLs == nil {
			postLogout = appendUnique(postLogout, u.Scheme+"://"+u.Host+"/")
		}
	}

	p := &IdP{ClientID: opts.ClientID, ClientSecret: opts.ClientSecret, Users: users, Dir: opts.Dir}
	if p.ClientID == "" {
		p.ClientID = "deploy-web"
	}
	if p.ClientSecret == "" {
		p.ClientSecret = randomHex(24)
	}
	defer func() {
		if err != nil {
			p.tmpDir = "" // keep the logs the error points to
			p.Stop()
		}
	}()
	if p.Dir == "" {
		if p.Dir, err = os.MkdirTemp("", "devidp-"); err != nil {
			return nil, fmt.Errorf("devidp: %w", err)
		}
		p.tmpDir = p.Dir
	} else if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("devidp: %w", err)
	}

	log := opts.Logger
	if log == nil {
		p.appLog, err = os.OpenFile(filepath.Join(p.Dir, "app.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("devidp: open app log: %w", err)
		}
		log = slog.New(slog.NewTextHandler(p.appLog, nil))
	}

	// The app first: Hydra's configuration names its URLs.
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.AppPort)))
	if err != nil {
		return nil, fmt.Errorf("devidp: app listen: %w", err)
	}
	p.AppURL = "http://" + ln.Addr().String()
	p.LoginURL = p.AppURL + "/login"
	adminClient := &hydraAdmin{client: &http.Client{Timeout: 10 * time.Second}}
	p.dir = newDirectory(users)
	hookPath := "/token-hook/" + randomHex(16)
	p.hookURL = p.AppURL + hookPath
	p.srv = &http.Server{
		Handler:           newApp(log, adminClient, p.dir, hookPath),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelError),
	}
	go func() { _ = p.srv.Serve(ln) }()

	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()

	// Hydra binds ports picked a moment earlier; when those were picked
	// here and another process took one meanwhile, try again with new ones.
	attempts := 1
	if opts.PublicPort == 0 || opts.AdminPort == 0 {
		attempts = 3
	}
	for i := 0; ; i++ {
		err = p.startHydra(ctx, bin, opts.PublicPort, opts.AdminPort, adminClient)
		if err == nil || i+1 >= attempts || !strings.Contains(proc.TailFile(p.LogPath, 4000), "address already in use") {
			break
		}
		p.hydra.Stop(stopGrace)
		p.hydra = nil
		_ = os.Rename(p.LogPath, p.LogPath+"."+strconv.Itoa(i))
	}
	if err != nil {
		return nil, p.withLog(err)
	}
	if err := p.registerClient(ctx, opts.RedirectURLs, postLogout); err != nil {
		return nil, p.withLog(err)
	}
	return p, nil
}

// startHydra starts Hydra and waits until it is ready.
func (p *IdP) startHydra(ctx context.Context, bin string, pub, adm int, admin *hydraAdmin) error {
	if pub == 0 || adm == 0 {
		ports, err := proc.FreePorts(2)
		if err != nil {
			return fmt.Errorf("devidp: %w", err)
		}
		if pub == 0 {
			pub = ports[0]
		}
		if adm == 0 {
			adm = ports[1]
		}
	}
	issuer := "http://127.0.0.1:" + strconv.Itoa(pub)
	p.AdminURL = "http://127.0.0.1:" + strconv.Itoa(adm)
	admin.base = p.AdminURL
	env := []string{
		"DSN=memory",
		"SECRETS_SYSTEM=" + randomHex(32),
		"URLS_SELF_ISSUER=" + issuer,
		"URLS_LOGIN=" + p.AppURL + "/login",
		"URLS_CONSENT=" + p.AppURL + "/consent",
		"URLS_LOGOUT=" + p.AppURL + "/logout",
		"URLS_POST_LOGOUT_REDIRECT=" + p.AppURL + "/logged-out",
		"SERVE_PUBLIC_HOST=127.0.0.1",
		"SERVE_PUBLIC_PORT=" + strconv.Itoa(pub),
		"SERVE_ADMIN_HOST=127.0.0.1",
		"SERVE_ADMIN_PORT=" + strconv.Itoa(adm),
		// Browsers drop SameSite=None cookies that are not Secure, and
		// --dev serves plain HTTP; everything is on 127.0.0.1, so Lax works.
		"SERVE_COOKIES_SAME_SITE_MODE=Lax",
		"SQA_OPT_OUT=true",
		"OAUTH2_EXPOSE_INTERNAL_ERRORS=true",
	}
	// Every token request (refreshes included) asks the app for the user's
	// current claims, so a changed or disabled user shows at the next
	// refresh. (A file: Hydra's environment cannot set this oneOf key.)
	cfgPath := filepath.Join(p.Dir, "hydra.yml")
	hookCfg := "oauth2:\n  token_hook: " + strconv.Quote(p.hookURL) + "\n"
	if err := os.WriteFile(cfgPath, []byte(hookCfg), 0o600); err != nil {
		return fmt.Errorf("devidp: write hydra config: %w", err)
	}
	h, err := proc.Start(proc.Spec{
		Name: "hydra",
		Path: bin,
		Args: []string{"serve", "all", "--dev", "--sqa-opt-out", "-c", cfgPath},
		Env:  env,
		Dir:  p.Dir,
	})
	if err != nil {
		return fmt.Errorf("devidp: %w", err)
	}
	p.hydra = h
	p.LogPath = h.LogPath

	// Stop waiting as soon as Hydra exits.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-h.Done():
			cancel()
		case <-wctx.Done():
		}
	}()
	// The first discovery request makes Hydra generate its signing keys,
	// which on a loaded machine takes longer than a couple of seconds; a
	// client that gives up sooner cancels the generation, and every retry
	// starts it over. ctx (startTimeout) still bounds the whole wait.
	client := &http.Client{Timeout: 60 * time.Second}
	var disc struct {
		Issuer string `json:"issuer"`
	}
	err = proc.WaitHTTP(wctx, client, issuer+"/.well-known/openid-configuration", nil, func(r *http.Response) bool {
		return r.StatusCode == http.StatusOK && decodeJSON(r.Body, &disc) == nil && disc.Issuer != ""
	})
	if err == nil {
		err = proc.WaitHTTP(wctx, client, p.AdminURL+"/health/ready", nil, nil)
	}
	if err != nil {
		if exited, werr := h.Exited(); exited {
			return fmt.Errorf("devidp: hydra exited (%v) before it was ready", werr)
		}
		return fmt.Errorf("devidp: hydra not ready: %w", err)
	}
	if strings.TrimSuffix(disc.Issuer, "/") != issuer {
		return fmt.Errorf("devidp: hydra's discovery document names issuer %q, want %q", disc.Issuer, issuer)
	}
	p.IssuerURL = disc.Issuer
	return nil
}

// registerClient registers the OIDC client through Hydra's admin API.
func (p *IdP) registerClient(ctx context.Context, redirects, postLogout []string) error {
	body := map[string]any{
		"client_id":                  p.ClientID,
		"client_secret":              p.ClientSecret,
		"client_name":                "deploy-web",
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"scope":                      clientScope,
		"redirect_uris":              redirects,
		"post_logout_redirect_uris":  postLogout,
		"token_endpoint_auth_method": "client_secret_basic",
	}
	status, raw, err := postJSON(ctx, p.AdminURL+"/admin/clients", body)
	if err != nil {
		return fmt.Errorf("devidp: register client: %w", err)
	}
	if status != http.StatusCreated {
		return fmt.Errorf("devidp: register client: status %d: %s", status, strings.TrimSpace(string(raw)))
	}
	return nil
}

// withLog appends the tail of Hydra's log to err.
func (p *IdP) withLog(err error) error {
	if p.LogPath == "" {
		return err
	}
	tail := strings.TrimSpace(proc.TailFile(p.LogPath, 3000))
	if tail == "" {
		tail = "(empty)"
	}
	return fmt.Errorf("%w\nhydra log %s, last lines:\n%s", err, p.LogPath, tail)
}

// Pid returns the process id of Hydra (also its process group id), or 0
// when Hydra was not started.
func (p *IdP) Pid() int {
	if p.hydra == nil {
		return 0
	}
	return p.hydra.Pid()
}

// Stop stops Hydra (its whole process group) and the app's server, and
// removes the temporary working folder if Start made one. It is safe to call
// more than once.
func (p *IdP) Stop() {
	p.stopOnce.Do(func() {
		if p.hydra != nil {
			p.hydra.Stop(stopGrace)
		}
		if p.srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			if p.srv.Shutdown(ctx) != nil {
				_ = p.srv.Close()
			}
			cancel()
		}
		if p.appLog != nil {
			_ = p.appLog.Close()
		}
		if p.tmpDir != "" {
			_ = os.RemoveAll(p.tmpDir)
		}
	})
}

// findHydra looks for bin/hydra-v2.3.0/hydra in the working directory and
// its parents, up to the folder holding go.mod.
func findHydra() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("devidp: find hydra: %w", err)
	}
	for dir := wd; ; {
		cand := filepath.Join(dir, hydraRel)
		if fi, err := os.Stat(cand); err == nil && fi.Mode().IsRegular() {
			return cand, nil
		}
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", fmt.Errorf("devidp: hydra binary not found: no %s in %s or its parents up to the module root; run make cluster-bin", hydraRel, wd)
}

// checkUsers rejects users the app could not sign in or tell apart.
func checkUsers(users []User) error {
	if len(users) == 0 {
		return errors.New("devidp: no users")
	}
	seen := map[string]bool{}
	for _, u := range users {
		if u.Username == "" || u.Password == "" {
			return fmt.Errorf("devidp: user %q: username and password must not be empty", u.Username)
		}
		if u.Username != strings.TrimSpace(u.Username) {
			return fmt.Errorf("devidp: user %q: username has surrounding spaces", u.Username)
		}
		if seen[u.Username] {
			return fmt.Errorf("devidp: user %q listed twice", u.Username)
		}
		seen[u.Username] = true
	}
	return nil
}

func appendUnique(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// randomHex returns n random bytes, hex encoded.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

func decodeJSON(r io.Reader, v any) error {
	return json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(v)
}

// postJSON posts body as JSON and returns the answer's status and body.
func postJSON(ctx context.Context, u string, body any) (int, []byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, raw, err
}
