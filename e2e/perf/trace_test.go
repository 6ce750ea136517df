package perf

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
)

var (
	traceDir   = flag.String("coldtrace", "../../artifacts/perf", "directory BenchmarkTraceCold writes its Chrome traces to")
	shotDir    = flag.String("coldshots", "../../artifacts/e2e", "directory BenchmarkTraceCold writes its screenshots to")
	shotLabel  = flag.String("coldlabel", "", "label in the names of BenchmarkTraceCold's traces and screenshots (before, after)")
	tracePhone = flag.Bool("coldphone", false, "BenchmarkTraceCold traces the pages at a phone's size (390x844) instead of 1440x900")
)

// coldPages are the pages the cold benchmarks load, with the element that
// means "the first row is there".
var coldPages = []struct {
	name, path, sel string
	apps            int
}{
	{"fleet/apps=2000", "/", `[data-testid=app-row]`, 2000},
	{"fleet/apps=10000", "/", `[data-testid=app-row]`, 10000},
	{"tree/apps=2000", "/clusters/in-cluster/apps/apps/svc-00000", `[data-testid=tree-node]`, 2000},
	{"panel/apps=2000", "/clusters/in-cluster/apps/apps/svc-00000/resource/apps:Deployment:apps:svc-00000", `[data-testid=resource-panel]`, 2000},
}

// traceCategories are those of the DevTools Performance panel.
var traceCategories = []string{
	"devtools.timeline", "disabled-by-default-devtools.timeline", "disabled-by-default-devtools.timeline.frame",
	"loading", "blink.user_timing", "v8.execute", "toplevel",
}

// BenchmarkTraceCold records one Chrome performance trace (the categories of
// DevTools' Performance panel) of a cold load of each page, in a fresh
// browser, writes it to -coldtrace (artifacts/perf/) as
// cold-[label-]<page>.json (open it in DevTools' Performance panel or
// ui.perfetto.dev) and prints where the renderer's main thread spent the
// time until the load event, and when each request was sent and done. It
// also saves screenshots of each page at 1440x900 and 390x844 to -coldshots
// (artifacts/e2e/). Its figures are not for comparison with the cold
// benchmark (tracing slows the page); run it once:
//
//	go test -run '^$' -bench TraceCold -benchtime 1x ./e2e/perf/ -coldlabel after
func BenchmarkTraceCold(b *testing.B) {
	if err := os.MkdirAll(*traceDir, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(*shotDir, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, tc := range coldPages {
		b.Run(tc.name, func(b *testing.B) {
			url := server(b, tc.apps, 100)
			file := strings.NewReplacer("/", "-", "=", "").Replace(tc.name)
			if *shotLabel != "" {
				file = *shotLabel + "-" + file
			}
			trace := file
			if *tracePhone {
				trace += "-390x844"
			}
			for b.Loop() {
				events := traceLoad(b, url+tc.path, tc.sel)
				raw, err := json.Marshal(map[string]any{"traceEvents": events})
				if err != nil {
					b.Fatal(err)
				}
				path := filepath.Join(*traceDir, "cold-"+trace+".json")
				if err := os.WriteFile(path, raw, 0o644); err != nil {
					b.Fatal(err)
				}
				fmt.Fprintf(os.Stderr, "%s: trace %s\n%s", tc.name, path, summarise(events))
				screenshots(b, url+tc.path, tc.sel, filepath.Join(*shotDir, "cold-"+file))
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// traceLoad loads url in a fresh browser with tracing on and returns the
// trace events.
func traceLoad(b *testing.B, url, sel string) []json.RawMessage {
	b.Helper()
	ctx, stop := coldBrowser(b)
	defer stop()
	if *tracePhone {
		if err := chromedp.Do(ctx, deviceSize(390, 844, true)); err != nil {
			b.Fatal(err)
		}
	}
	var (
		mu     sync.Mutex
		events []json.RawMessage
		done   = make(chan struct{})
	)
	if err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *tracing.EventDataCollected:
			mu.Lock()
			for _, v := range ev.Value {
				events = append(events, json.RawMessage(append([]byte(nil), v...)))
			}
			mu.Unlock()
		case *tracing.EventTracingComplete:
			close(done)
		}
	}); err != nil {
		b.Fatal(err)
	}
	start := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, tracing.Start, tracing.StartParams{
			TransferMode: tracing.StartTransferModeReportEvents,
			TraceConfig:  &tracing.TraceConfig{IncludedCategories: traceCategories},
		})
		return err
	})
	end := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, tracing.End, cdp.Empty{})
		return err
	})
	if err := chromedp.Do(ctx, start, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Sleep(300e6), end); err != nil {
		b.Fatalf("%s: %v", url, err)
	}
	<-done
	mu.Lock()
	defer mu.Unlock()
	return events
}

// traceEvent is the part of a Chrome trace event the summary reads.
type traceEvent struct {
	Name string          `json:"name"`
	Cat  string          `json:"cat"`
	Ph   string          `json:"ph"`
	TS   float64         `json:"ts"`   // µs
	Dur  float64         `json:"dur"`  // µs
	TDur float64         `json:"tdur"` // µs of the thread's CPU time: unlike dur, barely moved by other processes
	PID  int             `json:"pid"`
	TID  int             `json:"tid"`
	Args json.RawMessage `json:"args"`
}

// bucket sorts a main-thread event into the rows of DevTools' summary.
func bucket(name string) string {
	switch name {
	case "ParseHTML":
		return "parse HTML"
	case "ParseAuthorStyleSheet", "UpdateLayoutTree", "RecalculateStyles", "ScheduleStyleRecalculation":
		return "style (parse CSS, recalc)"
	case "Layout", "UpdateLayout", "IntersectionObserverController::computeIntersections":
		return "layout"
	case "EvaluateScript", "v8.compile", "v8.run", "v8.compileModule", "v8.evaluateModule", "FunctionCall",
		"EventDispatch", "TimerFire", "RunMicrotasks", "v8.produceCache", "v8.deserializeOnBackground", "V8.ScriptCompiler":
		return "script"
	case "Paint", "PrePaint", "Layerize", "Commit", "PaintImage", "UpdateLayer", "CompositeLayers", "UpdateLayerTree", "RasterTask", "Decode Image":
		return "paint, composite"
	}
	return ""
}

// summarise prints the page's timeline markers (ms after navigationStart)
// and the main thread's self time per bucket until the load event.
func summarise(raw []json.RawMessage) string {
	var evs []traceEvent
	for _, r := range raw {
		var e traceEvent
		if json.Unmarshal(r, &e) == nil {
			evs = append(evs, e)
		}
	}
	// The renderer's main thread: the one named CrRendererMain that ran ParseHTML.
	main := map[[2]int]bool{}
	for _, e := range evs {
		if e.Ph == "M" && e.Name == "thread_name" && strings.Contains(string(e.Args), "CrRendererMain") {
			main[[2]int{e.PID, e.TID}] = true
		}
	}
	var thread [2]int
	for _, e := range evs {
		if e.Name == "ParseHTML" && main[[2]int{e.PID, e.TID}] {
			thread = [2]int{e.PID, e.TID}
			break
		}
	}
	var nav float64
	marks := map[string]float64{}
	for _, e := range evs {
		if e.PID != thread[0] {
			continue
		}
		switch e.Name {
		case "navigationStart":
			if nav == 0 && strings.Contains(string(e.Args), `"isLoadingMainFrame":true`) {
				nav = e.TS
			}
		case "firstPaint", "firstContentfulPaint":
			if _, ok := marks[e.Name]; !ok {
				marks[e.Name] = e.TS
			}
		case "largestContentfulPaint::Candidate", "domContentLoadedEventEnd", "loadEventEnd", "MarkLoad":
			// The last: the navigation's initial empty document has its own.
			marks[e.Name] = max(marks[e.Name], e.TS)
		}
	}
	if nav == 0 {
		for _, e := range evs {
			if e.Name == "navigationStart" && e.PID == thread[0] {
				nav = e.TS
				break
			}
		}
	}
	end := marks["loadEventEnd"]
	if end == 0 {
		end = marks["MarkLoad"]
	}
	// Self time of complete events on the main thread from navigationStart to the load event.
	var mine []traceEvent
	for _, e := range evs {
		if e.PID == thread[0] && e.TID == thread[1] && e.Ph == "X" && e.TS >= nav && (end == 0 || e.TS <= end) {
			mine = append(mine, e)
		}
	}
	sort.Slice(mine, func(i, j int) bool {
		if mine[i].TS != mine[j].TS {
			return mine[i].TS < mine[j].TS
		}
		return mine[i].Dur > mine[j].Dur
	})
	self := map[string]float64{}
	cpu := map[string]float64{}      // self CPU time per bucket until the load event
	cpuFirst := map[string]float64{} // the same until the first contentful paint
	fcp := marks["firstContentfulPaint"]
	var busy, busyCPU float64
	type open struct {
		e        traceEvent
		child    float64
		childCPU float64
	}
	var stack []open
	pop := func() {
		o := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		s := o.e.Dur - o.child
		k := bucket(o.e.Name)
		if k == "" {
			k = "other"
		}
		self[k] += s
		c := max(o.e.TDur-o.childCPU, 0)
		cpu[k] += c
		if fcp > 0 && o.e.TS < fcp {
			cpuFirst[k] += c
		}
		if len(stack) > 0 {
			stack[len(stack)-1].child += o.e.Dur
			stack[len(stack)-1].childCPU += o.e.TDur
		} else {
			busy += o.e.Dur
			busyCPU += o.e.TDur
		}
	}
	for _, e := range mine {
		for len(stack) > 0 && stack[len(stack)-1].e.TS+stack[len(stack)-1].e.Dur <= e.TS {
			pop()
		}
		stack = append(stack, open{e: e})
	}
	for len(stack) > 0 {
		pop()
	}
	var sb strings.Builder
	// Requests: when each resource was asked for and finished.
	var reqs []string
	sent := map[string]float64{}
	urls := map[string]string{}
	for _, e := range evs {
		var a struct {
			Data struct {
				RequestID string `json:"requestId"`
				URL       string `json:"url"`
				Priority  string `json:"priority"`
				Blocking  string `json:"renderBlocking"`
			} `json:"data"`
		}
		switch e.Name {
		case "ResourceSendRequest":
			if json.Unmarshal(e.Args, &a) == nil {
				sent[a.Data.RequestID] = e.TS
				u := a.Data.URL
				if i := strings.Index(u, "/static/"); i >= 0 {
					u = u[i:]
				} else if i := strings.Index(u, "//"); i >= 0 {
					if j := strings.Index(u[i+2:], "/"); j >= 0 {
						u = u[i+2+j:]
					}
				}
				if q := strings.Index(u, "?"); q >= 0 {
					u = u[:q]
				}
				urls[a.Data.RequestID] = fmt.Sprintf("%s (%s, render-blocking %s)", u, a.Data.Priority, orNone(a.Data.Blocking))
			}
		case "ResourceFinish":
			if json.Unmarshal(e.Args, &a) == nil {
				if s, ok := sent[a.Data.RequestID]; ok {
					reqs = append(reqs, fmt.Sprintf("    %-70s %7.1f -> %7.1f ms\n", urls[a.Data.RequestID], (s-nav)/1000, (e.TS-nav)/1000))
				}
			}
		}
	}
	fmt.Fprintf(&sb, "  markers (ms after navigationStart):")
	for _, k := range []string{"firstPaint", "firstContentfulPaint", "largestContentfulPaint::Candidate", "domContentLoadedEventEnd", "loadEventEnd"} {
		if t, ok := marks[k]; ok {
			fmt.Fprintf(&sb, " %s %.1f;", k, (t-nav)/1000)
		}
	}
	fmt.Fprintf(&sb, "\n  main thread until load: busy %.1f ms of %.1f ms (its CPU time %.1f ms)\n", busy/1000, (end-nav)/1000, busyCPU/1000)
	var keys []string
	for k := range self {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return self[keys[i]] > self[keys[j]] })
	for _, k := range keys {
		fmt.Fprintf(&sb, "    %-28s %7.1f ms (CPU %5.1f ms; until first contentful paint %5.1f ms)\n", k, self[k]/1000, cpu[k]/1000, cpuFirst[k]/1000)
	}
	// The first frame's work in numbers that do not depend on the load:
	// elements styled, layout objects laid out and their CPU time, until
	// the first contentful paint.
	var styled, laid int
	var styleCPU, layoutCPU float64
	for _, e := range mine {
		if fcp == 0 || e.TS >= fcp || (e.Name != "UpdateLayoutTree" && e.Name != "Layout") {
			continue
		}
		var a struct {
			ElementCount int `json:"elementCount"`
			BeginData    struct {
				DirtyObjects int `json:"dirtyObjects"`
			} `json:"beginData"`
		}
		_ = json.Unmarshal(e.Args, &a)
		if e.Name == "Layout" {
			laid += a.BeginData.DirtyObjects
			layoutCPU += e.TDur
		} else {
			styled += a.ElementCount
			styleCPU += e.TDur
		}
	}
	fmt.Fprintf(&sb, "  until first contentful paint: %d elements styled (CPU %.1f ms), %d layout objects laid out (CPU %.1f ms)\n", styled, styleCPU/1000, laid, layoutCPU/1000)
	// The style and layout passes: how many elements and layout objects
	// each touched (counts, unlike times, do not depend on the machine's load).
	fmt.Fprintf(&sb, "  style and layout passes (ms after navigationStart):\n")
	for _, e := range mine {
		if e.Dur < 1000 || (e.Name != "UpdateLayoutTree" && e.Name != "Layout") {
			continue
		}
		var a struct {
			ElementCount int `json:"elementCount"`
			BeginData    struct {
				DirtyObjects int `json:"dirtyObjects"`
				TotalObjects int `json:"totalObjects"`
			} `json:"beginData"`
		}
		_ = json.Unmarshal(e.Args, &a)
		if e.Name == "Layout" {
			fmt.Fprintf(&sb, "    %7.1f Layout %d of %d objects, %.1f ms (CPU %.1f ms)\n", (e.TS-nav)/1000, a.BeginData.DirtyObjects, a.BeginData.TotalObjects, e.Dur/1000, e.TDur/1000)
		} else {
			fmt.Fprintf(&sb, "    %7.1f style recalc %d elements, %.1f ms (CPU %.1f ms)\n", (e.TS-nav)/1000, a.ElementCount, e.Dur/1000, e.TDur/1000)
		}
	}
	sort.Strings(reqs)
	fmt.Fprintf(&sb, "  requests (sent -> finished):\n%s", strings.Join(reqs, ""))
	return sb.String()
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// screenshots saves the page at a desktop and a phone size, as
// <prefix>-1440x900.png and <prefix>-390x844.png.
func screenshots(b *testing.B, url, sel, prefix string) {
	b.Helper()
	ctx, stop := coldBrowser(b)
	defer stop()
	for _, s := range []struct {
		w, h   int64
		mobile bool
	}{{1440, 900, false}, {390, 844, true}} {
		if err := chromedp.Do(ctx, deviceSize(s.w, s.h, s.mobile), chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
			b.Fatalf("%s: %v", url, err)
		}
		buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(fmt.Sprintf("%s-%dx%d.png", prefix, s.w, s.h), buf, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// deviceSize emulates a screen of w x h CSS pixels.
func deviceSize(w, h int64, mobile bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: w, Height: h, DeviceScaleFactor: 1, Mobile: mobile,
		})
		return err
	})
}
