package main

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/demo"
)

func TestRequestCountsAndRates(t *testing.T) {
	before := requestCounts(`# HELP apiserver_request_total x
apiserver_request_total{code="200",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="",verb="APPLY",version="v1"} 10
apiserver_request_total{code="200",component="apiserver",dry_run="",group="hanzo.ai",resource="apps",scope="resource",subresource="status",verb="PUT",version="v1"} 4
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 100
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 7
apiserver_request_total{code="0",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1"} 3
`)
	after := requestCounts(`apiserver_request_total{code="200",component="apiserver",dry_run="",group="apps",resource="deployments",scope="resource",subresource="",verb="APPLY",version="v1"} 10
apiserver_request_total{code="200",component="apiserver",dry_run="",group="hanzo.ai",resource="apps",scope="resource",subresource="status",verb="PUT",version="v1"} 14
apiserver_request_total{code="200",component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases",scope="resource",subresource="",verb="PUT",version="v1"} 120
apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 17
apiserver_request_total{code="0",component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="WATCH",version="v1"} 13
`)
	if got := before["PUT apps/status"]; got != 4 {
		t.Errorf(`requestCounts["PUT apps/status"] = %v, want 4`, got)
	}
	r := rates(before, after, 10*time.Second)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"all (no watches)", r.all, 4}, // (10 + 20 + 10) / 10 s
		{"writes", r.writes, 3},        // (10 + 20) / 10 s
		{"operator writes", r.operatorWrite, 1},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("rates: %s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if want := "PUT leases 20, PUT apps/status 10"; r.topWrites != want {
		t.Errorf("rates: topWrites = %q, want %q", r.topWrites, want)
	}
}

func TestRenderResults(t *testing.T) {
	out := renderResults([]result{{apps: 2000, total: 2014, ready: 1500 * time.Millisecond,
		routes: []routeResult{{name: "full JSON list", median: 17 * time.Millisecond, p90: 20 * time.Millisecond, bytes: 1200000},
			{name: "app page", median: time.Millisecond, p90: 2 * time.Millisecond, bytes: 2048, cpu: 3 * time.Millisecond}},
		firstRowNote: "not measured: no Chromium"}}, 30)
	for _, want := range []string{"| 2000 apps (+14 demo) |", "| full JSON list (median / p90, size; dashboard CPU per request) | 17.0 ms / 20.0 ms, 1.14 MB |", "| app page (median / p90, size; dashboard CPU per request) | 1.0 ms / 2.0 ms, 2 KB; CPU 3.0 ms |", "not measured: no Chromium", "of 30 requests", section.Start, section.End} {
		if !strings.Contains(out, want) {
			t.Errorf("renderResults lacks %q:\n%s", want, out)
		}
	}
}

// TestRenderAttached: a measurement of a running environment says what the
// fleet was and does not claim apiserver figures at rest it did not take.
func TestRenderAttached(t *testing.T) {
	res := []result{
		{apps: 2000, total: 2014, rest: restRate{all: 1.5, window: time.Minute}},
		{apps: 10000, total: 10014, attached: true, fleetNote: "10014 Apps, 6000 Deployments"},
	}
	got := renderResults(res, 30)
	for _, want := range []string{
		"| fleet seeded: healthy / progressing / degraded | 0 / 0 / 0 | not seeded by this run: 10014 Apps, 6000 Deployments |",
		"| apiserver at rest: requests/s (all but watches) | 1.5 | - (not measured: attached) |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("renderResults() lacks %q:\n%s", want, got)
		}
	}
}

// TestRenderUnconverged: a fleet that did not wholly converge says how
// many Apps did not and names the first.
func TestRenderUnconverged(t *testing.T) {
	r := result{apps: 10000, total: 10014}
	r.seed.Healthy, r.seed.Progressing, r.seed.Degraded = 9350, 300, 350
	r.seed.Unconverged = []demo.Stalled{{App: "payments/fleet-00001", State: "(healthy): not found"}, {App: "payments/fleet-00003", State: "(stuck): no Ready condition"},
		{App: "storefront/fleet-00002", State: "(healthy): not found"}, {App: "storefront/fleet-00004", State: "(healthy): not found"}}
	got := renderResults([]result{r}, 30)
	want := "| fleet seeded: healthy / progressing / degraded | 9350 / 300 / 350; **4 did not converge** (payments/fleet-00001, payments/fleet-00003, storefront/fleet-00002, ...; each with its state in the run's output) |"
	if !strings.Contains(got, want) {
		t.Errorf("renderResults() lacks %q:\n%s", want, got)
	}
}

// TestProcessCPU reads this process's own CPU time.
func TestProcessCPU(t *testing.T) {
	c, err := processCPU(os.Getpid())
	if err != nil || c < 0 {
		t.Errorf("processCPU(self) = %v, %v, want a duration", c, err)
	}
}
