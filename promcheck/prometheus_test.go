package promcheck

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/promtest"
)

// countingTransport counts the requests that reach Prometheus.
type countingTransport struct {
	rt http.RoundTripper
	n  atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

// TestChecksAgainstPrometheus evaluates checks against a real Prometheus
// scraping a gauge the test serves: api's 1% errors pass `max: 0.05`,
// worker's 8% fail it with the value, the query as run and the
// threshold; hostile App names match nothing (the query is not
// changed); too many series are refused; an unreachable Prometheus is a
// problem, not a pass; results are cached for the minute.
func TestChecksAgainstPrometheus(t *testing.T) {
	x := &promtest.Exporter{}
	lines := []string{`demo_error_ratio{app="api"} 0.01`, `demo_error_ratio{app="worker"} 0.08`}
	for i := 0; i <= MaxSeries; i++ {
		lines = append(lines, fmt.Sprintf(`demo_many{i="%d"} 1`, i))
	}
	x.Set(lines...)
	base := promtest.Start(t, x, "demo_error_ratio").URL

	max := 0.05
	check := envconfig.Check{Name: "error-rate", Query: `max(demo_error_ratio{app="{{app}}"})`,
		Threshold: envconfig.Threshold{Max: &max}, For: durationOf(time.Minute)}
	m := envconfig.Metrics{URL: base}
	ctx := context.Background()
	e := New(Options{})

	pass := e.Evaluate(ctx, m, check, Vars{App: "api"}, time.Time{}, false)
	if !pass.Held || pass.Value != 0.01 || pass.Problem != "" {
		t.Errorf("api (0.01 <= 0.05) = %+v, want held at 0.01", pass)
	}
	fail := e.Evaluate(ctx, m, check, Vars{App: "worker"}, time.Time{}, false)
	if fail.Held || fail.Value != 0.08 || fail.Problem != "" {
		t.Errorf("worker (0.08 > 0.05) = %+v, want failed at 0.08", fail)
	}
	for _, w := range []string{"check error-rate failed", "0.08", "<= 0.05", `max(demo_error_ratio{app="worker"})`} {
		if !strings.Contains(fail.Message(), w) {
			t.Errorf("worker's message %q lacks %q", fail.Message(), w)
		}
	}

	// Hostile App names: escaped, they match no series (the query would
	// answer every series, or a vector(0) that passes, if spliced raw).
	for _, q := range []string{`max(demo_error_ratio{app="{{app}}"})`, `max(demo_error_ratio{app=~"{{app}}"})`} {
		for _, app := range []string{`x"} or vector(0) or demo_error_ratio{app="`, `.*`, `api|worker`, `x'} or vector(0)`} {
			c := check
			c.Query = q
			r := e.Evaluate(ctx, m, c, Vars{App: app}, time.Time{}, false)
			if r.Held || r.HasValue || !strings.Contains(r.Problem, "no samples") {
				t.Errorf("query %s with hostile app %q = %+v, want no samples (not held)", q, app, r)
			}
		}
	}

	many := check
	many.Query = `demo_many`
	if r := e.Evaluate(ctx, m, many, Vars{}, time.Time{}, false); r.Held || !strings.Contains(r.Problem, fmt.Sprintf("more than %d series", MaxSeries)) {
		t.Errorf("%d series = %+v, want refused over MaxSeries", MaxSeries+1, r)
	}

	down := envconfig.Metrics{URL: "http://" + promtest.FreeAddr(t)}
	r := e.Evaluate(ctx, down, check, Vars{App: "api"}, time.Time{}, false)
	if r.Held || !strings.Contains(r.Problem, "unreachable") || !strings.Contains(r.Message(), "could not be evaluated") {
		t.Errorf("unreachable Prometheus = %+v (%s), want a problem naming it unreachable", r, r.Message())
	}

	// The cache: one request per query and minute, on an injected clock.
	now := time.Now()
	ct := &countingTransport{rt: http.DefaultTransport}
	c := New(Options{Now: func() time.Time { return now }, Transport: ct})
	a := c.Evaluate(ctx, m, check, Vars{App: "worker"}, time.Time{}, false)
	b := c.Evaluate(ctx, m, check, Vars{App: "worker"}, time.Time{}, false)
	if ct.n.Load() != 1 || a.Value != b.Value || a.Held != b.Held {
		t.Errorf("two evaluations in one minute made %d requests (%+v, %+v), want 1 and one result", ct.n.Load(), a, b)
	}
	c.Evaluate(ctx, m, check, Vars{App: "api"}, time.Time{}, false)
	if ct.n.Load() != 2 {
		t.Errorf("another App's query made %d requests in all, want 2", ct.n.Load())
	}
	c.Evaluate(ctx, m, check, Vars{App: "worker"}, time.Time{}, true)
	if ct.n.Load() != 3 {
		t.Errorf("a fresh evaluation made %d requests in all, want 3 (fresh skips the cache)", ct.n.Load())
	}
	now = now.Add(time.Minute)
	c.Evaluate(ctx, m, check, Vars{App: "worker"}, time.Time{}, false)
	if ct.n.Load() != 4 {
		t.Errorf("the next minute's evaluation made %d requests in all, want 4 (the cache is per minute)", ct.n.Load())
	}
}
