package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/hanzoai/deploy-web/appcr"
)

// TestFilterDegraded picks Health = Degraded in the filter bar and sees only
// degraded apps; the filtered view is a URL that reproduces it on reload.
func TestFilterDegraded(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	// checkout turns Degraded once its rollout deadline (25s) has passed.
	waitText(t, ctx, `[data-testid=count-health-Degraded] strong`, func(s string) bool { return s != "0" }, 90*time.Second)

	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(`[data-testid=filter-health]`), "Degraded"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid=filter-health]').dispatchEvent(new Event('change', {bubbles: true}))`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "only degraded rows", func() bool {
		healths := texts(t, ctx, `[data-testid=app-row] [data-testid=health]`)
		if len(healths) == 0 {
			return false
		}
		for _, h := range healths {
			if strings.TrimSpace(h) != "Degraded" {
				return false
			}
		}
		return true
	})
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(loc, "health=Degraded") {
		t.Errorf("URL after filtering = %q, want it to carry health=Degraded", loc)
	}
	names := texts(t, ctx, `[data-testid=app-row] .app-name a`)
	screenshot(t, ctx, "degraded")

	// The same URL, loaded fresh, shows the same view.
	if err := chromedp.Do(ctx, chromedp.Navigate(loc), chromedp.WaitVisible(chromedp.CSS(`[data-testid=apps-table]`))); err != nil {
		t.Fatal(err)
	}
	if again := texts(t, ctx, `[data-testid=app-row] .app-name a`); strings.Join(again, ",") != strings.Join(names, ",") {
		t.Errorf("reloaded %s shows %v, want %v", loc, again, names)
	}
	if !contains(names, "checkout") {
		t.Errorf("degraded apps = %v, want checkout among them", names)
	}
}

// TestAppAppearsLive creates an App with the cluster API while the list is
// open, and sees its row appear without a reload.
func TestAppAppearsLive(t *testing.T) {
	ctx := browser(t)
	user, pass := demoEnv.user(t, "admin")
	login(t, ctx, user, pass)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[data-testid=apps-table]`)),
		chromedp.Evaluate[chromedp.Void](`window.__marker = 'no-reload'`)); err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(demoEnv.restConfig(t))
	name := "live-" + time.Now().Format("150405")
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hanzo.ai/v1", "kind": "App",
		"metadata": map[string]any{"name": name, "namespace": "payments"},
		"spec":     map[string]any{"image": "registry.demo.local/payments/" + name + ":1.0.0", "replicas": int64(1)},
	}}
	apps := dyn.Resource(appcr.Resource).Namespace("payments")
	if _, err := apps.Create(context.Background(), app, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apps.Delete(context.Background(), name, metav1.DeleteOptions{}) })

	waitFor(t, ctx, "the new row", func() bool {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-testid=app-row][data-app="`+name+`"]').length`))
		return err == nil && n == 1
	})
	marker, err := chromedp.Run(ctx, chromedp.Evaluate[string](`String(window.__marker)`))
	if err != nil || marker != "no-reload" {
		t.Errorf("page was reloaded (marker %q, %v), want an HTMX refresh", marker, err)
	}
	// And it turns Healthy and Synced once the operator and KWOK are done.
	waitText(t, ctx, `[data-app="`+name+`"] [data-testid=sync]`, func(s string) bool { return strings.TrimSpace(s) == "Synced" }, 60*time.Second)
	screenshot(t, ctx, "live")
}

func texts(t *testing.T, ctx context.Context, sel string) []string {
	t.Helper()
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(`+jsString(sel)+`)).map(e => e.textContent.trim())`))
	if err != nil {
		t.Fatalf("texts(%s): %v", sel, err)
	}
	return out
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			screenshot(t, ctx, "timeout")
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func waitText(t *testing.T, ctx context.Context, sel string, ok func(string) bool, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := texts(t, ctx, sel)
		if len(got) > 0 && ok(got[0]) {
			return
		}
		if time.Now().After(deadline) {
			screenshot(t, ctx, "timeout")
			t.Fatalf("%s = %q after %s", sel, got, timeout)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
