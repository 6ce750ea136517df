package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/scope"
)

// TestFrozenEnvironment: a freeze of dev starts (written to the console's
// freezes ConfigMap, as another replica would); the demo's deployer finds
// dev's page with the freeze's banner (reason, ticket, until when) and no
// Apply to press; an apply sent anyway (as the Apply button sends it) is
// refused in the run area with the freeze's reason and the time it opens.
// The Timeline tab of dev's App staging/api draws the freeze as a band of
// its Freezes lane (titled with its reason and ticket) and lists its
// start; storefront/checkout, in no environment, has no freeze band.
// At the desktop and the phone size. The freeze is removed at the end, so
// the other tests find dev open.
func TestFrozenEnvironment(t *testing.T) {
	cs, err := kubernetes.NewForConfig(demoEnv.restConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := audit.New(cs.CoreV1(), nil, audit.Options{Namespace: "deploy-web"})
	if err != nil {
		t.Fatal(err)
	}
	store := freeze.NewStore(cs.CoreV1(), "deploy-web", keys)
	base := strings.TrimSuffix(demoEnv.state.URL, "/")
	for _, size := range screenSizes() {
		t.Run(size.name, func(t *testing.T) {
			now := time.Now()
			f, err := store.Add(t.Context(), freeze.Freeze{Scope: scope.Scope{Environments: []string{"dev"}}, Start: now.Add(-30 * time.Minute), End: now.Add(time.Hour),
				Reason: "e2e release week", Ticket: "https://tickets.example.com/CHG-42", Author: freeze.Author{Email: "admin@example.com", Subject: "e2e"}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if _, err := store.Remove(ctx, f.ID); err != nil {
					t.Errorf("remove the e2e freeze: %v", err)
				}
			})
			opens := f.End.UTC().Format("2006-01-02 15:04") + " UTC"

			ctx := browser(t)
			emulateScreen(t, ctx, size)
			user, pass := demoEnv.user(t, "deployer")
			login(t, ctx, user, pass)
			// The page's freezes are read at most freeze.SnapshotTTL ago.
			deadline := time.Now().Add(freeze.SnapshotTTL + 10*time.Second)
			for {
				if err := chromedp.Do(ctx, chromedp.Navigate(base+"/environments/dev"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=plan-button]`))); err != nil {
					screenshot(t, ctx, "no-env")
					t.Fatal(err)
				}
				// This subtest's freeze, not the one the previous subtest
				// removed, which a snapshot may still hold.
				if strings.Contains(strings.Join(texts(t, ctx, `[data-testid=freeze-banner]`), " "), "Frozen until "+opens) || time.Now().After(deadline) {
					break
				}
				time.Sleep(time.Second)
			}
			banner := strings.Join(texts(t, ctx, `[data-testid=freeze-banner]`), " ")
			if !strings.Contains(banner, "Frozen until "+opens) || !strings.Contains(banner, "e2e release week") || !strings.Contains(banner, "https://tickets.example.com/CHG-42") {
				screenshot(t, ctx, "no-banner")
				t.Fatalf("dev's banner = %q, want until %s, the reason and the ticket", banner, opens)
			}
			enabled, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid=apply-button]:not([disabled])').length`))
			if err != nil || enabled != 0 {
				t.Errorf("dev offers %d enabled Apply buttons to the deployer in a freeze (%v), want none", enabled, err)
			}
			screenshot(t, ctx, "banner")

			// An apply sent anyway, as the Apply form sends it.
			if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](
				`htmx.ajax('POST', '/environments/dev/apply', {source: document.body, target: '#run-area', swap: 'innerHTML', values: {confirm: 'dev', plan: 'latest'}})`)); err != nil {
				t.Fatal(err)
			}
			waitVisible(t, ctx, `[data-testid=run-refused]`, 15*time.Second)
			msg := strings.Join(texts(t, ctx, `[data-testid=run-refused]`), " ")
			if !strings.Contains(msg, "frozen until "+opens) || !strings.Contains(msg, "e2e release week") {
				t.Errorf("refused apply says %q, want the freeze's reason and %s", msg, opens)
			}
			screenshot(t, ctx, "refused")

			// The freeze on the timeline of an App of dev, and not on one
			// of no environment.
			freezeBands := func(app string) []string {
				t.Helper()
				if err := chromedp.Do(ctx, chromedp.Navigate(base+"/clusters/devcluster/apps/"+app+"/timeline?range=1h"),
					chromedp.WaitVisible(chromedp.CSS(`[data-testid=timeline-chart]`))); err != nil {
					screenshot(t, ctx, "no-timeline")
					t.Fatal(err)
				}
				return texts(t, ctx, `[data-testid=tl-band][data-class=tl-freeze]`)
			}
			bands := strings.Join(freezeBands("staging/api"), " ")
			if !strings.Contains(bands, "e2e release week") || !strings.Contains(bands, "https://tickets.example.com/CHG-42") {
				screenshot(t, ctx, "no-freeze-band")
				t.Errorf("staging/api's freeze bands = %q, want one with the reason and the ticket", bands)
			}
			rows := strings.Join(texts(t, ctx, `[data-testid=timeline-row][data-kind=freeze]`), " ")
			if !strings.Contains(rows, "start") || !strings.Contains(rows, "e2e release week") {
				t.Errorf("staging/api's freeze rows = %q, want the freeze's start", rows)
			}
			screenshot(t, ctx, "timeline-band")
			if other := freezeBands("storefront/checkout"); len(other) != 0 {
				t.Errorf("storefront/checkout (no environment) has freeze bands %q, want none", other)
			}
		})
	}
}

// TestFreezesPage: the admin's /freezes lists the demo's nightly freeze
// of prod (active or upcoming by the time of day) with its ticket, and the
// form that creates one. At the desktop and the phone size.
func TestFreezesPage(t *testing.T) {
	for _, size := range screenSizes() {
		t.Run(size.name, func(t *testing.T) {
			ctx := browser(t)
			emulateScreen(t, ctx, size)
			user, pass := demoEnv.user(t, "admin")
			login(t, ctx, user, pass)
			if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=nav-freezes]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=freeze-form]`))); err != nil {
				screenshot(t, ctx, "no-freezes")
				t.Fatal(err)
			}
			rows := strings.Join(texts(t, ctx, `[data-testid=freeze-row]`), " ")
			if !strings.Contains(rows, "env=prod") || !strings.Contains(rows, "nightly change freeze") || !strings.Contains(rows, "FREQ=DAILY;BYHOUR=22") {
				t.Errorf("/freezes rows = %q, want the demo's nightly freeze of prod", rows)
			}
			screenshot(t, ctx, "freezes")
		})
	}
}
