package templates

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/promcheck"
)

// AppMetricsProps is the app page's Metrics panel: the promotion checks
// the App is promoted out of its environment with, each with its
// current value and a chart of the last day. Loaded false is the
// placeholder the page paints first; it loads the panel (URL) at once,
// so the page never waits for Prometheus.
type AppMetricsProps struct {
	URL    string
	Env    string
	Loaded bool
	Checks []MetricCheck
}

// MetricCheck is one check's trend on the panel.
type MetricCheck struct {
	// Target is the environment whose promotion the check gates.
	Target string
	Trend  promcheck.Trend
	Chart  MetricChart
}

// The metric chart's geometry, in the SVG's user units: the plot is
// stretched to the panel's width (preserveAspectRatio none, strokes not
// scaled), MetricPad keeps lines off the top and bottom edges.
const (
	MetricChartW = 1000
	MetricChartH = 100
	MetricPad    = 6
)

// MetricChart is a trend laid out: one polyline's points per unbroken
// run of samples, the threshold's height, the value axis' bounds and
// the time ticks (X in user units, Label how long before the end).
type MetricChart struct {
	Lines      []string
	ThresholdY float64
	Lo, Hi     float64
	Ticks      []MetricTick
	HasSamples bool
	// Breaks: a sample drawn breaks the threshold.
	Breaks bool
	// Now marks the current value (Trend.Current at Trend.At) as a
	// line to itself, drawn as a dot ("" when there is none).
	Now string
}

// MetricTick is a time tick.
type MetricTick struct {
	X     float64
	Label string
}

// LayoutMetricChart lays tr out: time runs over [From, To] left to
// right; the value axis spans every finite sample and the threshold,
// padded so a flat line is not on the edge. A sample that is not finite,
// or a gap of more than three steps, breaks the line; a lone sample is a
// dot (a line to itself, drawn with round caps).
func LayoutMetricChart(tr promcheck.Trend) MetricChart {
	var c MetricChart
	lo, hi := math.Inf(1), math.Inf(-1)
	see := func(v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	for _, s := range tr.Series {
		for _, p := range s {
			see(p.V)
		}
	}
	c.HasSamples = !math.IsInf(lo, 1)
	th, hasTh := threshold(tr)
	if hasTh {
		see(th)
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	if hi-lo < 1e-9 {
		pad := math.Max(math.Abs(hi)*0.1, 0.01)
		lo, hi = lo-pad, hi+pad
	}
	c.Lo, c.Hi = lo, hi
	span := tr.To.Sub(tr.From)
	if span <= 0 {
		return c
	}
	x := func(t time.Time) float64 { return float64(t.Sub(tr.From)) / float64(span) * MetricChartW }
	y := func(v float64) float64 {
		return MetricPad + (hi-v)/(hi-lo)*(MetricChartH-2*MetricPad)
	}
	if hasTh {
		c.ThresholdY = y(th)
	}
	gap := 3 * promcheck.Step(tr.From, tr.To)
	for _, s := range tr.Series {
		var b strings.Builder
		var last time.Time
		var first string
		flush := func() {
			if b.Len() == 0 {
				return
			}
			if b.String() == first { // a lone sample: a dot (round caps)
				b.WriteString(" " + first)
			}
			c.Lines = append(c.Lines, b.String())
			b.Reset()
		}
		for _, p := range s {
			if math.IsNaN(p.V) || math.IsInf(p.V, 0) || p.T.Before(tr.From) || p.T.After(tr.To) {
				flush()
				continue
			}
			if b.Len() > 0 && p.T.Sub(last) > gap {
				flush()
			}
			pt := fmt.Sprintf("%.1f,%.1f", x(p.T), y(p.V))
			if b.Len() > 0 {
				b.WriteByte(' ')
			} else {
				first = pt
			}
			b.WriteString(pt)
			last = p.T
			if !tr.Threshold.Holds(p.V) {
				c.Breaks = true
			}
		}
		flush()
	}
	if tr.HasCurrent && !math.IsNaN(tr.Current) && !math.IsInf(tr.Current, 0) && !tr.At.Before(tr.From) && !tr.At.After(tr.To) {
		pt := fmt.Sprintf("%.1f,%.1f", x(tr.At), y(tr.Current))
		c.Now = pt + " " + pt
	}
	for i := 0; i <= 4; i++ {
		c.Ticks = append(c.Ticks, MetricTick{X: MetricChartW * float64(i) / 4, Label: tickLabel(span * time.Duration(4-i) / 4)})
	}
	return c
}

// tickLabel is a tick's label: "now", or how long before it ("-6h", "-90m").
func tickLabel(d time.Duration) string {
	switch {
	case d <= 0:
		return "now"
	case d%time.Hour == 0:
		return fmt.Sprintf("-%dh", d/time.Hour)
	}
	return fmt.Sprintf("-%dm", d/time.Minute)
}

// threshold is tr's bound (false when it has none).
func threshold(tr promcheck.Trend) (float64, bool) {
	switch {
	case tr.Threshold.Max != nil:
		return *tr.Threshold.Max, true
	case tr.Threshold.Min != nil:
		return *tr.Threshold.Min, true
	}
	return 0, false
}

// metricY is a chart coordinate as an SVG attribute.
func metricY(v float64) string { return fmt.Sprintf("%.1f", v) }

// metricState is a trend's current state in a word: holds, breaks, or
// no value.
func metricState(tr promcheck.Trend) string {
	switch {
	case tr.Problem != "":
		return "unavailable"
	case !tr.HasCurrent:
		return "no-samples"
	case tr.Holds():
		return "holds"
	}
	return "breaks"
}
