package e2e

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/appcr"
)

// TestRollbackInBrowser rolls ledger back from 2.4.1 to 2.4.0 with the
// History panel's button and its confirmation, then watches the header
// reach Synced on 2.4.0; the audit Event names the user.
func TestRollbackInBrowser(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	base := strings.TrimSuffix(demoEnv.state.URL, "/")
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/clusters/devcluster/apps/payments/ledger"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=history]`)),
	); err != nil {
		t.Fatal(err)
	}
	// Non-semver and declared entries are disabled; 2.4.0 is offered.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid=history-row][data-version="2.4.0"] [data-testid=rollback-button]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=confirm-rollback]`)),
	); err != nil {
		screenshot(t, ctx, "no-confirm")
		t.Fatal(err)
	}
	confirm := texts(t, ctx, `[data-testid=confirm-rollback]`)
	if len(confirm) != 1 || !strings.Contains(confirm[0], "2.4.1") || !strings.Contains(confirm[0], "2.4.0") {
		t.Errorf("confirmation = %q, want it to name 2.4.1 -> 2.4.0", confirm)
	}
	screenshot(t, ctx, "confirm")
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid=confirm-rollback-button]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=action-success]`)),
	); err != nil {
		screenshot(t, ctx, "no-result")
		t.Fatal(err)
	}
	waitText(t, ctx, `[data-testid=app-header] [data-testid=declared]`, func(s string) bool { return s == "2.4.0" }, 30*time.Second)
	waitText(t, ctx, `[data-testid=app-header] [data-testid=sync]`, func(s string) bool { return s == "Synced" }, 60*time.Second)
	waitText(t, ctx, `[data-testid=app-header] [data-testid=running]`, func(s string) bool { return s == "2.4.0 (2)" }, 60*time.Second)
	screenshot(t, ctx, "synced")

	cs := kubernetes.NewForConfigOrDie(demoEnv.restConfig(t))
	evs, err := cs.CoreV1().Events("payments").List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=ledger,reason=RollbackRequested"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs.Items {
		if strings.Contains(e.Message, "admin@demo.local (sub admin)") && strings.Contains(e.Message, "2.4.1 to 2.4.0") {
			found = true
		}
	}
	if !found {
		t.Errorf("no RollbackRequested event naming admin@demo.local (sub admin) and 2.4.1 to 2.4.0 in %v", evs.Items)
	}
}

// TestWritesRefused sends writes that must be refused through the real
// binary and checks the App was not touched: no CSRF token, a cross-origin
// request, a GET to a POST route, a non-admin, and a bad version.
func TestWritesRefused(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(demoEnv.restConfig(t))
	apps := dyn.Resource(appcr.Resource).Namespace("payments")
	rv := func() string {
		u, err := apps.Get(context.Background(), "billing", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return u.GetResourceVersion()
	}
	before := rv()
	base := strings.TrimSuffix(demoEnv.state.URL, "/")
	admin := sessionClient(t, "admin")
	viewer := sessionClient(t, "viewer")
	csrf := admin.csrf(t, base+"/clusters/devcluster/apps/payments/billing")

	tests := []struct {
		name       string
		client     *sessionHTTP
		method     string
		path       string
		header     map[string]string
		form       url.Values
		wantStatus int
	}{
		{"no csrf token", admin, "POST", "/clusters/devcluster/apps/payments/billing/rollback", nil, url.Values{"version": {"4.1.0"}}, http.StatusForbidden},
		{"wrong csrf token", admin, "POST", "/clusters/devcluster/apps/payments/billing/rollback", nil, url.Values{"version": {"4.1.0"}, "csrf_token": {"x" + csrf}}, http.StatusForbidden},
		{"cross-origin", admin, "POST", "/clusters/devcluster/apps/payments/billing/rollback", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, url.Values{"version": {"4.1.0"}, "csrf_token": {csrf}}, http.StatusForbidden},
		{"GET to a POST route", admin, "GET", "/v1/deploy/billing/rollback", nil, nil, http.StatusMethodNotAllowed},
		{"non-admin", viewer, "POST", "/v1/deploy/billing/sync?cluster=devcluster", nil, url.Values{"csrf_token": {csrf}}, http.StatusForbidden},
		{"non-semver", admin, "POST", "/v1/deploy/billing/rollback?cluster=devcluster&namespace=payments", nil, url.Values{"version": {"latest"}, "csrf_token": {csrf}}, http.StatusBadRequest},
		{"pre-release", admin, "POST", "/v1/deploy/billing/rollback?cluster=devcluster", nil, url.Values{"version": {"1.2.3-rc1"}, "csrf_token": {csrf}}, http.StatusBadRequest},
		{"not in history", admin, "POST", "/v1/deploy/billing/rollback?cluster=devcluster", nil, url.Values{"version": {"9.9.9"}, "csrf_token": {csrf}}, http.StatusBadRequest},
		{"unknown app", admin, "POST", "/v1/deploy/nope/rollback?cluster=devcluster", nil, url.Values{"version": {"4.1.0"}, "csrf_token": {csrf}}, http.StatusNotFound},
		// With several clusters a write names its cluster, even for an App
		// only one cluster has.
		{"no cluster", admin, "POST", "/v1/deploy/billing/rollback", nil, url.Values{"version": {"4.1.0"}, "csrf_token": {csrf}}, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.form != nil {
				body = strings.NewReader(tt.form.Encode())
			}
			req, _ := http.NewRequest(tt.method, base+tt.path, body)
			if tt.form != nil {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := tt.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("%s %s = %d %s, want %d", tt.method, tt.path, resp.StatusCode, b, tt.wantStatus)
			}
		})
	}
	if after := rv(); after != before {
		t.Errorf("refused writes changed App billing: resourceVersion %s -> %s", before, after)
	}
}

// sessionHTTP is an HTTP client carrying a browser session's cookies.
type sessionHTTP struct{ *http.Client }

// sessionClient logs in through the IdP form in Chromium and returns an
// HTTP client with the session cookie.
func sessionClient(t *testing.T, user string) *sessionHTTP {
	t.Helper()
	ctx := browser(t)
	u, p := demoEnv.user(t, user)
	login(t, ctx, u, p)
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{demoEnv.state.URL}})
	if err != nil {
		t.Fatal(err)
	}
	jar := &staticJar{}
	for _, c := range res.Cookies {
		jar.cookies = append(jar.cookies, &http.Cookie{Name: c.Name, Value: c.Value})
	}
	return &sessionHTTP{&http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type staticJar struct{ cookies []*http.Cookie }

func (j *staticJar) SetCookies(*url.URL, []*http.Cookie) {}
func (j *staticJar) Cookies(*url.URL) []*http.Cookie     { return j.cookies }

// csrf reads the session's CSRF token from a page's logout form.
func (s *sessionHTTP) csrf(t *testing.T, page string) string {
	t.Helper()
	resp, err := s.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	const marker = `name="csrf_token" value="`
	i := strings.Index(string(b), marker)
	if i < 0 {
		t.Fatalf("no csrf token on %s (%d)", page, resp.StatusCode)
	}
	rest := string(b)[i+len(marker):]
	return rest[:strings.Index(rest, `"`)]
}
