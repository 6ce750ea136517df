package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/hanzoai/deploy-web/appcr"
)

// scrape GETs x's /metrics and returns its samples by series.
func scrape(t *testing.T, x *Traffic) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	x.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics = %d %s", rec.Code, rec.Body)
	}
	line := regexp.MustCompile(`^(` + TrafficMetric + `\{(?:[a-z]+="(?:[^"\\\n]|\\.)*",?)+\}) ([0-9]+)$`)
	out := map[string]float64{}
	for _, l := range strings.Split(strings.TrimSuffix(rec.Body.String(), "\n"), "\n") {
		if strings.HasPrefix(l, "# ") {
			continue
		}
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("/metrics line %q is not a sample of %s", l, TrafficMetric)
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		out[m[1]] = v
	}
	return out
}

func series(a RunningApp, code string) string {
	return fmt.Sprintf(`%s{app="%s",namespace="%s",environment="%s",version="%s",code="%s"}`, TrafficMetric, a.App, a.Namespace, a.Environment, a.Version, code)
}

// TestTrafficCounters: the traffic source counts each App at a version
// from the scrape that first saw it, its requests growing steadily and
// its errors ErrorRatio of them: dev's worker at DevVersion 8%, api and
// worker's previous release 0.4%; an App no longer listed starts over;
// hostile label values stay inside their label; the Apps are bounded; a
// failed read of the Apps is a 503, not empty counters.
func TestTrafficCounters(t *testing.T) {
	now := time.Date(2026, 12, 5, 5, 0, 0, 0, time.UTC)
	worker := RunningApp{App: FailingApp, Namespace: StagingNamespace, Environment: DevEnvironment, Version: DevVersion}
	api := RunningApp{App: "api", Namespace: StagingNamespace, Environment: DevEnvironment, Version: DevVersion}
	old := RunningApp{App: FailingApp, Namespace: PreprodNamespace, Environment: StagingEnvironment, Version: StagingVersion}
	apps := []RunningApp{worker, api, old}
	var listErr error
	x := NewTraffic(func(context.Context) ([]RunningApp, error) { return apps, listErr }, func() time.Time { return now })

	first := scrape(t, x)
	for _, a := range apps {
		for _, code := range []string{"200", "500"} {
			if v, ok := first[series(a, code)]; !ok || v != 0 {
				t.Errorf("first scrape: %s = %v (present %t), want 0", series(a, code), v, ok)
			}
		}
	}
	now = now.Add(100 * time.Second)
	got := scrape(t, x)
	for _, c := range []struct {
		a          RunningApp
		ok, errors float64
	}{
		{worker, 5000 - 400, 400}, // 50/s, 8%
		{api, 6000 - 24, 24},      // 60/s, 0.4%
		{old, 5000 - 20, 20},      // worker's previous release: 0.4%
	} {
		if got[series(c.a, "200")] != c.ok || got[series(c.a, "500")] != c.errors {
			t.Errorf("after 100s %s: 200 = %v, 500 = %v; want %v and %v", c.a.App+"@"+c.a.Version, got[series(c.a, "200")], got[series(c.a, "500")], c.ok, c.errors)
		}
	}

	// worker leaves and comes back: counted anew.
	apps = []RunningApp{api}
	if got := scrape(t, x); len(got) != 2 {
		t.Errorf("with api alone the source serves %d series, want 2: %v", len(got), got)
	}
	apps = []RunningApp{api, worker}
	now = now.Add(10 * time.Second)
	got = scrape(t, x)
	if got[series(worker, "200")] != 0 || got[series(api, "200")] != 6600-26 {
		t.Errorf("worker back after it left: %v, want worker from 0 and api still counting", got)
	}

	// Hostile names and versions are escaped label values.
	hostile := RunningApp{App: "x\"} 1\nevil{a=\"", Namespace: `n\`, Environment: "e\x01", Version: "v\"}"}
	apps = []RunningApp{hostile}
	got = scrape(t, x)
	want := fmt.Sprintf(`%s{app="x\"} 1\nevil{a=\"",namespace="n\\",environment="e",version="v\"}",code="500"}`, TrafficMetric)
	if _, ok := got[want]; !ok || len(got) != 2 {
		t.Errorf("hostile App's series = %v, want %s and its 200", got, want)
	}

	apps = nil
	for i := range maxTrafficApps + 10 {
		apps = append(apps, RunningApp{App: fmt.Sprintf("app%03d", i), Namespace: "ns", Environment: "env", Version: "1"})
	}
	if got := scrape(t, x); len(got) != 2*maxTrafficApps {
		t.Errorf("%d Apps gave %d series, want %d (at most %d Apps)", len(apps), len(got), 2*maxTrafficApps, maxTrafficApps)
	}

	listErr = errors.New("apiserver down")
	rec := httptest.NewRecorder()
	x.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != http.StatusServiceUnavailable || strings.Contains(string(body), TrafficMetric) || strings.Contains(string(body), "apiserver down") {
		t.Errorf("a failed read of the Apps = %d %q, want 503 without counters or the error's text", rec.Code, body)
	}
}

// TestClusterApps: the traffic source counts the inventory Apps of the
// environments' namespaces at their images' tags, each under its
// environment; other namespaces' Apps and other Apps are not counted.
func TestClusterApps(t *testing.T) {
	app := func(ns, name, image string) runtime.Object {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": appcr.GroupVersion.String(), "kind": appcr.Kind.Kind,
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec":     map[string]any{"image": image},
		}}
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{appcr.Resource: "AppList"},
		app(StagingNamespace, "worker", "registry.demo.local/inventory/worker:"+DevVersion),
		app(StagingNamespace, "api", "registry.demo.local:5000/inventory/api:"+DevPreviousVersion),
		app(StagingNamespace, "ledger", "registry.demo.local/payments/ledger:2.0.0"),
		app(PreprodNamespace, "web", "registry.demo.local/inventory/web:"+StagingVersion),
		app("storefront", "web", "registry.demo.local/storefront/web:9.9.9"),
	)
	got, err := clusterApps(dyn)(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b RunningApp) int { return strings.Compare(a.Environment+a.App, b.Environment+b.App) })
	want := []RunningApp{
		{App: "api", Namespace: StagingNamespace, Environment: DevEnvironment, Version: DevPreviousVersion},
		{App: "worker", Namespace: StagingNamespace, Environment: DevEnvironment, Version: DevVersion},
		{App: "web", Namespace: PreprodNamespace, Environment: StagingEnvironment, Version: StagingVersion},
	}
	if !slices.Equal(got, want) {
		t.Errorf("clusterApps = %+v, want %+v", got, want)
	}
}
