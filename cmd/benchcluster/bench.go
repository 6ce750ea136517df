package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/demo"
	"github.com/hanzoai/deploy-web/internal/benchrun"
	"github.com/hanzoai/deploy-web/internal/proc"
	"github.com/hanzoai/deploy-web/internal/serveproc"
	"github.com/hanzoai/deploy-web/web/paths"
)

// result is one fleet size's measurements.
type result struct {
	apps, total           int // seeded, and all Apps (with the demo's own)
	seed                  demo.FleetResult
	loadBefore, loadAfter string
	ready                 time.Duration
	routes                []routeResult
	rssMB, heapMB         float64
	nextGCMB              float64 // go_memstats_next_gc_bytes
	rssAnonMB, rssFileMB  float64 // of rssMB: anonymous memory (heap, stacks), mapped files (the binary)
	patch                 []time.Duration
	rest                  restRate
	firstRow              time.Duration
	firstRowNote          string
	// attached is a measurement of a running environment (--attach-*):
	// fleetNote says what the fleet was, nothing was seeded and the
	// apiserver was not at rest.
	attached  bool
	fleetNote string
	// idleCPU is the dashboard's CPU time per second of wall time while no
	// request was sent (informer events), measured before the routes.
	idleCPU time.Duration
	// timeline is the timeline's writes and storage (not when attached).
	timeline *timelineResult
}

type routeResult struct {
	name, path  string
	median, p90 time.Duration
	bytes       int
	// cpu is the dashboard process's CPU time (user + system) per
	// request over the timed requests, its background work included
	// (see result.idleCPU); 0 when it could not be read.
	cpu time.Duration
}

// restRate is the apiserver's request rate over a window at rest.
type restRate struct {
	window                time.Duration
	writes, operatorWrite float64 // per second
	all                   float64
	topWrites             string
}

// bench runs the whole measurement; done is called with the results so far
// after each fleet size, so a long run that is stopped keeps what it
// measured.
func bench(ctx context.Context, cfg config, stdout io.Writer, done func([]result) error) ([]result, error) {
	ports, err := proc.FreePorts(2)
	if err != nil {
		return nil, err
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", ports[1])
	dir, cleanup, err := benchrun.WorkDir(cfg.dir, "deploy-web-bench-")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	fmt.Fprintf(stdout, "benchcluster: starting the demo environment in %s\n", dir)
	env, err := demo.Start(ctx, demo.Options{
		BinDir: cfg.binDir, Dir: filepath.Join(dir, "demo"), CallbackURL: base + auth.CallbackPath,
		Progress: stdout, OperatorResync: cfg.operatorResync,
	})
	if err != nil {
		return nil, err
	}
	defer env.Stop()
	dyn, err := dynamic.NewForConfig(env.Cluster.Config)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(env.Cluster.Config)
	if err != nil {
		return nil, err
	}
	secretFile := filepath.Join(dir, "client-secret")
	keyFile := filepath.Join(dir, "session-keys")
	keys, err := auth.GenerateSessionKeys()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(secretFile, []byte(env.IdP.ClientSecret), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(keyFile, keys.Marshal(), 0o600); err != nil {
		return nil, err
	}
	user, pass := "", ""
	for _, u := range env.Users {
		if slices.Contains(u.Groups, auth.DefaultAdminValue) {
			user, pass = u.Username, u.Password
			break
		}
	}

	// The dashboard's own namespace: its audit trail and timeline.
	if err := ensureNamespace(ctx, cs, timelineNamespace); err != nil {
		return nil, err
	}
	var out []result
	for _, n := range cfg.apps {
		r := result{apps: n, loadBefore: loadavg()}
		fmt.Fprintf(stdout, "benchcluster: seeding %d apps\n", n)
		if r.seed, err = demo.SeedFleet(ctx, dyn, demo.FleetOptions{Apps: n, Progress: stdout}); err != nil {
			return out, err
		}
		r.total = n + demoApps

		fmt.Fprintf(stdout, "benchcluster: apiserver requests at rest for %s (the operator resyncs every %s)\n", cfg.restWindow, cfg.operatorResync)
		if r.rest, err = restRequests(ctx, cs, cfg.restWindow); err != nil {
			return out, err
		}

		dash, err := startDashboard(cfg, dir, base, metricsAddr, dashboardEnv{
			kubeconfig: env.Cluster.Kubeconfig, namespaces: env.Namespaces, issuer: env.IdP.IssuerURL, clientID: env.IdP.ClientID,
		}, secretFile, keyFile)
		if err != nil {
			return out, err
		}
		begin := time.Now()
		if err := proc.WaitHTTP(ctx, &http.Client{Timeout: 2 * time.Second}, base+"/readyz", dash, nil); err != nil {
			dash.Stop(5 * time.Second)
			return out, fmt.Errorf("dashboard not ready: %w", err)
		}
		r.ready = time.Since(begin)
		fmt.Fprintf(stdout, "benchcluster: dashboard ready in %s with %d apps\n", r.ready.Round(time.Millisecond), r.total)
		err = measure(ctx, cfg, &r, base, metricsAddr, dash.Pid(), user, pass, dyn)
		if err == nil {
			fmt.Fprintf(stdout, "benchcluster: timeline writes at rest and under churn, %s each\n", timelineWindow)
			tl := measureTimeline(ctx, cs, dyn, n, timelineWindow)
			r.timeline = &tl
		}
		dash.Stop(10 * time.Second)
		if err != nil {
			return out, err
		}
		r.loadAfter = loadavg()
		out = append(out, r)
		if err := done(out); err != nil {
			return out, err
		}
	}
	return out, nil
}

// demoApps is the number of Apps the demo seeds itself.
const demoApps = 14

// dashboardEnv is what the dashboard is pointed at: the cluster, the
// platform namespaces and the IdP.
type dashboardEnv struct {
	kubeconfig       string
	namespaces       []string
	issuer, clientID string
}

func startDashboard(cfg config, dir, base, metricsAddr string, env dashboardEnv, secretFile, keyFile string) (*proc.Process, error) {
	return serveproc.Start(serveproc.Spec{Name: "deploy-web", Bin: cfg.deployWeb, Dir: dir, Addr: strings.TrimPrefix(base, "http://"),
		Kubeconfig: env.kubeconfig, Namespaces: strings.Join(env.namespaces, ","), Issuer: env.issuer, ClientID: env.clientID,
		SecretFile: secretFile, KeyFile: keyFile, MetricsAddr: metricsAddr, HistoryNamespace: timelineNamespace})
}

// measure signs in and measures every route, the memory, a patch's
// visibility and the cold browser.
func measure(ctx context.Context, cfg config, r *result, base, metricsAddr string, pid int, user, pass string, dyn dynamic.Interface) error {
	client, err := serveproc.SignIn(ctx, base, user, pass)
	if err != nil {
		return err
	}
	const ns, app = "storefront", "web"
	ref := "apps:Deployment:" + ns + ":" + app
	inNS := url.Values{"namespace": {ns}}
	routes := []struct{ name, path string }{
		{"full JSON list", paths.APIApplications()},
		{"first HTML page (100 rows)", paths.Fleet(nil)},
		{"filtered page (health=Degraded)", paths.Fleet(url.Values{"health": {"Degraded"}})},
		{"search page (q=fleet-0042)", paths.Fleet(url.Values{"q": {"fleet-0042"}})},
		{"app page", paths.App("devcluster", ns, app)}, // the demo's cluster name
		{"tree JSON", paths.WithQuery(paths.APITree(app), inNS)},
		{"resource JSON with diff", paths.WithQuery(paths.APIResource(app, ref), inNS)},
		{"logs read (tail 100)", paths.WithQuery(paths.APILogs(app), url.Values{"namespace": {ns}, "tail": {"100"}})},
	}
	if c0, err := processCPU(pid); err == nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Second):
		}
		if c1, err := processCPU(pid); err == nil {
			r.idleCPU = (c1 - c0) / 5
		}
	}
	for _, rt := range routes {
		c0, cerr := processCPU(pid)
		rr, err := timeRoute(ctx, client, base+rt.path, cfg.runs)
		if c1, err := processCPU(pid); err == nil && cerr == nil {
			rr.cpu = (c1 - c0) / time.Duration(cfg.runs+1)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", rt.name, err)
		}
		rr.name, rr.path = rt.name, rt.path
		r.routes = append(r.routes, rr)
	}
	// Memory once the routes have run and the dashboard has idled a little.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(5 * time.Second):
	}
	if r.rssMB, r.rssAnonMB, r.rssFileMB, err = rssMB(pid); err != nil {
		return err
	}
	if r.heapMB, r.nextGCMB, err = heapMB(ctx, "http://"+metricsAddr+"/metrics"); err != nil {
		return err
	}
	if r.patch, err = patchVisibility(ctx, client, base, dyn, r.apps); err != nil {
		return err
	}
	r.firstRow, r.firstRowNote = coldFirstRow(ctx, cfg.chromium, base, user, pass)
	return nil
}

// timeRoute GETs u runs times (after one warm-up) and returns the median and
// 90th percentile of the time to the last byte.
func timeRoute(ctx context.Context, client *http.Client, u string, runs int) (routeResult, error) {
	var rr routeResult
	var ds []time.Duration
	for i := range runs + 1 {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return rr, err
		}
		begin := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return rr, err
		}
		n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
		d := time.Since(begin)
		if err != nil {
			return rr, err
		}
		if resp.StatusCode != http.StatusOK {
			return rr, fmt.Errorf("GET %s: status %d", u, resp.StatusCode)
		}
		if i == 0 {
			continue // warm-up
		}
		rr.bytes = int(n)
		ds = append(ds, d)
	}
	slices.Sort(ds)
	rr.median, rr.p90 = ds[len(ds)/2], ds[len(ds)*9/10]
	return rr, nil
}

// patchVisibility patches the declared image of five healthy seeded Apps
// (a merge patch, as `kubectl patch --type merge` sends it) and times each
// until the JSON list shows the new version.
func patchVisibility(ctx context.Context, client *http.Client, base string, dyn dynamic.Interface, apps int) ([]time.Duration, error) {
	var out []time.Duration
	stamp := time.Now().Unix() % 100000
	for k := range 5 {
		i := 20 + k*(apps/5) // healthy: i%200 >= 13
		if i >= apps {
			break
		}
		ns, name := demo.FleetApp(i, []string{"storefront", "payments"})
		tag := fmt.Sprintf("9.%d.%d", stamp, k)
		image := "registry.demo.local/" + ns + "/" + name + ":" + tag
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		begin := time.Now()
		patch, err := json.Marshal(map[string]any{"spec": map[string]any{"image": image}})
		if err != nil {
			cancel()
			return out, err
		}
		if _, err := dyn.Resource(appcr.Resource).Namespace(ns).Patch(pctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "benchcluster"}); err != nil {
			cancel()
			return out, fmt.Errorf("patch App %s/%s: %w", ns, name, err)
		}
		for {
			v, err := listedVersion(pctx, client, base, ns, name)
			if err == nil && v == tag {
				break
			}
			if pctx.Err() != nil {
				cancel()
				return out, fmt.Errorf("patch of %s/%s not visible on the list after 30s (last %q, %v)", ns, name, v, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
		out = append(out, time.Since(begin))
		cancel()
	}
	return out, nil
}

func listedVersion(ctx context.Context, client *http.Client, base, ns, name string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+paths.WithQuery(paths.APIApplications(), url.Values{"namespace": {ns}, "q": {name}}), nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var body struct {
		Items []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"items"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(&body); err != nil {
		return "", err
	}
	for _, it := range body.Items {
		if it.Name == name {
			return it.Version, nil
		}
	}
	return "", errors.New("not listed")
}

// restRequests counts the apiserver's requests over window from its
// apiserver_request_total metric: all of them, the writes, and the writes
// to the kinds the operator writes (Apps and their children).
func restRequests(ctx context.Context, cs kubernetes.Interface, window time.Duration) (restRate, error) {
	scrape := func() (map[string]float64, error) {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		b, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(sctx)
		if err != nil {
			return nil, fmt.Errorf("apiserver metrics: %w", err)
		}
		return requestCounts(string(b)), nil
	}
	before, err := scrape()
	if err != nil {
		return restRate{}, err
	}
	select {
	case <-ctx.Done():
		return restRate{}, ctx.Err()
	case <-time.After(window):
	}
	after, err := scrape()
	if err != nil {
		return restRate{}, err
	}
	return rates(before, after, window), nil
}

var requestLine = regexp.MustCompile(`^apiserver_request_total\{([^}]*)\} ([0-9.e+]+)$`)
var labelRE = regexp.MustCompile(`(\w+)="([^"]*)"`)

// requestCounts sums apiserver_request_total by "verb resource".
func requestCounts(metrics string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(metrics))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		m := requestLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		labels := map[string]string{}
		for _, l := range labelRE.FindAllStringSubmatch(m[1], -1) {
			labels[l[1]] = l[2]
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			continue
		}
		res := labels["resource"]
		if labels["subresource"] != "" {
			res += "/" + labels["subresource"]
		}
		out[labels["verb"]+" "+res] += v
	}
	return out
}

// operatorResources are the kinds the reference operator writes.
var operatorResources = []string{"apps", "apps/status", "deployments", "services", "configmaps", "ingresses", "horizontalpodautoscalers", "poddisruptionbudgets"}

func isWrite(verb string) bool {
	switch verb {
	case "POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION", "CREATE", "UPDATE":
		return true
	}
	return false
}

func rates(before, after map[string]float64, window time.Duration) restRate {
	r := restRate{window: window}
	secs := window.Seconds()
	type kv struct {
		k string
		v float64
	}
	var writes []kv
	for k, v := range after {
		d := v - before[k]
		if d <= 0 {
			continue
		}
		verb, res, _ := strings.Cut(k, " ")
		if verb == "WATCH" {
			continue // a watch is counted once, when it starts; not a rate
		}
		r.all += d / secs
		if isWrite(verb) {
			r.writes += d / secs
			writes = append(writes, kv{k, d})
			if slices.Contains(operatorResources, res) {
				r.operatorWrite += d / secs
			}
		}
	}
	slices.SortFunc(writes, func(a, b kv) int {
		if a.v != b.v {
			if a.v > b.v {
				return -1
			}
			return 1
		}
		return strings.Compare(a.k, b.k)
	})
	var top []string
	for _, w := range writes[:min(4, len(writes))] {
		top = append(top, fmt.Sprintf("%s %.0f", w.k, w.v))
	}
	r.topWrites = strings.Join(top, ", ")
	return r
}

// processCPU returns the user and system CPU time of a process so far,
// from /proc/PID/stat (in clock ticks of 10 ms).
func processCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, errors.New("malformed /proc stat")
	}
	f := strings.Fields(string(b)[i+1:])
	if len(f) < 13 { // utime and stime are fields 14 and 15: 12 and 13 here
		return 0, errors.New("malformed /proc stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("malformed /proc stat")
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// rssMB returns the process's VmRSS and, of it, RssAnon and RssFile, in MB.
func rssMB(pid int) (total, anon, file float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0, err
	}
	found := false
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		kb, perr := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			total, err, found = kb/1024, perr, true
		case "RssAnon:":
			anon = kb / 1024
		case "RssFile:":
			file = kb / 1024
		}
	}
	if !found {
		return 0, 0, 0, errors.New("no VmRSS")
	}
	return total, anon, file, err
}

// heapMB reads go_memstats_heap_inuse_bytes and go_memstats_next_gc_bytes
// (the heap size at which the next collection starts: about twice the live
// heap of the last one) from the dashboard's metrics.
func heapMB(ctx context.Context, u string) (inuse, nextGC float64, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	found := false
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 16<<20))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_inuse_bytes "); ok {
			f, perr := strconv.ParseFloat(v, 64)
			if perr != nil {
				return 0, 0, perr
			}
			inuse, found = f/(1<<20), true
		}
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_next_gc_bytes "); ok {
			if f, perr := strconv.ParseFloat(v, 64); perr == nil {
				nextGC = f / (1 << 20)
			}
		}
	}
	if !found {
		return 0, 0, errors.New("no go_memstats_heap_inuse_bytes in the dashboard's metrics")
	}
	return inuse, nextGC, nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
