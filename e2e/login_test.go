package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestAdminSeesFleet logs in through the real IdP form as the superadmin
// and sees the seeded fleet read from the real cluster.
func TestAdminSeesFleet(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid=apps-table]`))); err != nil {
		screenshot(t, ctx, "no-table")
		t.Fatalf("apps table not shown: %v", err)
	}
	rows, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSSAll(`[data-testid=app-row]`)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 12 {
		t.Errorf("app rows = %d, want at least 12", len(rows))
	}
	who, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid=user-name]`)))
	if err != nil || strings.TrimSpace(who) == "" {
		t.Errorf("signed-in user name = %q (%v), want it shown", who, err)
	}
	screenshot(t, ctx, "fleet")
}

// TestNonAdminForbidden logs in as a user with no role (guest: neither the
// superadmin group nor a group the demo's roles file binds) and gets the
// 403 page, with no fleet data.
func TestNonAdminForbidden(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "guest")
	login(t, ctx, user, pass)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid=error-page]`))); err != nil {
		screenshot(t, ctx, "no-error-page")
		t.Fatalf("403 page not shown: %v", err)
	}
	code, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`.error-code`)))
	if err != nil || strings.TrimSpace(code) != "403" {
		t.Errorf("error code = %q (%v), want 403", code, err)
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid=app-row]').length`))
	if err != nil || n != 0 {
		t.Errorf("app rows shown to a non-admin = %d (%v), want 0", n, err)
	}
	screenshot(t, ctx, "forbidden")
}

// TestRoutesNeedASession checks, over plain HTTP with no cookie, that pages
// redirect to login, the API answers 401 JSON, and the public routes answer.
func TestRoutesNeedASession(t *testing.T) {
	base := strings.TrimSuffix(demoEnv.state.URL, "/")
	tests := []struct {
		path       string
		wantStatus int
		wantLoc    string
	}{
		{"/", http.StatusFound, "/auth/login?next=%2F"},
		{"/?health=Degraded", http.StatusFound, "/auth/login?next="},
		{"/clusters/devcluster/apps/storefront/web", http.StatusFound, "/auth/login?next="},
		{"/no-such-page", http.StatusFound, "/auth/login?next="},
		{"/v1/deploy/applications", http.StatusUnauthorized, ""},
		{"/v1/deploy/web/tree", http.StatusUnauthorized, ""},
		{"/healthz", http.StatusOK, ""},
		{"/readyz", http.StatusOK, ""},
	}
	client := noRedirect()
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, err := client.Get(base + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("GET %s = %d, want %d", tt.path, resp.StatusCode, tt.wantStatus)
			}
			if loc := resp.Header.Get("Location"); !strings.HasPrefix(loc, tt.wantLoc) {
				t.Errorf("GET %s Location = %q, want prefix %q", tt.path, loc, tt.wantLoc)
			}
			if tt.wantStatus == http.StatusUnauthorized && !strings.Contains(string(body), `"reason":"unauthenticated"`) {
				t.Errorf("GET %s body = %s, want a JSON error with reason unauthenticated", tt.path, body)
			}
		})
	}
}
