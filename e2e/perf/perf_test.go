// Package perf measures what a user waits for in a real browser: the time
// from navigation to the first application row on screen, and to the last
// row of a page, with the list served from a real kubeview cache filled with
// fixtures (2,000 and 10,000 apps). Run it with
//
//	go test -run '^$' -bench . ./e2e/perf/
//
// It needs Debian's chromium. It is a benchmark, not a test: nothing here
// asserts a duration.
package perf

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/handlers"
	"github.com/hanzoai/deploy-web/internal/fleetfixture"
	"github.com/hanzoai/deploy-web/kubeview"
)

// signedIn stands in for the OIDC middleware: every request is the
// superadmin (the login itself is measured by the e2e tests, not here).
type signedIn struct{}

func (signedIn) Require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := auth.NewContext(r.Context(), auth.Identity{Subject: "bench", Name: "Bench", Admin: true, Expires: time.Now().Add(time.Hour)}, "csrf")
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
func (signedIn) HandleLogin(http.ResponseWriter, *http.Request)    {}
func (signedIn) HandleCallback(http.ResponseWriter, *http.Request) {}
func (signedIn) HandleLogout(http.ResponseWriter, *http.Request)   {}

func server(b *testing.B, apps, perPage int) string {
	b.Helper()
	typed, crs := fleetfixture.Objects(apps)
	cs := fake.NewClientset(typed...)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{appcr.Resource: "AppList"}, crs...)
	log := slog.New(slog.DiscardHandler)
	view, err := kubeview.New(cs, dyn, log, kubeview.Options{Namespaces: fleetfixture.Namespaces(), ProbeInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	view.Start(ctx)
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Minute)
	defer wcancel()
	if err := view.WaitForSync(wctx); err != nil {
		b.Fatal(err)
	}
	site, err := handlers.NewSite(log)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(handlers.New(site, signedIn{}, handlers.Options{PerPage: perPage, Clusters: []handlers.Cluster{{Name: "in-cluster", View: view}}}).Handler())
	b.Cleanup(srv.Close)
	return srv.URL
}

func browser(b *testing.B) context.Context {
	b.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		b.Skip("needs Debian's chromium at /usr/bin/chromium")
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath("/usr/bin/chromium"), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.UserDataDir(b.TempDir()), chromedp.WindowSize(1440, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true))
	ctx, cancelC := chromedp.NewContext(actx)
	b.Cleanup(func() { cancelC(); cancelA() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		b.Fatal(err)
	}
	return ctx
}

// BenchmarkBrowserFirstRow: navigation to the first application row visible
// (ArgoCD's UI: first tile after about 1.1 s at 2,000 apps), and to every
// row of the page visible (ArgoCD: 5.6 s for all 2,000 tiles; here a page is
// 100 rows, and perPage=all renders the whole fleet on one page).
func BenchmarkBrowserFirstRow(b *testing.B) {
	for _, tc := range []struct {
		apps, perPage int
	}{{2000, 100}, {10000, 100}, {2000, 2000}} {
		b.Run(fmt.Sprintf("apps=%d/perPage=%d", tc.apps, tc.perPage), func(b *testing.B) {
			url := server(b, tc.apps, tc.perPage)
			ctx := browser(b)
			var first, last time.Duration
			for b.Loop() {
				start := time.Now()
				if err := chromedp.Do(ctx, chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.CSS(`[data-testid=app-row]`))); err != nil {
					b.Fatal(err)
				}
				first += time.Since(start)
				sel := fmt.Sprintf(`[data-testid=app-row]:nth-child(%d)`, min(tc.perPage, tc.apps))
				if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
					b.Fatal(err)
				}
				last += time.Since(start)
			}
			b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "ms-first-row")
			b.ReportMetric(float64(last.Milliseconds())/float64(b.N), "ms-all-rows")
		})
	}
}
