package perf

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// coldBrowser starts a headless Chromium with a new, empty profile (no
// cache, no connections): a person opening a bookmark in a fresh browser.
// The start itself is not measured; the returned stop ends it.
func coldBrowser(b *testing.B) (context.Context, func()) {
	b.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		b.Skip("needs Debian's chromium at /usr/bin/chromium")
	}
	dir, err := os.MkdirTemp("", "perf-cold-")
	if err != nil {
		b.Fatal(err)
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath("/usr/bin/chromium"), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.UserDataDir(dir), chromedp.WindowSize(1440, 900),
		chromedp.Flag("enable-precise-memory-info", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true))
	ctx, cancelC := chromedp.NewContext(actx)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		cancelC()
		cancelA()
		b.Fatal(err)
	}
	return ctx, func() { cancelC(); cancelA(); os.RemoveAll(dir) }
}

// coldLoad is what one cold navigation measured.
type coldLoad struct {
	visible time.Duration // Navigate until sel is visible (wall clock)
	fcp     float64       // first contentful paint, ms after navigation start
	paint   float64       // the element marked elementtiming="first-row" painted, ms after navigation start (Element Timing); 0 without one
	dom     int           // elements in the document
	heap    float64       // used JS heap, MB
}

// loadCold opens url in a fresh browser and waits for sel.
func loadCold(b *testing.B, url, sel string) coldLoad {
	b.Helper()
	ctx, stop := coldBrowser(b)
	defer stop()
	start := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
		b.Fatalf("%s: wait for %s: %v", url, sel, err)
	}
	var l coldLoad
	l.visible = time.Since(start)
	type metrics struct {
		FCP  float64 `json:"fcp"`
		DOM  int     `json:"dom"`
		Heap float64 `json:"heap"`
	}
	// FCP may be reported a frame after the element is visible.
	for range 50 {
		m, err := chromedp.Run(ctx, chromedp.Evaluate[metrics](`({
			fcp: (performance.getEntriesByName('first-contentful-paint')[0] || {startTime: 0}).startTime,
			dom: document.getElementsByTagName('*').length,
			heap: performance.memory ? performance.memory.usedJSHeapSize / 1048576 : 0,
		})`))
		if err != nil {
			b.Fatal(err)
		}
		l.fcp, l.dom, l.heap = m.FCP, m.DOM, m.Heap
		if m.FCP > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The first row's paint, as the browser reports it: the Element
	// Timing entry of the element marked elementtiming="first-row" (its
	// text's paint, ms after navigation start). The entries are buffered,
	// so an observer made now still gets the one of the first frame; a
	// page without the mark answers 0 after a short wait.
	paint, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`new Promise(resolve => {
		if (!document.querySelector('[elementtiming=first-row]')) { resolve(0); return; }
		new PerformanceObserver(list => {
			for (const e of list.getEntries()) {
				if (e.identifier === 'first-row') { resolve(e.renderTime || e.startTime); }
			}
		}).observe({type: 'element', buffered: true});
		setTimeout(() => resolve(-1), 2000);
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		b.Fatal(err)
	}
	if paint < 0 {
		b.Fatalf("%s: the first row is marked for Element Timing but no entry came within 2 s", url)
	}
	l.paint = paint
	return l
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// staticTwin serves the bytes (and headers) that the server at base
// answered for path once, from memory, as a static file server would, and
// passes every other request (stylesheets, scripts, icons) to base: the same
// page without the server's work, to hold the live page against.
func staticTwin(b *testing.B, base, path string) string {
	b.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("static twin of %s: status %d, %v", path, resp.StatusCode, err)
	}
	header := resp.Header.Clone()
	header.Del("Content-Length")
	header.Del("Date")
	target, err := url.Parse(base)
	if err != nil {
		b.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RequestURI() != path {
			proxy.ServeHTTP(w, r)
			return
		}
		for k, v := range header {
			w.Header()[k] = v
		}
		w.Write(body)
	}))
	b.Cleanup(srv.Close)
	return srv.URL
}

// BenchmarkBrowserCold loads each page in a fresh browser (new profile,
// empty cache) per run, and a trivial page (/healthz, a few bytes of text)
// and the page's static twin (the same bytes served from memory, see
// staticTwin) the same way in the same run, and reports medians: ms-visible (navigation
// until the first row / tree / panel is visible, wall clock), ms-fcp (first
// contentful paint), the same two for the trivial page, their ratios, DOM
// elements and the JS heap in MB. On the fleet it also reports ms-paint:
// when the browser painted the first row's name (the Element Timing entry
// of its elementtiming="first-row" cell, ms after navigation start, so
// without chromedp's polling and the load event), and x-trivial-paint, that
// against the trivial page's first contentful paint (x-trivial-paint-paired:
// the median of that ratio taken within each run, the two loads side by
// side under the same load of the machine). x-static-fcp (and on the
// fleet x-static-paint) hold the live page against its static twin: what
// the server's work adds to the first paint, where the trivial page's ratio
// also counts the browser's work on the page. Run it with a small
// count:
//
//	go test -run '^$' -bench BrowserCold -benchtime 5x ./e2e/perf/
func BenchmarkBrowserCold(b *testing.B) {
	for _, tc := range []struct {
		name, path, sel string
		apps            int
	}{
		{"fleet/apps=2000", "/", `[data-testid=app-row]`, 2000},
		{"fleet/apps=10000", "/", `[data-testid=app-row]`, 10000},
		{"tree/apps=2000", "/clusters/in-cluster/apps/apps/svc-00000", `[data-testid=tree-node]`, 2000},
		{"panel/apps=2000", "/clusters/in-cluster/apps/apps/svc-00000/resource/apps:Deployment:apps:svc-00000", `[data-testid=resource-panel]`, 2000},
	} {
		b.Run(tc.name, func(b *testing.B) {
			url := server(b, tc.apps, 100)
			twin := staticTwin(b, url, tc.path)
			var vis, fcp, paint, paired, tvis, tfcp, dom, heap, sfcp, spaint []float64
			for b.Loop() {
				triv := loadCold(b, url+"/healthz", "body")
				page := loadCold(b, url+tc.path, tc.sel)
				static := loadCold(b, twin+tc.path, tc.sel)
				sfcp = append(sfcp, static.fcp)
				spaint = append(spaint, static.paint)
				tvis = append(tvis, float64(triv.visible.Microseconds())/1000)
				tfcp = append(tfcp, triv.fcp)
				vis = append(vis, float64(page.visible.Microseconds())/1000)
				fcp = append(fcp, page.fcp)
				paint = append(paint, page.paint)
				if page.paint > 0 && triv.fcp > 0 {
					paired = append(paired, page.paint/triv.fcp)
				}
				dom = append(dom, float64(page.dom))
				heap = append(heap, page.heap)
			}
			b.ReportMetric(median(vis), "ms-visible")
			b.ReportMetric(median(tvis), "ms-visible-trivial")
			b.ReportMetric(median(vis)/median(tvis), "x-trivial-visible")
			b.ReportMetric(median(fcp), "ms-fcp")
			b.ReportMetric(median(tfcp), "ms-fcp-trivial")
			if median(tfcp) > 0 {
				b.ReportMetric(median(fcp)/median(tfcp), "x-trivial-fcp")
			}
			if median(paint) > 0 && median(tfcp) > 0 {
				b.ReportMetric(median(paint), "ms-paint")
				b.ReportMetric(median(paint)/median(tfcp), "x-trivial-paint")
				b.ReportMetric(median(paired), "x-trivial-paint-paired")
			}
			if median(sfcp) > 0 {
				b.ReportMetric(median(sfcp), "ms-fcp-static")
				b.ReportMetric(median(fcp)/median(sfcp), "x-static-fcp")
			}
			if median(paint) > 0 && median(spaint) > 0 {
				b.ReportMetric(median(spaint), "ms-paint-static")
				b.ReportMetric(median(paint)/median(spaint), "x-static-paint")
			}
			b.ReportMetric(median(dom), "dom-elements")
			b.ReportMetric(median(heap), "MB-js-heap")
			b.ReportMetric(0, "ns/op")
			fmt.Fprintf(os.Stderr, "%s: visible %v (trivial %v), fcp %v (trivial %v, static twin %v), first-row paint %v (static twin %v)\n", tc.name, vis, tvis, fcp, tfcp, sfcp, paint, spaint)
		})
	}
}
