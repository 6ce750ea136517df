package e2e

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/web/paths"
)

// TestOperateInBrowser restarts payouts' Deployment from the resource
// panel: the panel offers the actions of its kind, a click opens the
// confirmation in place (no full reload), the confirm button restarts
// it (the pod template's restartedAt is set) and shows the result line;
// on a phone the scale confirmation fits. A post without the CSRF token
// is refused with nothing changed.
func TestOperateInBrowser(t *testing.T) {
	const ref = "apps:Deployment:payments:payouts"
	base := strings.TrimSuffix(demoEnv.state.URL, "/")
	panelURL := base + paths.AppResource("devcluster", "payments", "payouts", ref)
	cs := kubernetes.NewForConfigOrDie(demoEnv.restConfig(t))
	restartedAt := func() string {
		d, err := cs.AppsV1().Deployments("payments").Get(context.Background(), "payouts", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d.Spec.Template.Annotations[appcr.RestartedAtAnnotation]
	}

	// Without the CSRF token: refused, nothing changed.
	admin := sessionClient(t, "admin")
	req, _ := http.NewRequest("POST", base+paths.AppResourceAction("devcluster", "payments", "payouts", ref, "restart"), strings.NewReader(url.Values{"reason": {"x"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := admin.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || restartedAt() != "" {
		t.Fatalf("restart without a CSRF token = %d %s, restartedAt %q; want 403 and nothing changed", resp.StatusCode, b, restartedAt())
	}

	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	for _, size := range screenSizes() {
		emulateScreen(t, ctx, size)
		if err := chromedp.Do(ctx,
			chromedp.Navigate(panelURL),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid=panel-operations]`)),
		); err != nil {
			screenshot(t, ctx, "no-actions-"+size.name)
			t.Fatal(err)
		}
		if got := texts(t, ctx, `[data-testid=panel-operations] button`); len(got) != 2 || got[0] != "Restart" || got[1] != "Scale" {
			t.Errorf("%s: actions = %q, want Restart and Scale", size.name, got)
		}
		// A marker that a full reload would drop.
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.__noReload = 1`)); err != nil {
			t.Fatal(err)
		}
		op := "restart"
		if size.phone {
			op = "scale"
		}
		if err := chromedp.Do(ctx,
			chromedp.Click(chromedp.CSS(`[data-testid=operation-`+op+`]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid=confirm-operation][data-action=`+op+`]`)),
		); err != nil {
			screenshot(t, ctx, "no-confirm-"+size.name)
			t.Fatal(err)
		}
		screenshot(t, ctx, op+"-confirm-"+size.name)
		if size.phone {
			// The confirmation fits the phone: no horizontal scroll.
			overflow, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
			if err != nil {
				t.Fatal(err)
			}
			if overflow {
				t.Errorf("phone: the scale confirmation scrolls sideways")
			}
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=cancel-operation]`))); err != nil {
				t.Fatal(err)
			}
			waitGone(t, ctx, `[data-testid=confirm-operation]`, 10*time.Second)
			continue
		}
		if err := chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.CSS(`[data-testid=operation-reason]`), "stuck consumers"),
			chromedp.Click(chromedp.CSS(`[data-testid=confirm-operation-button]`)),
			chromedp.WaitVisible(chromedp.CSS(`[data-testid=operation-success]`)),
		); err != nil {
			screenshot(t, ctx, "no-result")
			t.Fatal(err)
		}
		if marker, err := chromedp.Run(ctx, chromedp.Evaluate[int](`window.__noReload || 0`)); err != nil || marker != 1 {
			t.Errorf("the page reloaded for the action (marker %d, %v), want an in-place swap", marker, err)
		}
		line := texts(t, ctx, `[data-testid=operation-result]`)
		if len(line) != 1 || !strings.Contains(line[0], "restart of Deployment payouts") {
			t.Errorf("result line = %q, want the restart of Deployment payouts", line)
		}
		screenshot(t, ctx, "restart-done-"+size.name)
		if at := restartedAt(); at == "" {
			t.Errorf("after the restart the template's %s is empty", appcr.RestartedAtAnnotation)
		}
	}
}
