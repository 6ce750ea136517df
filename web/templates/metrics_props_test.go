package templates

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/promcheck"
)

// TestLayoutMetricChart lays out a day of hand-built samples: time runs
// left to right over [From, To], the value axis spans the samples and the
// threshold (the highest at the top pad, the lowest at the bottom), the
// threshold's line sits at its value, a NaN sample and a gap of more
// than three steps break the line, and the ticks cut the day in four.
func TestLayoutMetricChart(t *testing.T) {
	to := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	from := to.Add(-24 * time.Hour)
	at := func(h float64) time.Time { return from.Add(time.Duration(h * float64(time.Hour))) }
	max := 0.05
	tr := promcheck.Trend{From: from, To: to, Threshold: envconfig.Threshold{Max: &max}, Series: [][]promcheck.Point{{
		{T: at(0), V: 0.0}, {T: at(0.1), V: 0.1},
		{T: at(0.2), V: math.NaN()},
		{T: at(6), V: 0.05}, {T: at(6.1), V: 0.02},
		{T: at(24), V: 0.08},
	}}, Current: 0.08, At: at(24), HasCurrent: true}
	c := LayoutMetricChart(tr)
	// The axis: 0 .. 0.1, so y = 6 + (0.1-v)/0.1*88.
	want := MetricChart{
		Lines:      []string{"0.0,94.0 4.2,6.0", "250.0,50.0 254.2,76.4", "1000.0,23.6 1000.0,23.6"},
		ThresholdY: 50,
		Lo:         0, Hi: 0.1,
		Ticks:      []MetricTick{{0, "-24h"}, {250, "-18h"}, {500, "-12h"}, {750, "-6h"}, {1000, "now"}},
		HasSamples: true, Breaks: true,
		Now: "1000.0,23.6 1000.0,23.6",
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("LayoutMetricChart() (-want +got):\n%s", diff)
	}

	// A flat series holding the threshold: the axis is padded around it
	// and the threshold, nothing breaks it.
	min := 1.0
	flat := promcheck.Trend{From: from, To: to, Threshold: envconfig.Threshold{Min: &min}, Series: [][]promcheck.Point{{{T: at(1), V: 1}, {T: at(1.1), V: 1}}}}
	fc := LayoutMetricChart(flat)
	if fc.Breaks || !(fc.Lo < 1 && fc.Hi > 1) || math.Abs(fc.ThresholdY-MetricChartH/2) > 1e-6 || len(fc.Lines) != 1 {
		t.Errorf("a flat series at the threshold = %+v, want an axis padded around 1, the threshold in the middle, one line", fc)
	}

	// No samples: nothing drawn, and the panel says so.
	empty := LayoutMetricChart(promcheck.Trend{From: from, To: to, Threshold: envconfig.Threshold{Max: &max}})
	if empty.HasSamples || len(empty.Lines) != 0 {
		t.Errorf("no samples = %+v, want no lines", empty)
	}
}

// TestAppMetricsPanel renders the panel: a check with samples shows its
// value, verdict and chart; a check Prometheus did not answer says why
// in words, with no chart; an injected check name comes back escaped.
func TestAppMetricsPanel(t *testing.T) {
	to := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	max := 0.05
	ok := promcheck.Trend{Name: "error-rate", Query: `max(x{app="api"})`, From: to.Add(-24 * time.Hour), To: to, Threshold: envconfig.Threshold{Max: &max},
		Series: [][]promcheck.Point{{{T: to.Add(-time.Hour), V: 0.08}}}, Current: 0.08, HasCurrent: true, At: to.Add(-time.Hour)}
	down := promcheck.Trend{Name: "<script>x</script>", Threshold: envconfig.Threshold{Max: &max}, Problem: "Prometheus at http://127.0.0.1:1 is unreachable"}
	p := AppMetricsProps{URL: "/m", Env: "dev", Loaded: true, Checks: []MetricCheck{
		{Target: "staging", Trend: ok, Chart: LayoutMetricChart(ok)},
		{Target: "staging", Trend: down, Chart: LayoutMetricChart(down)},
	}}
	var b bytes.Buffer
	if err := AppMetrics(p).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, w := range []string{`data-check="error-rate" data-state="breaks"`, `0.08`, "breaks", "&lt;= 0.05", `data-testid="metric-chart"`, `data-testid="metric-line"`,
		`data-state="unavailable"`, "No chart: Prometheus at http://127.0.0.1:1 is unreachable.", "&lt;script&gt;x&lt;/script&gt;"} {
		if !strings.Contains(html, w) {
			t.Errorf("AppMetrics() lacks %q:\n%s", w, html)
		}
	}
	if strings.Count(html, `data-testid="metric-chart"`) != 1 || strings.Contains(html, "<script>x") {
		t.Errorf("AppMetrics() drew %d charts (want 1: none for the unreachable check) or an unescaped name:\n%s", strings.Count(html, `data-testid="metric-chart"`), html)
	}
}
