package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/scope"
)

// TestFrozenEnvironment: the demo's deployer plans dev; a freeze of dev
// starts (written to the console's freezes ConfigMap, as another replica
// would); the deployer's Apply is refused with the freeze's reason and
// the time it opens; the environment page then shows the freeze's banner
// with its ticket, and its Apply disabled with the reason. At the desktop
// and the phone size. The freeze is removed at the end, so the other
// tests find dev open.
func TestFrozenEnvironment(t *testing.T) {
	cs, err := kubernetes.NewForConfig(demoEnv.restConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	store := freeze.NewStore(cs.CoreV1(), "deploy-web")
	base := strings.TrimSuffix(demoEnv.state.URL, "/")
	for _, size := range screenSizes() {
		t.Run(size.name, func(t *testing.T) {
			ctx := browser(t)
			emulateScreen(t, ctx, size)
			user, pass := demoEnv.user(t, "deployer")
			login(t, ctx, user, pass)
			if err := chromedp.Do(ctx, chromedp.Navigate(base+"/environments/dev"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=plan-button]`))); err != nil {
				screenshot(t, ctx, "no-env")
				t.Fatal(err)
			}
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=plan-button]`))); err != nil {
				t.Fatal(err)
			}
			waitVisible(t, ctx, `[data-testid=run-done]`, 90*time.Second)
			waitVisible(t, ctx, `[data-testid=apply-form] [data-testid=apply-confirm]`, 15*time.Second)

			now := time.Now()
			f, err := store.Add(t.Context(), freeze.Freeze{Scope: scope.Scope{Environments: []string{"dev"}}, Start: now.Add(-time.Minute), End: now.Add(time.Hour),
				Reason: "e2e release week", Ticket: "https://tickets.example.com/CHG-42", Author: freeze.Author{Email: "admin@example.com", Subject: "e2e"}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if _, err := store.Remove(t.Context(), f.ID); err != nil {
					t.Errorf("remove the e2e freeze: %v", err)
				}
			})

			// The Apply drawn before the freeze is refused by it.
			if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`[data-testid=apply-form] [data-testid=apply-confirm]`), "dev"),
				chromedp.Click(chromedp.CSS(`[data-testid=apply-form] [data-testid=apply-button]`))); err != nil {
				t.Fatal(err)
			}
			waitVisible(t, ctx, `[data-testid=run-refused]`, 15*time.Second)
			msg := strings.Join(texts(t, ctx, `[data-testid=run-refused]`), " ")
			opens := f.End.UTC().Format("2006-01-02 15:04") + " UTC"
			if !strings.Contains(msg, "frozen until "+opens) || !strings.Contains(msg, "e2e release week") {
				screenshot(t, ctx, "refusal")
				t.Errorf("refused apply says %q, want the freeze's reason and %s", msg, opens)
			}
			screenshot(t, ctx, "refused")

			// The page (its freezes read at most freeze.SnapshotTTL ago)
			// shows the banner and draws Apply disabled.
			deadline := time.Now().Add(freeze.SnapshotTTL + 10*time.Second)
			for {
				if err := chromedp.Do(ctx, chromedp.Navigate(base+"/environments/dev"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=plan-button]`))); err != nil {
					t.Fatal(err)
				}
				if len(texts(t, ctx, `[data-testid=freeze-banner]`)) == 1 || time.Now().After(deadline) {
					break
				}
				time.Sleep(time.Second)
			}
			banner := strings.Join(texts(t, ctx, `[data-testid=freeze-banner]`), " ")
			if !strings.Contains(banner, "Frozen until "+opens) || !strings.Contains(banner, "e2e release week") || !strings.Contains(banner, "https://tickets.example.com/CHG-42") {
				t.Errorf("dev's banner = %q, want until %s, the reason and the ticket", banner, opens)
			}
			disabled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const b = document.querySelector('[data-testid=apply-button]'); return !!b && b.disabled && b.title.includes('frozen until') })()`))
			if err != nil || !disabled {
				t.Errorf("dev's Apply for the deployer: disabled with the reason = %v (%v), want true", disabled, err)
			}
			screenshot(t, ctx, "banner")
		})
	}
}
