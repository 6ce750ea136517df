package demo

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/hanzoai/deploy-web/appcr"
)

// The demo's traffic: every inventory App (CatalogApps) in an
// environment's namespace answers requests, counted by the traffic
// source as http_requests_total{app,namespace,environment,version,code}
// for Prometheus to scrape. Dev's worker at DevVersion answers
// FailingErrorRatio of them with errors, every other App and version
// BaseErrorRatio, so the error-rate check of the promotion to staging
// (ErrorRateMax) fails for worker and passes for api.
const (
	// TrafficMetric is the counter the traffic source serves.
	TrafficMetric = "http_requests_total"
	// FailingApp answers FailingErrorRatio of its requests with errors
	// at DevVersion.
	FailingApp        = "worker"
	FailingErrorRatio = 0.08
	// BaseErrorRatio is the error share of every other App and version.
	BaseErrorRatio = 0.004
	// ErrorRateMax is the threshold of the demo's error-rate check.
	ErrorRateMax = 0.05
	// ErrorRateCheck names it.
	ErrorRateCheck = "error-rate"
	// maxTrafficApps bounds the Apps the source counts (the rest are
	// left out): the environments run three.
	maxTrafficApps = 64
	// trafficListTimeout bounds one read of the Apps.
	trafficListTimeout = 5 * time.Second
)

// ErrorRatio is the share of requests app answers with a 5xx at version.
func ErrorRatio(app, version string) float64 {
	if app == FailingApp && version == DevVersion {
		return FailingErrorRatio
	}
	return BaseErrorRatio
}

// requestsPerSecond is how many requests app answers per second: enough
// that two scrapes apart differ by more than 80 requests, so a rate's
// error share stays within a few tenths of a percent of ErrorRatio.
func requestsPerSecond(app string) float64 {
	switch app {
	case "api":
		return 60
	case FailingApp:
		return 50
	}
	return 40
}

// RunningApp is one App the traffic source counts requests of: where it
// runs and at which version (its image's tag).
type RunningApp struct {
	App, Namespace, Environment, Version string
}

// AppLister reads the Apps running now (the cluster's, clusterApps).
type AppLister func(ctx context.Context) ([]RunningApp, error)

// Traffic is the demo's per-App traffic source: an HTTP handler serving
// TrafficMetric in Prometheus's text format. Each App at a version is
// counted from the first scrape that saw it: its requests grow by
// requestsPerSecond, its errors are ErrorRatio of them (code 500, the
// rest code 200), so counters only grow and a version's rate is steady.
type Traffic struct {
	list AppLister
	now  func() time.Time

	mu    sync.Mutex
	first map[RunningApp]time.Time
}

// NewTraffic is a traffic source over the Apps list reads (now: time.Now
// when nil).
func NewTraffic(list AppLister, now func() time.Time) *Traffic {
	if now == nil {
		now = time.Now
	}
	return &Traffic{list: list, now: now, first: map[RunningApp]time.Time{}}
}

// ServeHTTP answers the counters of the Apps running now.
func (x *Traffic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/metrics" {
		http.NotFound(w, r)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), trafficListTimeout)
	defer cancel()
	apps, err := x.list(ctx)
	if err != nil {
		http.Error(w, "the demo's Apps could not be read", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(x.exposition(apps)))
}

// exposition is the counters of apps (at most maxTrafficApps) now; Apps
// no longer listed are forgotten.
func (x *Traffic) exposition(apps []RunningApp) string {
	apps = slices.Clone(apps)
	slices.SortFunc(apps, func(a, b RunningApp) int {
		return strings.Compare(a.Environment+"\x00"+a.App+"\x00"+a.Version, b.Environment+"\x00"+b.App+"\x00"+b.Version)
	})
	apps = slices.Compact(apps)
	if len(apps) > maxTrafficApps {
		apps = apps[:maxTrafficApps]
	}
	now := x.now()
	x.mu.Lock()
	seen := make(map[RunningApp]time.Time, len(apps))
	for _, a := range apps {
		t, ok := x.first[a]
		if !ok {
			t = now
		}
		seen[a] = t
	}
	x.first = seen
	x.mu.Unlock()

	var b strings.Builder
	b.WriteString("# HELP " + TrafficMetric + " Requests the demo's Apps answered (made up by the demo's traffic source).\n")
	b.WriteString("# TYPE " + TrafficMetric + " counter\n")
	for _, a := range apps {
		total := math.Floor(requestsPerSecond(a.App) * now.Sub(seen[a]).Seconds())
		errs := math.Floor(total * ErrorRatio(a.App, a.Version))
		labels := fmt.Sprintf(`app="%s",namespace="%s",environment="%s",version="%s"`,
			labelValue(a.App), labelValue(a.Namespace), labelValue(a.Environment), labelValue(a.Version))
		fmt.Fprintf(&b, "%s{%s,code=\"200\"} %.0f\n", TrafficMetric, labels, total-errs)
		fmt.Fprintf(&b, "%s{%s,code=\"500\"} %.0f\n", TrafficMetric, labels, errs)
	}
	return b.String()
}

// labelValue escapes v for a label value of the text format (backslash,
// double quote and newline), other control characters dropped.
func labelValue(v string) string {
	v = strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' || r == 0x7f {
			return -1
		}
		return r
	}, v)
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}

// environmentNamespaces maps the namespace each demo environment deploys
// to onto the environment.
func environmentNamespaces() map[string]string {
	return map[string]string{StagingNamespace: DevEnvironment, PreprodNamespace: StagingEnvironment, ProductionNamespace: ProdEnvironment}
}

// clusterApps lists the inventory Apps (CatalogApps) of the
// environments' namespaces in the cluster dyn reaches, each at its
// image's tag.
func clusterApps(dyn dynamic.Interface) AppLister {
	return func(ctx context.Context) ([]RunningApp, error) {
		var out []RunningApp
		for ns, env := range environmentNamespaces() {
			list, err := dyn.Resource(appcr.Resource).Namespace(ns).List(ctx, metav1.ListOptions{Limit: maxTrafficApps})
			if err != nil {
				return nil, err
			}
			for _, it := range list.Items {
				if !slices.Contains(CatalogApps(), it.GetName()) {
					continue
				}
				image, _, _ := unstructured.NestedString(it.Object, "spec", "image")
				out = append(out, RunningApp{App: it.GetName(), Namespace: ns, Environment: env, Version: appcr.ImageTag(image)})
			}
		}
		return out, nil
	}
}
