package templates

import (
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/insights"
)

func TestInsightsSpan(t *testing.T) {
	for _, tc := range []struct {
		seconds float64
		count   int
		want    string
	}{
		{0, 0, "–"}, {45, 1, "45s"}, {60, 1, "1m"}, {12*60 + 30, 1, "12m"}, {3*3600 + 5*60, 1, "3h 5m"},
		{3 * 3600, 1, "3h"}, {2*86400 + 4*3600, 1, "2d 4h"}, {86400, 2, "1d"},
	} {
		if got := InsightsSpan(tc.seconds, tc.count); got != tc.want {
			t.Errorf("InsightsSpan(%v, %d) = %q, want %q", tc.seconds, tc.count, got, tc.want)
		}
	}
}

// TestInsightsChartsOf: a bar per bucket, side by side across the
// width, the tallest at 100%; the failure rate on a 0-100% scale.
func TestInsightsChartsOf(t *testing.T) {
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	bucket := func(i, deploys, failures int, lead float64) insights.Bucket {
		b := insights.Bucket{Start: start.Add(time.Duration(i) * 24 * time.Hour), End: start.Add(time.Duration(i+1) * 24 * time.Hour)}
		b.DeploymentFrequency.Deployments = deploys
		b.ChangeFailureRate = insights.FailureRate{Deployments: deploys, Failures: failures}
		if deploys > 0 {
			b.ChangeFailureRate.Rate = float64(failures) / float64(deploys)
		}
		b.LeadTime = insights.Durations{Count: deploys, MedianSeconds: lead}
		return b
	}
	rep := insights.Report{Buckets: []insights.Bucket{bucket(0, 4, 1, 600), bucket(1, 0, 0, 0), bucket(2, 2, 0, 1200), bucket(3, 1, 1, 300)}}
	charts := InsightsChartsOf(rep)
	if len(charts) != 4 {
		t.Fatalf("len(charts) = %d, want 4", len(charts))
	}
	for _, tc := range []struct {
		chart int
		id    string
		max   string
		h     []float64
	}{
		{0, "deploymentFrequency", "4", []float64{100, 0, 50, 25}},
		{1, "leadTime", "20m", []float64{50, 0, 100, 25}},
		{2, "changeFailureRate", "100%", []float64{25, 0, 0, 100}},
		{3, "timeToRestore", "", []float64{0, 0, 0, 0}},
	} {
		c := charts[tc.chart]
		if c.ID != tc.id || c.Max != tc.max || len(c.Bars) != 4 {
			t.Errorf("chart %d = %s max %q with %d bars, want %s max %q with 4", tc.chart, c.ID, c.Max, len(c.Bars), tc.id, tc.max)
			continue
		}
		for i, b := range c.Bars {
			if b.H != tc.h[i] || b.X != float64(i)*25 || b.W != 25 {
				t.Errorf("%s bar %d = %+v, want x %v, w 25, h %v", c.ID, i, b, float64(i)*25, tc.h[i])
			}
		}
	}
	if c := charts[0]; c.Start != "Dec 1" || c.End != "Dec 5" {
		t.Errorf("axis %q to %q, want Dec 1 to Dec 5", c.Start, c.End)
	}
	if got := barPx(InsightsBar{H: 0}); got != 1 {
		t.Errorf("an empty bucket's bar is %dpx, want a 1px line", got)
	}
}
