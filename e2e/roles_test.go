package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestRolesDrawOnlyAllowedButtons signs in as the demo's viewer and
// deployer (their roles come from the roles file the demo passes to
// --roles) and opens an App the deployer's scope covers: the viewer sees
// the fleet and the App but not one button (no data-action) and no logs
// link; the deployer sees sync, rollback and logs. At the desktop and the
// phone size.
func TestRolesDrawOnlyAllowedButtons(t *testing.T) {
	app := strings.TrimSuffix(demoEnv.state.URL, "/") + "/clusters/devcluster/apps/storefront/web"
	for _, size := range screenSizes() {
		for _, tt := range []struct {
			user string
			want []string // the data-action buttons drawn
		}{
			{"viewer", nil},
			{"deployer", []string{"logs", "notify", "rollback", "sync"}}, // notify: a deployer edits subscriptions in its scope (docs/notifications.md)
		} {
			t.Run(size.name+"/"+tt.user, func(t *testing.T) {
				ctx := browser(t)
				emulateScreen(t, ctx, size)
				user, pass := demoEnv.user(t, tt.user)
				login(t, ctx, user, pass)
				if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid=app-row]`))); err != nil {
					screenshot(t, ctx, tt.user+"-no-fleet")
					t.Fatalf("%s: fleet rows not shown: %v", tt.user, err)
				}
				if err := chromedp.Do(ctx, chromedp.Navigate(app), chromedp.WaitVisible(chromedp.CSS(`[data-testid=app-header]`))); err != nil {
					screenshot(t, ctx, tt.user+"-no-app")
					t.Fatalf("%s: app page not shown: %v", tt.user, err)
				}
				got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
					`[...new Set([...document.querySelectorAll('[data-action]')].map(e => e.dataset.action))].sort()`))
				if err != nil {
					t.Fatal(err)
				}
				if strings.Join(got, ",") != strings.Join(tt.want, ",") {
					t.Errorf("%s at %s: buttons %q, want %q", tt.user, size.name, got, tt.want)
				}
				screenshot(t, ctx, size.name+"-"+tt.user)
			})
		}
	}
}

// TestMePage: the user name in the header opens /me, which lists the
// demo deployer's two scoped deployer bindings and their group.
func TestMePage(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "deployer")
	login(t, ctx, user, pass)
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`a[data-testid=user-name]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=me-roles]`)),
	); err != nil {
		screenshot(t, ctx, "no-me")
		t.Fatalf("/me from the header: %v", err)
	}
	roles, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid=me-role]')].map(e => e.dataset.role)`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(roles, ",") != "deployer,deployer" {
		t.Errorf("/me roles = %q, want two deployer bindings", roles)
	}
	groups, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid=me-groups]`)))
	if err != nil || !strings.Contains(groups, "deployers") {
		t.Errorf("/me groups = %q (%v), want deployers", groups, err)
	}
	screenshot(t, ctx, "me")
}
