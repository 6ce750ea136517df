package promcheck

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
)

// TestEvaluateHostileServers: a metrics host that redirects gets the
// redirect refused (the other host sees no request), and an answer over
// MaxBytes is refused naming the cap; neither check holds.
func TestEvaluateHostileServers(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		io.WriteString(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"0"]]}]}}`)
	}))
	defer other.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"x":"`+strings.Repeat("x", MaxBytes)+`"},"values":[]}]}}`)
	}))
	defer big.Close()

	max := 1.0
	check := envconfig.Check{Name: "c", Query: "up", Threshold: envconfig.Threshold{Max: &max}}
	e := New(Options{})
	r := e.Evaluate(context.Background(), envconfig.Metrics{URL: redirect.URL}, check, Vars{}, time.Time{}, false)
	if r.Held || r.Problem == "" || elsewhere.Load() != 0 {
		t.Errorf("a redirecting host = %+v, %d requests elsewhere; want a problem and none", r, elsewhere.Load())
	}
	r = e.Evaluate(context.Background(), envconfig.Metrics{URL: big.URL}, check, Vars{}, time.Time{}, false)
	if r.Held || !strings.Contains(r.Problem, "more than 4194304 bytes") {
		t.Errorf("an answer over MaxBytes = %+v, want refused naming the cap", r)
	}
}

// TestNoSamplesNotCached: a check Prometheus answered no samples for (a
// version just live, not scraped yet) is asked again within the minute,
// and its value counts once there is one; a value is cached.
func TestNoSamplesNotCached(t *testing.T) {
	var asked atomic.Int64
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if asked.Add(1) == 1 {
			io.WriteString(w, `{"status":"success","data":{"resultType":"matrix","result":[]}}`)
			return
		}
		io.WriteString(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"0.08"]]}]}}`)
	}))
	defer prom.Close()
	max := 0.05
	check := envconfig.Check{Name: "error-rate", Query: "up", Threshold: envconfig.Threshold{Max: &max}}
	now := time.Now()
	e := New(Options{Now: func() time.Time { return now }})
	m := envconfig.Metrics{URL: prom.URL}
	if r := e.Evaluate(context.Background(), m, check, Vars{}, time.Time{}, false); r.HasValue || !strings.Contains(r.Problem, "no samples") {
		t.Fatalf("first evaluation = %+v, want no samples", r)
	}
	if r := e.Evaluate(context.Background(), m, check, Vars{}, time.Time{}, false); !r.HasValue || r.Value != 0.08 || r.Held || asked.Load() != 2 {
		t.Errorf("second evaluation in the minute = %+v after %d requests, want asked again and failed at 0.08", r, asked.Load())
	}
	e.Evaluate(context.Background(), m, check, Vars{}, time.Time{}, false)
	if asked.Load() != 2 {
		t.Errorf("a value was not cached: %d requests, want 2", asked.Load())
	}
}
