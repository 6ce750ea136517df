// Package serveproc runs `deploy-web serve` as its own process for tests
// and benchmarks (the built binary, a real IdP), and signs in to it as a
// browser would.
package serveproc

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/internal/proc"
)

// Spec is one serve process: its name (the log file's), the binary, the
// working folder, the site's loopback address (host:port) and, behind a
// proxy, the public base URL (its OIDC callback; default http://Addr),
// the cluster (Kubeconfig and Namespaces, or a clusters file), the IdP
// and the files serve reads, and any further flags. Empty flags are left
// out; MetricsAddr empty turns /metrics off.
type Spec struct {
	Name, Bin, Dir, Addr, Public  string
	Kubeconfig, Namespaces        string
	Issuer, ClientID              string
	SecretFile, KeyFile           string
	MetricsAddr, HistoryNamespace string
	Extra                         []string
}

// Args are the serve flags of s.
func (s Spec) Args() []string {
	public := s.Public
	if public == "" {
		public = "http://" + s.Addr
	}
	args := []string{
		"serve",
		"--addr", s.Addr,
		"--oidc-issuer", s.Issuer,
		"--oidc-client-id", s.ClientID,
		"--oidc-client-secret-file", s.SecretFile,
		"--oidc-redirect-url", public + auth.CallbackPath,
		"--session-key-file", s.KeyFile,
		"--insecure-cookies",
		"--metrics-addr", s.MetricsAddr,
		"--log-format", "json",
		"--history-namespace", s.HistoryNamespace,
	}
	if s.Kubeconfig != "" {
		args = append(args, "--kubeconfig", s.Kubeconfig)
	}
	if s.Namespaces != "" {
		args = append(args, "--namespaces", s.Namespaces)
	}
	return append(args, s.Extra...)
}

// Start starts s's process (its log: Dir/Name.log).
func Start(s Spec) (*proc.Process, error) {
	return proc.Start(proc.Spec{Name: s.Name, Path: s.Bin, Dir: s.Dir, Args: s.Args()})
}

// maxPage bounds a page read while signing in.
const maxPage = 1 << 20

var challengeRE = regexp.MustCompile(`name="login_challenge" value="([^"]*)"`)

// SignIn runs the OIDC login as a browser would (the dashboard's login,
// the IdP, its login form, consent, the callback) and returns a client
// that carries the session cookie, with a 30 s timeout per request.
func SignIn(ctx context.Context, base, user, pass string) (*http.Client, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	client := &http.Client{Jar: jar, Timeout: 60 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+auth.LoginPath, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxPage))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	m := challengeRE.FindStringSubmatch(string(b))
	if m == nil {
		return nil, fmt.Errorf("sign in: no login form at %s (status %d)", resp.Request.URL, resp.StatusCode)
	}
	form := url.Values{"login_challenge": {html.UnescapeString(m[1])}, "username": {user}, "password": {pass}}
	action := resp.Request.URL.ResolveReference(&url.URL{Path: "/login"})
	req, err = http.NewRequestWithContext(ctx, http.MethodPost, action.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("sign in: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxPage))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Request.URL.String(), base+"/") {
		return nil, fmt.Errorf("sign in: ended at %s with status %d, want the dashboard", resp.Request.URL, resp.StatusCode)
	}
	client.Timeout = 30 * time.Second
	return client, nil
}

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// CSRF reads the session's CSRF token from a page of the dashboard that
// has a form (an environment's page).
func CSRF(ctx context.Context, client *http.Client, pageURL string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pageURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxPage))
	if err != nil {
		return "", err
	}
	m := csrfRE.FindSubmatch(b)
	if resp.StatusCode != http.StatusOK || m == nil {
		return "", fmt.Errorf("no CSRF token on %s (status %d)", pageURL, resp.StatusCode)
	}
	return html.UnescapeString(string(m[1])), nil
}
