package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// TestDriftInBrowser adds an environment variable to payments/gateway's
// Deployment by hand (as `kubectl set env` does) and checks that the fleet's
// Drift chip filters to it, the app header says an object was changed by
// hand, the tree marks the Deployment, and its panel lists the field with
// the manager that set it.
func TestDriftInBrowser(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(demoEnv.restConfig(t))
	ctx0 := context.Background()
	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"gateway","env":[{"name":"EXTRA_FLAG","value":"1"}]}]}}}}`
	if _, err := cs.AppsV1().Deployments("payments").Patch(ctx0, "gateway", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-set"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		undo := `{"spec":{"template":{"spec":{"containers":[{"name":"gateway","env":[{"name":"EXTRA_FLAG","$patch":"delete"}]}]}}}}`
		_, _ = cs.AppsV1().Deployments("payments").Patch(ctx0, "gateway", types.StrategicMergePatchType, []byte(undo), metav1.PatchOptions{FieldManager: "kubectl-set"})
	})

	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	base := strings.TrimSuffix(demoEnv.state.URL, "/")

	// The fleet: the Drift chip filters to the drifted apps.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/?drift=true"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=count-drift].chip-on`)),
	); err != nil {
		screenshot(t, ctx, "drift-fleet-missing")
		t.Fatal(err)
	}
	names := texts(t, ctx, `[data-testid=row-drift]`)
	if len(names) == 0 {
		screenshot(t, ctx, "drift-fleet-empty")
		t.Fatal("the ?drift=true list shows no row with a drift flag")
	}
	rows := texts(t, ctx, `[data-testid=app-row] td.app-name a`)
	found := false
	for _, r := range rows {
		if r == "gateway" {
			found = true
		}
	}
	if !found {
		t.Errorf("drift-filtered rows = %q, want gateway among them", rows)
	}
	screenshot(t, ctx, "drift-fleet")

	// The app page: header note, marker on the Deployment, panel section.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/clusters/devcluster/apps/payments/gateway"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=drift-note]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=tree-node][data-ref="apps:Deployment:payments:gateway"] [data-testid=drift-marker]`)),
	); err != nil {
		screenshot(t, ctx, "drift-app-missing")
		t.Fatal(err)
	}
	if note := texts(t, ctx, `[data-testid=drift-note]`); len(note) != 1 || !strings.Contains(note[0], "1 object changed by hand") {
		t.Errorf("header drift note = %q, want \"1 object changed by hand\"", note)
	}
	clickNode(t, ctx, "apps:Deployment:payments:gateway")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid=drift]`))); err != nil {
		screenshot(t, ctx, "drift-panel-missing")
		t.Fatal(err)
	}
	paths := texts(t, ctx, `[data-testid=drift-row] td:first-child`)
	want := "spec.template.spec.containers[name=gateway].env[name=EXTRA_FLAG]"
	if len(paths) != 1 || paths[0] != want {
		t.Errorf("drift rows = %q, want [%s]", paths, want)
	}
	who := texts(t, ctx, `[data-testid=drift-row] td:last-child`)
	if len(who) != 1 || !strings.Contains(who[0], "kubectl-set") {
		t.Errorf("drift 'changed by' = %q, want kubectl-set", who)
	}
	screenshot(t, ctx, "drift-panel")

	// The diff includes the hand-added variable on the live side by
	// default; the toggle leaves it out, in the URL (bookmarkable).
	clickTab(t, ctx, "diff")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid=diff-drift][aria-pressed=true]`))); err != nil {
		screenshot(t, ctx, "drift-diff-no-toggle")
		t.Fatal(err)
	}
	if live := strings.Join(texts(t, ctx, `[data-testid=diff] td.left`), "\n"); !strings.Contains(live, "EXTRA_FLAG") {
		screenshot(t, ctx, "drift-diff-missing")
		t.Errorf("live side of the diff with drift = %q, want EXTRA_FLAG", live)
	}
	screenshot(t, ctx, "drift-diff")
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid=diff-drift]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=diff-drift][aria-pressed=false]`)),
	); err != nil {
		t.Fatal(err)
	}
	if live := strings.Join(texts(t, ctx, `[data-testid=diff] td.left`), "\n"); strings.Contains(live, "EXTRA_FLAG") {
		t.Errorf("live side of the diff without drift = %q, want no EXTRA_FLAG", live)
	}
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.Contains(loc, "drift=0") {
		t.Errorf("URL after the drift toggle = %q, want drift=0", loc)
	}
	screenshot(t, ctx, "drift-diff-off")
	// The tabs keep the choice: Summary, then Diff again, still without it.
	clickTab(t, ctx, "summary")
	clickTab(t, ctx, "diff")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid=diff-drift][aria-pressed=false]`))); err != nil {
		screenshot(t, ctx, "drift-diff-tab-reset")
		t.Fatalf("Summary then Diff: the drift toggle is back on: %v", err)
	}
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); !strings.Contains(loc, "drift=0") {
		t.Errorf("URL after Summary then Diff = %q, want drift=0 kept", loc)
	}

	// On a phone, with the drift shown.
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(strings.Replace(loc, "drift=0", "drift=1", 1)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=diff-drift][aria-pressed=true]`))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "drift-diff-phone")
}
