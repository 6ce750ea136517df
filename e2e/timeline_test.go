package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/devcluster"
)

// TestTimelineInBrowser rolls the demo's checkout back to 1.2.0 and out to
// 1.3.0 again (which crashes) through its App, then checks the Timeline
// tab: the deploy of 1.3.0, then the Degraded band, whose click jumps to
// that deploy; and the activity feed filtered to namespace storefront. At
// 1440x900 and 390x844.
func TestTimelineInBrowser(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(demoEnv.restConfig(t))
	apps := dyn.Resource(appcr.Resource).Namespace("storefront")
	ctx0 := context.Background()
	app, err := apps.Get(ctx0, "checkout", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	image, _, _ := unstructured.NestedString(app.Object, "spec", "image")
	repo, _, ok := strings.Cut(image, ":1.3.0")
	if !ok {
		t.Fatalf("checkout's image = %q, want the demo's 1.3.0", image)
	}
	spec := func(tag string, crash bool) []byte {
		labels := any(nil)
		if crash {
			labels = map[string]string{devcluster.BehaviorLabel: devcluster.BehaviorCrashLoop}
		}
		b, _ := json.Marshal(map[string]any{"spec": map[string]any{"image": repo + ":" + tag, "podLabels": labels}})
		return b
	}
	patch := func(tag string, crash bool) {
		t.Helper()
		if _, err := apps.Patch(ctx0, "checkout", types.MergePatchType, spec(tag, crash), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = apps.Patch(ctx0, "checkout", types.MergePatchType, spec("1.3.0", true), metav1.PatchOptions{})
	})

	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	base := strings.TrimSuffix(demoEnv.state.URL, "/")
	page := base + "/clusters/devcluster/apps/storefront/checkout/timeline?range=1h"

	// Rows are newest first. rowsJS defines row(i)'s kind and change text
	// and the index of the newest deploy to a version.
	const rowsJS = `const rows = Array.from(document.querySelectorAll('[data-testid=timeline-row]'));
		const text = r => r.querySelector('[data-testid=timeline-change]').textContent.trim();
		const deployTo = v => rows.findIndex(r => r.dataset.kind === 'deploy' && text(r).includes('→ ' + v));
		const healthAbove = (i, to) => rows.slice(0, Math.max(i, 0)).findIndex(r => r.dataset.kind === 'health' && text(r).includes('→ ' + to));`
	patch("1.2.0", false)
	// The console saw 1.2.0 go out and checkout leave Degraded (Healthy
	// again) before 1.3.0 goes out: else the crash of 1.3.0 is no new
	// transition to Degraded (an earlier test may have left it Degraded).
	reloadUntilJS(t, ctx, page, "the deploy of 1.2.0, then Healthy", 3*time.Minute,
		`(function(){ `+rowsJS+` const d = deployTo('1.2.0'); return d >= 0 && healthAbove(d, 'Healthy') >= 0 ? 1 : 0; })()`)
	patch("1.3.0", true)
	reloadUntilJS(t, ctx, page, "Degraded after the deploy of 1.3.0", 3*time.Minute,
		`(function(){ `+rowsJS+` const d = rows.findIndex(r => r.dataset.kind === 'deploy' && text(r).startsWith('1.2.0 → 1.3.0')); return d >= 0 && healthAbove(d, 'Degraded') >= 0 ? 1 : 0; })()`)
	for _, size := range screenSizes() {
		emulateScreen(t, ctx, size)
		if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`[data-testid=timeline-chart]`))); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "timeline-"+size.name)
	}
	emulateScreen(t, ctx, screenSizes()[0])

	// The red band jumps to the deploy before it (its diff, or its row):
	// the last band link is the newest Degraded band's.
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS(`[data-testid=tl-band-link]`))); err != nil {
		t.Fatal(err)
	}
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll('[data-testid=tl-band-link]')).pop().getAttribute('href')`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(function(){const a=Array.from(document.querySelectorAll('[data-testid=tl-band-link]')).pop(); a.dispatchEvent(new MouseEvent('click',{bubbles:true})); return true})()`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the jump to the deploy", func() bool {
		loc, err := chromedp.Run(ctx, chromedp.Location())
		return err == nil && strings.HasSuffix(loc, href)
	})
	if strings.HasPrefix(href, "#") {
		kind, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(':target') ? document.querySelector(':target').dataset.kind : ''`))
		if err != nil || kind != "deploy" {
			t.Errorf("the band's jump lands on %q, %v; want the deploy's row", kind, err)
		}
	} else if !strings.Contains(href, "/diff?") {
		t.Errorf("the band links to %q, want the deploy's diff or row", href)
	}
	screenshot(t, ctx, "timeline-jump")

	// The activity feed, filtered to one namespace.
	for _, size := range screenSizes() {
		emulateScreen(t, ctx, size)
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/activity?namespace=storefront"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=activity-row]`))); err != nil {
			screenshot(t, ctx, "activity-missing-"+size.name)
			t.Fatal(err)
		}
		nss, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('[data-testid=activity-row]')).map(r => r.dataset.namespace)`))
		if err != nil {
			t.Fatal(err)
		}
		for _, ns := range nss {
			if ns != "storefront" {
				t.Errorf("activity?namespace=storefront holds a row of %q", ns)
			}
		}
		if apps := texts(t, ctx, `[data-testid=activity-app]`); !contains(apps, "checkout") {
			t.Errorf("activity?namespace=storefront apps = %q, want checkout among them", apps)
		}
		screenshot(t, ctx, "activity-"+size.name)
	}
}

// reloadUntilJS reloads url until the expression js is 1, or fails the
// test after timeout naming what it waited for.
func reloadUntilJS(t *testing.T, ctx context.Context, url, what string, timeout time.Duration, js string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
			t.Fatal(err)
		}
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](js))
		if err == nil && n == 1 {
			return
		}
		if time.Now().After(deadline) {
			screenshot(t, ctx, "timeout")
			t.Fatalf("%s not on %s after %s (last: %d, %v)", what, url, timeout, n, err)
		}
		time.Sleep(2 * time.Second)
	}
}
