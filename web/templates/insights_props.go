package templates

import (
	"math"
	"strconv"
	"time"

	"github.com/hanzoai/deploy-web/insights"
)

// InsightsProps is /insights: the delivery metrics of the selection
// (environment, App, window: all in the URL), drawn as four charts with
// the numbers per environment and App in a table beside them.
type InsightsProps struct {
	Layout  LayoutProps
	Results InsightsResultsProps
	// Environments are the configured environments (the filter's
	// choices); Windows the windows.
	Environments []string
	Windows      []string
}

// InsightsResultsProps is the results fragment (#insights-results): what
// an HTMX request of the filters gets alone.
type InsightsResultsProps struct {
	Query InsightsQuery
	// WindowLinks are the window choices as links (the query with each
	// window), CSVURL the CSV of this selection, APIURL its JSON.
	WindowLinks    []InsightsLink
	CSVURL, APIURL string
	Charts         []InsightsChart
	Rows           []InsightsRow
	// Notes say what the numbers cannot include (the timeline off, a
	// read cut at its bound).
	Notes []string
	Since time.Time
	Until time.Time
}

// InsightsQuery is the selection as the URL holds it.
type InsightsQuery struct {
	Env, App, Since string
}

// InsightsLink is one window choice.
type InsightsLink struct {
	Label, URL string
	Active     bool
}

// InsightsChart is one metric's bar chart: a bar per bucket of the
// window, heights in percent of the tallest.
type InsightsChart struct {
	// ID is the metric's JSON key (data-testid="chart-<ID>").
	ID, Title string
	// Value is the headline number of the window, Detail its context.
	Value, Detail string
	// Max labels the top of the scale; Start and End the axis.
	Max        string
	Start, End string
	Bars       []InsightsBar
}

// InsightsBar is one bucket's bar: X and W in percent of the chart's
// width, H in percent of its height; Title the bucket and its number.
type InsightsBar struct {
	X, W, H float64
	Title   string
	// Bad marks a bar of failures (drawn in the degraded colour).
	Bad bool
}

// InsightsRow is one row of the table: an environment (App "") or an
// App in it, with its four numbers as text.
type InsightsRow struct {
	Env, App, Namespace, Cluster string
	Deployments, PerDay          string
	LeadTime, FailureRate        string
	Restore, Unrestored          string
}

// InsightsChartsOf draws the four charts of rep: deployments per bucket,
// the median lead time, the change failure rate and the median time to
// restore.
func InsightsChartsOf(rep insights.Report) []InsightsChart {
	m := rep.Metrics
	charts := []InsightsChart{
		{ID: "deploymentFrequency", Title: "Deployment frequency",
			Value:  strconv.Itoa(m.DeploymentFrequency.Deployments) + plural(m.DeploymentFrequency.Deployments, " deployment", " deployments"),
			Detail: perDay(m.DeploymentFrequency.PerDay)},
		{ID: "leadTime", Title: "Lead time for changes", Value: InsightsSpan(m.LeadTime.MedianSeconds, m.LeadTime.Count),
			Detail: "median, commit to live; p90 " + InsightsSpan(m.LeadTime.P90Seconds, m.LeadTime.Count)},
		{ID: "changeFailureRate", Title: "Change failure rate", Value: InsightsRate(m.ChangeFailureRate),
			Detail: strconv.Itoa(m.ChangeFailureRate.Failures) + " of " + strconv.Itoa(m.ChangeFailureRate.Deployments) + " deployments failed within an hour"},
		{ID: "timeToRestore", Title: "Time to restore", Value: InsightsSpan(m.TimeToRestore.MedianSeconds, m.TimeToRestore.Count),
			Detail: "median, Degraded to Healthy; " + strconv.Itoa(m.TimeToRestore.Count) + " restored, " + strconv.Itoa(m.TimeToRestore.Unrestored) + " not yet"},
	}
	values := [4]func(b insights.Bucket) (float64, string){
		func(b insights.Bucket) (float64, string) {
			n := b.DeploymentFrequency.Deployments
			return float64(n), strconv.Itoa(n) + plural(n, " deployment", " deployments")
		},
		func(b insights.Bucket) (float64, string) {
			return b.LeadTime.MedianSeconds, "median lead time " + InsightsSpan(b.LeadTime.MedianSeconds, b.LeadTime.Count)
		},
		func(b insights.Bucket) (float64, string) {
			return b.ChangeFailureRate.Rate, "change failure rate " + InsightsRate(b.ChangeFailureRate)
		},
		func(b insights.Bucket) (float64, string) {
			return b.TimeToRestore.MedianSeconds, "median time to restore " + InsightsSpan(b.TimeToRestore.MedianSeconds, b.TimeToRestore.Count)
		},
	}
	n := len(rep.Buckets)
	for i := range charts {
		c := &charts[i]
		top := 0.0
		for _, b := range rep.Buckets {
			v, _ := values[i](b)
			top = math.Max(top, v)
		}
		switch i {
		case 0:
			c.Max = strconv.FormatFloat(top, 'f', -1, 64)
		case 2:
			top = 1 // a rate's scale is 0 to 100%
			c.Max = "100%"
		default:
			c.Max = InsightsSpan(top, 1)
			if top == 0 {
				c.Max = "" // nothing measured: no scale to label
			}
		}
		if n > 0 {
			c.Start = rep.Buckets[0].Start.UTC().Format("Jan 2")
			c.End = rep.Buckets[n-1].End.UTC().Format("Jan 2")
		}
		for j, b := range rep.Buckets {
			v, text := values[i](b)
			h := 0.0
			if top > 0 {
				h = 100 * v / top
			}
			w := 100 / float64(n)
			c.Bars = append(c.Bars, InsightsBar{X: float64(j) * w, W: w, H: h, Bad: i == 2,
				Title: b.Start.UTC().Format("Jan 2") + ": " + text})
		}
	}
	return charts
}

// InsightsRowsOf are rep's rows as the table shows them.
func InsightsRowsOf(rep insights.Report) []InsightsRow {
	out := make([]InsightsRow, 0, len(rep.Rows))
	for _, r := range rep.Rows {
		out = append(out, InsightsRow{Env: r.Environment, App: r.App, Namespace: r.Namespace, Cluster: r.Cluster,
			Deployments: strconv.Itoa(r.DeploymentFrequency.Deployments), PerDay: perDay(r.DeploymentFrequency.PerDay),
			LeadTime:    InsightsSpan(r.LeadTime.MedianSeconds, r.LeadTime.Count),
			FailureRate: InsightsRate(r.ChangeFailureRate),
			Restore:     InsightsSpan(r.TimeToRestore.MedianSeconds, r.TimeToRestore.Count),
			Unrestored:  strconv.Itoa(r.TimeToRestore.Unrestored)})
	}
	return out
}

// perDay is a rate of deployments per day: "0.43 a day".
func perDay(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + " a day" }

// InsightsRate is a failure rate as a percentage ("25%"), or the en dash
// without deployments.
func InsightsRate(r insights.FailureRate) string {
	if r.Deployments == 0 {
		return "–"
	}
	return strconv.FormatFloat(math.Round(r.Rate*1000)/10, 'f', -1, 64) + "%"
}

// InsightsSpan is a duration of seconds in two units at most ("45s",
// "12m", "3h 5m", "2d 4h"), or the en dash when count is 0 (nothing was
// measured).
func InsightsSpan(seconds float64, count int) string {
	if count == 0 {
		return "–"
	}
	d := time.Duration(math.Round(seconds)) * time.Second
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m"
	case d < 24*time.Hour:
		return twoUnits(int(d.Hours()), "h", int(d.Minutes())%60, "m")
	}
	return twoUnits(int(d.Hours())/24, "d", int(d.Hours())%24, "h")
}

func twoUnits(a int, au string, b int, bu string) string {
	if b == 0 {
		return strconv.Itoa(a) + au
	}
	return strconv.Itoa(a) + au + " " + strconv.Itoa(b) + bu
}

// insightsPlot is the height of a chart's plot, in pixels.
const insightsPlot = 96

// insPct is a percentage as an SVG length ("12.50%").
func insPct(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + "%" }

// barY and barH are a bar's top and height in pixels (a bar of 0 is a
// 1-pixel line on the axis, so an empty bucket reads as zero, not as
// missing).
func barY(b InsightsBar) string { return strconv.Itoa(insightsPlot - barPx(b)) }
func barH(b InsightsBar) string { return strconv.Itoa(barPx(b)) }
func barPx(b InsightsBar) int   { return max(1, int(math.Round(b.H*insightsPlot/100))) }

// barX and barW leave a gap of a tenth of the bucket each side.
func barX(b InsightsBar) string { return insPct(b.X + b.W*0.1) }
func barW(b InsightsBar) string { return insPct(b.W * 0.8) }
