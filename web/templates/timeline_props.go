package templates

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/a-h/templ"

	"github.com/hanzoai/deploy-web/timeline"
	"github.com/hanzoai/deploy-web/web/paths"
)

// TimelineProps is an App's Timeline tab: the time axis (Chart) and the
// same entries as a table (Rows), newest first.
type TimelineProps struct {
	Layout LayoutProps
	// Cluster is the App's cluster; Multi says several are configured.
	Cluster         string
	Multi           bool
	Namespace, Name string
	AppURL          string
	// Ranges are the range choices (1h, 24h, 7d, 30d), one On.
	Ranges       []TimelineRange
	Since, Until time.Time
	Chart        TimelineChart
	Rows         []TimelineRow
	// Truncated says the range held more entries than are shown (the
	// newest are).
	Truncated bool
	// StreamURL sends new entries (rows) live; ChartURL is this page's
	// chart alone, fetched again when one arrives.
	StreamURL, ChartURL string
	// Off says why there is no timeline ("" when there is).
	Off string
}

// TimelineRange is one choice of the range.
type TimelineRange struct {
	Label, URL string
	On         bool
}

// The chart's geometry: positions run from 0 to ChartWidth (drawn as
// percentages of the page's width, see pct), one lane of LaneHeight
// pixels per kind of row.
const (
	ChartWidth = 1000
	LaneHeight = 22
)

// TimelineChart is the laid-out time axis: lanes top to bottom, bands
// (states over a span), marks (instants) and the axis' ticks.
type TimelineChart struct {
	Lanes []TimelineLane
	Bands []TimelineBand
	Marks []TimelineMark
	Ticks []TimelineTick
	// RecordedSince, when set, is where the record of the App's states
	// begins inside the range (before it, a "not recorded" band).
	RecordedSince time.Time
}

// Height is the chart's height in user units.
func (c TimelineChart) Height() int { return len(c.Lanes) * LaneHeight }

// TimelineLane is one row of the chart.
type TimelineLane struct {
	Label string
	Y     int
}

// TimelineBand is a state held from X for W units (a health or sync
// state, drift, a freeze, a pause). Href, when set, is where a click goes:
// for a red (Degraded) band, the nearest earlier deploy.
type TimelineBand struct {
	Y           int
	X, W        float64
	Class       string
	Title, Href string
}

// TimelineMark is an instant: a deploy, a rollback, a restart, an OOM
// kill, a crash loop, a Warning.
type TimelineMark struct {
	Y           int
	X           float64
	Class       string
	Title, Href string
}

// TimelineTick is a label of the time axis at X.
type TimelineTick struct {
	X     float64
	Label string
}

// pct is a position or width of the chart (0 to ChartWidth) as an SVG
// percentage of its width: the SVG has no viewBox, so its marks and
// labels keep their size on any screen.
func pct(x float64) string { return fmt.Sprintf("%.2f%%", x*100/ChartWidth) }

// TimelineRow is one entry in the table.
type TimelineRow struct {
	// ID is the row's anchor (a deploy's, the target of a red band when
	// the deploy has no diff).
	ID       string
	Time     time.Time
	Kind     string
	Change   string
	Message  string
	Ref      string
	Revision string
	Count    int
	// Last is the time of the last of Count occurrences (zero when
	// nothing was folded): the row shows the span, "× 37 10:02–10:40".
	Last time.Time
	// Href is the entry's link (a deploy's diff), HrefLabel its text.
	Href, HrefLabel string
	// Bad marks what went wrong (Degraded, OOM kill, crash loop, warning).
	Bad bool
}

// The lanes of the chart, top to bottom.
const (
	laneDeploy = iota
	laneHealth
	laneSync
	laneDrift
	lanePods
	laneWarnings
	laneFreeze
	lanePause
	laneCount
)

var laneLabels = [laneCount]string{"Deploys", "Health", "Sync", "Drift", "Pods", "Warnings", "Freezes", "Pauses"}

// TimelineCurrent is the App's state now: the bands' state where no entry
// says otherwise (an App whose health never changed in the retention).
type TimelineCurrent struct {
	Health, Sync string
	Drifted      bool
	// RecordedSince is how far back the record of the App reaches (its
	// oldest entry, or since when this console has watched it); the state
	// lanes draw nothing known before it, but a "not recorded" band.
	// Zero: unknown, the lanes start at the range's start.
	RecordedSince time.Time
}

// EntryID is the table row anchor of an entry.
func EntryID(e *timeline.Entry) string {
	return fmt.Sprintf("tl-%d-%s", e.Time.UnixMilli(), e.Kind)
}

// DeployDiffURL is the diff of a deploy entry of an environment's apply:
// from the environment's previous applied record (From) to the deploy's
// (Ref); "" for any other entry (a change of the declared revision, a
// sync, a rollback of one App, the first apply of an environment).
func DeployDiffURL(e *timeline.Entry) string {
	if e.Kind != timeline.KindDeploy || e.To == "" || e.From == "" || e.Ref == "" {
		return ""
	}
	return paths.EnvDiff(e.To, url.Values{"from": {e.From}, "to": {e.Ref}})
}

// deployTarget is where a jump to a deploy goes: its diff, else its row.
func deployTarget(e *timeline.Entry) string {
	if u := DeployDiffURL(e); u != "" {
		return u
	}
	return "#" + EntryID(e)
}

// BuildTimelineChart lays out entries (all of an App's held entries,
// oldest first, so that a state entered before since is known) over
// [since, until). A Degraded band links to the nearest deploy or rollback
// at or before its start.
func BuildTimelineChart(entries []timeline.Entry, since, until time.Time, cur TimelineCurrent) TimelineChart {
	var c TimelineChart
	for i, l := range laneLabels {
		c.Lanes = append(c.Lanes, TimelineLane{Label: l, Y: i * LaneHeight})
	}
	if !until.After(since) {
		return c
	}
	x := chartX(since, until)
	// band adds a state held over [from, to) when it shows in the range.
	// Before the record reaches back, no state is known.
	recorded := since
	if cur.RecordedSince.After(since) {
		recorded = cur.RecordedSince
		if recorded.After(until) {
			recorded = until
		}
	}
	band := func(lane int, from, to time.Time, class, title, href string) {
		if from.Before(recorded) {
			from = recorded
		}
		if !to.After(since) || !from.Before(until) || !to.After(from) || class == "" {
			return
		}
		x0, x1 := x(from), x(to)
		c.Bands = append(c.Bands, TimelineBand{Y: lane * LaneHeight, X: x0, W: max(x1-x0, 2), Class: class, Title: title, Href: href})
	}
	var deploys []*timeline.Entry
	// A state kind's bands: each entry starts its To, held until the next;
	// before the first, its From; with none, the current state.
	type stateLane struct {
		lane  int
		at    time.Time
		state string
		seen  bool
	}
	lanes := map[timeline.Kind]*stateLane{
		timeline.KindHealth: {lane: laneHealth},
		timeline.KindSync:   {lane: laneSync},
		timeline.KindDrift:  {lane: laneDrift},
	}
	stateClass := func(k timeline.Kind, state string) string {
		if state == "" {
			return ""
		}
		switch k {
		case timeline.KindHealth:
			return "tl-health-" + strings.ToLower(state)
		case timeline.KindSync:
			return "tl-sync-" + strings.ToLower(state)
		case timeline.KindDrift:
			if state == timeline.DriftDrifted {
				return "tl-drift"
			}
		}
		return ""
	}
	stateTitle := func(k timeline.Kind, state string) string { return string(k) + ": " + state }
	nearestDeploy := func(t time.Time) string {
		for i := len(deploys) - 1; i >= 0; i-- {
			if !deploys[i].Time.After(t) {
				return deployTarget(deploys[i])
			}
		}
		return ""
	}
	closeBand := func(k timeline.Kind, l *stateLane, end time.Time) {
		href := ""
		if k == timeline.KindHealth && l.state == "Degraded" {
			href = nearestDeploy(l.at)
		}
		band(l.lane, l.at, end, stateClass(k, l.state), stateTitle(k, l.state), href)
	}
	for i := range entries {
		e := &entries[i]
		if l, ok := lanes[e.Kind]; ok {
			if !l.seen {
				l.seen, l.at, l.state = true, since.Add(-time.Nanosecond), e.From
			}
			closeBand(e.Kind, l, e.Time)
			l.at, l.state = e.Time, e.To
			continue
		}
		if e.Kind == timeline.KindDeploy || e.Kind == timeline.KindRollback {
			deploys = append(deploys, e)
		}
		if e.LastTime().Before(since) || !e.Time.Before(until) {
			continue
		}
		m := TimelineMark{X: x(e.Time), Title: markTitle(e)}
		switch e.Kind {
		case timeline.KindDeploy, timeline.KindRollback:
			m.Y, m.Class, m.Href = laneDeploy*LaneHeight, "tl-"+string(e.Kind), deployTarget(e)
		case timeline.KindRestart, timeline.KindOOM, timeline.KindCrashLoop:
			m.Y, m.Class, m.Href = lanePods*LaneHeight, "tl-"+string(e.Kind), "#"+EntryID(e)
		case timeline.KindWarning:
			m.Y, m.Class, m.Href = laneWarnings*LaneHeight, "tl-warning", "#"+EntryID(e)
		case timeline.KindOperate:
			// A day-2 action sits with the deploys (a person's write),
			// linking to its row.
			m.Y, m.Class, m.Href = laneDeploy*LaneHeight, "tl-operate", "#"+EntryID(e)
		default:
			continue
		}
		c.Marks = append(c.Marks, m)
	}
	start := since.Add(-time.Nanosecond)
	for _, k := range []timeline.Kind{timeline.KindHealth, timeline.KindSync, timeline.KindDrift} {
		l := lanes[k]
		if !l.seen {
			switch k {
			case timeline.KindHealth:
				l.state = cur.Health
			case timeline.KindSync:
				l.state = cur.Sync
			case timeline.KindDrift:
				l.state = map[bool]string{true: timeline.DriftDrifted, false: timeline.DriftClean}[cur.Drifted]
			}
			l.at = start
		}
		closeBand(k, l, until)
	}
	if recorded.After(since) {
		title := "not recorded before " + recorded.UTC().Format("2006-01-02 15:04") + " UTC: the console was not watching this App"
		for _, lane := range []int{laneHealth, laneSync, laneDrift} {
			c.Bands = append(c.Bands, TimelineBand{Y: lane * LaneHeight, X: 0, W: max(x(recorded), 2), Class: "tl-unrecorded", Title: title})
		}
		c.RecordedSince = recorded
	}
	sortBands(c.Bands)
	c.Ticks = timelineTicks(since, until, x)
	return c
}

// chartX is the position of an instant on the chart of [since, until)
// (since before until), held to the chart.
func chartX(since, until time.Time) func(time.Time) float64 {
	span := float64(until.Sub(since))
	return func(t time.Time) float64 {
		return min(max(float64(t.Sub(since))/span*ChartWidth, 0), ChartWidth)
	}
}

// sortBands orders bands by lane, then from the left.
func sortBands(bands []TimelineBand) {
	slices.SortStableFunc(bands, func(a, b TimelineBand) int { return cmp.Or(cmp.Compare(a.Y, b.Y), cmp.Compare(a.X, b.X)) })
}

// markTitle is a mark's tooltip: what, when, how often.
func markTitle(e *timeline.Entry) string {
	s := EntryKindText(e.Kind) + " " + e.Time.UTC().Format("2006-01-02 15:04:05") + " UTC"
	if e.Ref != "" && e.Kind != timeline.KindDeploy && e.Kind != timeline.KindRollback {
		s += " · " + e.Ref
	}
	if e.Count > 1 {
		s += fmt.Sprintf(" · %d times", e.Count)
		if !e.Last.IsZero() {
			s += ", " + FoldSpan(e.Time, e.Last)
		}
	}
	if e.Message != "" {
		s += " · " + e.Message
	}
	return s
}

// FoldSpan is the span of a folded entry's occurrences in UTC: the times
// of day ("10:02–10:40") when both fall on one day, else with the dates
// ("Dec 2 23:50–Dec 3 00:20").
func FoldSpan(first, last time.Time) string {
	first, last = first.UTC(), last.UTC()
	if first.YearDay() == last.YearDay() && first.Year() == last.Year() {
		return first.Format("15:04") + "–" + last.Format("15:04")
	}
	return first.Format("Jan 2 15:04") + "–" + last.Format("Jan 2 15:04")
}

// tickSteps are the axis' label steps, by the range they fit.
var tickSteps = []struct {
	upTo, step time.Duration
	layout     string
}{
	{2 * time.Hour, 10 * time.Minute, "15:04"},
	{2 * 24 * time.Hour, 3 * time.Hour, "15:04"},
	{8 * 24 * time.Hour, 24 * time.Hour, "Jan 2"},
	{1 << 62, 5 * 24 * time.Hour, "Jan 2"},
}

func timelineTicks(since, until time.Time, x func(time.Time) float64) []TimelineTick {
	span := until.Sub(since)
	i := slices.IndexFunc(tickSteps, func(s struct {
		upTo, step time.Duration
		layout     string
	}) bool {
		return span <= s.upTo
	})
	st := tickSteps[i]
	var out []TimelineTick
	for t := since.UTC().Truncate(st.step).Add(st.step); t.Before(until) && len(out) < 16; t = t.Add(st.step) {
		out = append(out, TimelineTick{X: x(t), Label: t.Format(st.layout)})
	}
	return out
}

// EntryKindText names a kind of entry for people.
func EntryKindText(k timeline.Kind) string {
	switch k {
	case timeline.KindOOM:
		return "OOM kill"
	case timeline.KindCrashLoop:
		return "crash loop"
	case timeline.KindPause:
		return "auto-sync"
	case timeline.KindOperate:
		return "action"
	}
	return string(k)
}

// TimelineRowOf is the table row of an entry.
func TimelineRowOf(e *timeline.Entry) TimelineRow {
	r := TimelineRow{ID: EntryID(e), Time: e.Time, Kind: EntryKindText(e.Kind), Message: e.Message, Ref: e.Ref,
		Revision: e.Revision, Count: e.Count, Last: e.Last}
	switch e.Kind {
	case timeline.KindDeploy:
		switch {
		case e.Ref == "":
			// The App's declared revision changed (From, To).
			r.Change = e.From + " → " + e.To
		case e.To != "":
			r.Change = "applied " + e.To
		default:
			r.Change = "deployed"
		}
		if u := DeployDiffURL(e); u != "" {
			r.Href, r.HrefLabel = u, "diff"
		}
	case timeline.KindRollback:
		r.Change = "rolled back"
	case timeline.KindWarning:
		r.Change = "warning"
	case timeline.KindOOM, timeline.KindCrashLoop:
		r.Change = e.To
	default:
		if e.From != "" {
			r.Change = e.From + " → " + e.To
		} else {
			r.Change = e.To
		}
	}
	r.Bad = e.Kind == timeline.KindOOM || e.Kind == timeline.KindCrashLoop || e.Kind == timeline.KindWarning ||
		e.Kind == timeline.KindHealth && e.To == "Degraded"
	return r
}

// sseConnect are the attributes that open the stream at url ("": none).
func sseConnect(url string) templ.Attributes {
	if url == "" {
		return templ.Attributes{}
	}
	return templ.Attributes{"hx-ext": "sse", "sse-connect": url}
}

// chartRefresh are the attributes that fetch the chart again (url) when
// an entry arrives on the stream, at most every 2s; none unless live.
func chartRefresh(url string, live bool) templ.Attributes {
	if !live {
		return templ.Attributes{}
	}
	return templ.Attributes{"hx-get": url, "hx-trigger": "sse:entry throttle:2s", "hx-select": "#tl-chart", "hx-swap": "outerHTML"}
}

// ariaCurrent is aria-current's value of a choice: "page" when on.
func ariaCurrent(on bool) string {
	if on {
		return "page"
	}
	return "false"
}
