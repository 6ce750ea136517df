package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// TestResourceDiff drifts a Service by hand (its port, a field the operator
// rendered), opens the app page, clicks the Service in the tree and sees
// exactly that change in the side-by-side diff (live on the left, desired
// on the right); the untouched Deployment shows no differences.
func TestResourceDiff(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(demoEnv.restConfig(t))
	patch := `[{"op":"replace","path":"/spec/ports/0/port","value":8081}]`
	if _, err := cs.CoreV1().Services("storefront").Patch(context.Background(), "web", types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		undo := `[{"op":"replace","path":"/spec/ports/0/port","value":80}]`
		_, _ = cs.CoreV1().Services("storefront").Patch(context.Background(), "web", types.JSONPatchType, []byte(undo), metav1.PatchOptions{})
	})

	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(strings.TrimSuffix(demoEnv.state.URL, "/")+"/clusters/devcluster/apps/storefront/web"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=tree]`)),
	); err != nil {
		screenshot(t, ctx, "no-tree")
		t.Fatal(err)
	}
	screenshot(t, ctx, "tree")

	// The Service: the panel opens beside the tree; its diff shows the port.
	clickNode(t, ctx, ":Service:storefront:web")
	clickTab(t, ctx, "diff")
	// Live on the left (before), desired on the right (after), as ArgoCD.
	changed := texts(t, ctx, `[data-testid=diff] tr[data-op=change] td.left`)
	if len(changed) != 1 || !strings.Contains(changed[0], "8081") {
		screenshot(t, ctx, "diff-wrong")
		t.Fatalf("changed live lines = %q, want exactly the port 8081", changed)
	}
	right := texts(t, ctx, `[data-testid=diff] tr[data-op=change] td.right`)
	if len(right) != 1 || !strings.Contains(right[0], "80") {
		t.Errorf("changed desired lines = %q, want the port 80", right)
	}
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	if !strings.Contains(loc, "/resource/") || !strings.Contains(loc, "tab=diff") {
		t.Errorf("URL with the panel open = %q, want a bookmarkable resource URL", loc)
	}
	screenshot(t, ctx, "service-diff")

	// The bookmark opens the same panel on a fresh load.
	if err := chromedp.Do(ctx, chromedp.Navigate(loc), chromedp.WaitVisible(chromedp.CSS(`[data-testid=diff]`))); err != nil {
		t.Fatalf("reload %s: %v", loc, err)
	}

	// The Deployment was not touched: no differences.
	clickNode(t, ctx, "apps:Deployment:storefront:web")
	clickTab(t, ctx, "diff")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid=diff-equal]`))); err != nil {
		screenshot(t, ctx, "deployment-diff")
		t.Fatalf("untouched Deployment: no 'no differences' state: %v", err)
	}
	clickTab(t, ctx, "manifest")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid=manifest] pre`))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "deployment-manifest")
}

// TestTreeMidRollout keeps a screenshot of an app in mid-rollout: two
// ReplicaSets, the new one's pods not ready.
func TestTreeMidRollout(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(strings.TrimSuffix(demoEnv.state.URL, "/")+"/clusters/devcluster/apps/storefront/catalog"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=tree]`)),
	); err != nil {
		t.Fatal(err)
	}
	kinds := texts(t, ctx, `[data-testid=tree-node][data-kind=ReplicaSet] .name`)
	if len(kinds) < 2 {
		t.Errorf("ReplicaSets drawn = %q, want the old and the new one", kinds)
	}
	screenshot(t, ctx, "catalog")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=view-list]`)), chromedp.WaitVisible(chromedp.CSS(`[data-testid=tree-list]`))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "catalog-list")
}

func clickNode(t *testing.T, ctx context.Context, ref string) {
	t.Helper()
	sel := `[data-testid=tree-node][data-ref="` + ref + `"]`
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(sel)),
		chromedp.Click(chromedp.CSS(sel)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=resource-panel][data-ref="`+ref+`"]`)),
	); err != nil {
		screenshot(t, ctx, "no-panel")
		t.Fatalf("open panel of %s: %v", ref, err)
	}
}

func clickTab(t *testing.T, ctx context.Context, tab string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=tab-`+tab+`]`))); err != nil {
		t.Fatalf("click tab %s: %v", tab, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		on, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.querySelector('[data-testid=tab-`+tab+`].on')`))
		if err == nil && on {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tab %s not selected", tab)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
