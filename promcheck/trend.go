package promcheck

import (
	"context"
	"math"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
)

// Bounds of a trend (the app page's chart of a check).
const (
	// TrendWindow is how far back a trend reaches.
	TrendWindow = 24 * time.Hour
	// MaxTrendSeries caps the series a trend keeps for drawing (the
	// query itself is capped at MaxSeries); Trend.More counts the rest.
	MaxTrendSeries = 8
)

// Point is one sample of a trend.
type Point struct {
	T time.Time
	V float64
}

// Trend is a check's query over the last TrendWindow, for a chart: the
// same query as the gate runs (Render), the same bounded range query
// (at most about Points steps per series, MaxSeries series, MaxSamples
// samples, Timeout, MaxBytes), cached per minute like Evaluate's
// results. Every text field is public.
type Trend struct {
	Name      string
	Query     string
	Threshold envconfig.Threshold
	From, To  time.Time
	// Series are the answer's series (MaxTrendSeries at most), each in
	// time order; More is how many more the answer had.
	Series [][]Point
	More   int
	// Current is the latest sample's value (the worst against the
	// threshold when several series end together), At its time;
	// HasCurrent false when the window has no sample.
	Current    float64
	At         time.Time
	HasCurrent bool
	// Problem says why there is no trend ("" when the query answered):
	// the query could not be rendered, or Prometheus is unreachable,
	// slow or refused it.
	Problem string
}

// Holds reports whether the current value holds the threshold (false
// without one).
func (t Trend) Holds() bool { return t.HasCurrent && t.Threshold.Holds(t.Current) }

// Trend runs check c's query for v over the last TrendWindow against m.
// A trend that answered samples is cached for the rest of the minute; a
// problem or an answer without samples is not.
func (e *Evaluator) Trend(ctx context.Context, m envconfig.Metrics, c envconfig.Check, v Vars) Trend {
	now := e.now()
	tr := Trend{Name: c.Name, Threshold: c.Threshold, To: now, From: now.Add(-TrendWindow)}
	q, err := Render(c.Query, v)
	if err != nil {
		tr.Query, tr.Problem = c.Query, err.Error()
		return tr
	}
	tr.Query = q
	key := cacheKey{url: m.URL, query: q, threshold: "trend", from: minuteOf(tr.From), minute: minuteOf(now)}
	if hit, ok := e.trends.get(key); ok {
		return hit
	}
	series, err := e.queryRange(ctx, m, q, tr.From, tr.To)
	if err != nil {
		tr.Problem = err.Error()
		return tr
	}
	trendOf(&tr, series)
	if tr.HasCurrent { // no samples yet (a version just live): asked again next time
		e.trends.put(key, tr)
	}
	return tr
}

// trendOf fills tr's Series, More and Current from the answer.
func trendOf(tr *Trend, series [][]sample) {
	var last time.Time
	for i, s := range series {
		if len(s) == 0 {
			continue
		}
		if i >= MaxTrendSeries {
			tr.More++
			continue
		}
		ps := make([]Point, len(s))
		for j, p := range s {
			ps[j] = Point{T: p.t, V: p.v}
		}
		tr.Series = append(tr.Series, ps)
		end := s[len(s)-1]
		switch {
		case !tr.HasCurrent || end.t.After(last):
			tr.Current, last, tr.HasCurrent = end.v, end.t, true
		case end.t.Equal(last) && worse(tr.Threshold, end.v, tr.Current):
			tr.Current = end.v
		}
	}
	tr.At = last
}

// worse reports whether v is worse than w against t (NaN is the worst).
func worse(t envconfig.Threshold, v, w float64) bool {
	switch {
	case math.IsNaN(w):
		return false
	case math.IsNaN(v):
		return true
	case t.Max != nil:
		return v > w
	case t.Min != nil:
		return v < w
	}
	return false
}
