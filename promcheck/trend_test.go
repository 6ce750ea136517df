package promcheck

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
)

// answerTransport answers every range query with body, recording the
// forms asked.
type answerTransport struct {
	body string
	mu   sync.Mutex
	asks []url.Values
}

func (a *answerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(b))
	a.mu.Lock()
	a.asks = append(a.asks, form)
	a.mu.Unlock()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(a.body)), Request: r}, nil
}

func (a *answerTransport) asked() []url.Values {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]url.Values(nil), a.asks...)
}

// matrixAnswer is a Prometheus range answer of series, each a list of
// [unix seconds, value] pairs.
func matrixAnswer(series ...[][2]float64) string {
	var rs []string
	for i, s := range series {
		var vs []string
		for _, p := range s {
			vs = append(vs, fmt.Sprintf(`[%g,"%s"]`, p[0], strconv.FormatFloat(p[1], 'g', -1, 64)))
		}
		rs = append(rs, fmt.Sprintf(`{"metric":{"i":"%d"},"values":[%s]}`, i, strings.Join(vs, ",")))
	}
	return `{"status":"success","data":{"resultType":"matrix","result":[` + strings.Join(rs, ",") + `]}}`
}

// TestTrendQuery: a trend asks the check's query with hostile App names
// and versions escaped (the query as sent keeps its own shape: the value
// stays inside its string literal), over the last 24 hours at a step of
// at most about 300 points, with the series limit; its result is cached
// for the minute, a problem is not.
func TestTrendQuery(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 30, 0, time.UTC)
	at := now.Add(-time.Minute)
	tp := &answerTransport{body: matrixAnswer([][2]float64{{float64(at.Unix()), 0.02}})}
	e := New(Options{Now: func() time.Time { return now }, Transport: tp})
	max := 0.05
	c := envconfig.Check{Name: "error-rate", Query: `max(rate(errors{app="{{app}}", version=~"{{version}}"}[5m]))`, Threshold: envconfig.Threshold{Max: &max}}
	m := envconfig.Metrics{URL: "https://prom.example"}

	for _, tt := range []struct {
		app, version, want string
	}{
		{"api", "1.5.0", `max(rate(errors{app="api", version=~"1\\.5\\.0"}[5m]))`},
		{`x"} or vector(1) or errors{app="`, "1", `max(rate(errors{app="x\"} or vector(1) or errors{app=\"", version=~"1"}[5m]))`},
		{"a\nb", `.*"}`, `max(rate(errors{app="a\x0ab", version=~"\\.\\*\"\\}"}[5m]))`},
	} {
		tr := e.Trend(context.Background(), m, c, Vars{App: tt.app, Version: tt.version})
		if tr.Problem != "" || tr.Query != tt.want {
			t.Errorf("Trend(app %q, version %q).Query = %q (problem %q), want %q", tt.app, tt.version, tr.Query, tr.Problem, tt.want)
		}
		asks := tp.asked()
		form := asks[len(asks)-1]
		if form.Get("query") != tt.want {
			t.Errorf("query sent for app %q = %q, want %q", tt.app, form.Get("query"), tt.want)
		}
		start, _ := strconv.ParseFloat(form.Get("start"), 64)
		end, _ := strconv.ParseFloat(form.Get("end"), 64)
		step, _ := strconv.ParseFloat(form.Get("step"), 64)
		if end-start != TrendWindow.Seconds() || step <= 0 || (end-start)/step > 300 {
			t.Errorf("range sent = [%s, %s] step %s, want 24 h in at most 300 steps", form.Get("start"), form.Get("end"), form.Get("step"))
		}
		if form.Get("limit") != strconv.Itoa(MaxSeries+1) || form.Get("timeout") == "" {
			t.Errorf("limit, timeout sent = %q, %q, want the series cap and a timeout", form.Get("limit"), form.Get("timeout"))
		}
	}

	n := len(tp.asked())
	e.Trend(context.Background(), m, c, Vars{App: "api", Version: "1.5.0"})
	if len(tp.asked()) != n {
		t.Errorf("a second trend in the minute asked Prometheus again (%d asks, want %d)", len(tp.asked()), n)
	}
	bad := c
	bad.Query = `errors{app={{app}}}`
	if tr := e.Trend(context.Background(), m, bad, Vars{App: "api"}); tr.Problem == "" || len(tp.asked()) != n {
		t.Errorf("a placeholder outside a string = %+v after %d asks, want a problem and no ask", tr, len(tp.asked()))
	}
}

// TestTrendSeries: the current value is the latest sample, the worst
// against the threshold when series end together; series past
// MaxTrendSeries are counted, not kept; an answer without samples and an
// unreachable Prometheus (a problem) are not cached: the next call asks
// again.
func TestTrendSeries(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	t0, t1 := float64(now.Add(-2*time.Hour).Unix()), float64(now.Add(-time.Hour).Unix())
	var series [][][2]float64
	series = append(series, [][2]float64{{t0, 0.9}, {t1, 0.01}}, [][2]float64{{t0, 0.02}, {t1, 0.07}})
	for i := 0; i < MaxTrendSeries; i++ {
		series = append(series, [][2]float64{{t0, 0}})
	}
	tp := &answerTransport{body: matrixAnswer(series...)}
	e := New(Options{Now: func() time.Time { return now }, Transport: tp})
	max := 0.05
	c := envconfig.Check{Name: "c", Query: "errors", Threshold: envconfig.Threshold{Max: &max}}
	tr := e.Trend(context.Background(), envconfig.Metrics{URL: "https://prom.example"}, c, Vars{})
	if !tr.HasCurrent || tr.Current != 0.07 || !tr.At.Equal(now.Add(-time.Hour)) || tr.Holds() {
		t.Errorf("Trend current = %v at %v (has %v, holds %v), want 0.07 (the worst latest) at %v, breaking", tr.Current, tr.At, tr.HasCurrent, tr.Holds(), now.Add(-time.Hour))
	}
	if len(tr.Series) != MaxTrendSeries || tr.More != 2 {
		t.Errorf("Trend kept %d series, More %d; want %d and 2", len(tr.Series), tr.More, MaxTrendSeries)
	}
	if got := tr.Series[0]; len(got) != 2 || got[0].V != 0.9 || !got[0].T.Equal(now.Add(-2*time.Hour)) {
		t.Errorf("Trend series 0 = %+v, want 0.9 then 0.01", got)
	}

	min := 0.99
	c.Threshold = envconfig.Threshold{Min: &min}
	c.Query = "availability"
	tr = e.Trend(context.Background(), envconfig.Metrics{URL: "https://prom.example"}, c, Vars{})
	if tr.Current != 0.01 {
		t.Errorf("against a min, current = %v, want 0.01 (the lowest latest)", tr.Current)
	}

	empty := &answerTransport{body: matrixAnswer()}
	none := New(Options{Now: func() time.Time { return now }, Transport: empty})
	for i := 1; i <= 2; i++ {
		if tr := none.Trend(context.Background(), envconfig.Metrics{URL: "https://prom.example"}, c, Vars{}); tr.HasCurrent || tr.Problem != "" || len(empty.asked()) != i {
			t.Errorf("no samples (call %d) = %+v after %d asks, want none, no problem, and asked again (not cached)", i, tr, len(empty.asked()))
		}
	}

	ft := &failingTransport{}
	down := New(Options{Now: func() time.Time { return now }, Transport: ft})
	for i := 1; i <= 2; i++ {
		tr = down.Trend(context.Background(), envconfig.Metrics{URL: "https://prom.example"}, c, Vars{})
		if tr.Problem == "" || !strings.Contains(tr.Problem, "unreachable") || tr.HasCurrent || len(tr.Series) != 0 || ft.n.Load() != int64(i) {
			t.Errorf("unreachable Prometheus (call %d, %d dials) = %+v, want a problem naming it unreachable, no samples, and a dial per call (not cached)", i, ft.n.Load(), tr)
		}
	}
}

// failingTransport refuses every connection, counting them.
type failingTransport struct{ n atomic.Int64 }

func (f *failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	f.n.Add(1)
	return nil, fmt.Errorf("dial tcp: connection refused")
}
