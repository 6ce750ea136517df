package templates

import (
	"bytes"
	"context"
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/timeline"
	"github.com/hanzoai/deploy-web/web/paths"
)

// TestBuildTimelineChart lays out a day: bands start in the state the
// first entry left (before the range) or the current one, a Degraded band
// links to the nearest deploy or rollback before it (its diff, else its
// row), marks sit in their lanes, and entries outside the range leave no
// mark.
func TestBuildTimelineChart(t *testing.T) {
	until := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	since := until.Add(-24 * time.Hour)
	at := func(h float64) time.Time { return since.Add(time.Duration(h * float64(time.Hour))) }
	deploy := timeline.Entry{Time: at(4), Kind: timeline.KindDeploy, From: "s-0000000001", To: "prod", Ref: "s-0000000002"}
	rollback := timeline.Entry{Time: at(14), Kind: timeline.KindRollback, Ref: "r-0000000001"}
	entries := []timeline.Entry{
		{Time: at(-30), Kind: timeline.KindDeploy, Ref: "old"},
		{Time: at(2), Kind: timeline.KindHealth, From: "Healthy", To: "Degraded"},
		deploy,
		{Time: at(6), Kind: timeline.KindHealth, From: "Degraded", To: "Healthy"},
		{Time: at(12), Kind: timeline.KindHealth, From: "Healthy", To: "Degraded"},
		{Time: at(13), Kind: timeline.KindRestart, Ref: "p/c", From: "0", To: "1"},
		rollback,
		{Time: at(15), Kind: timeline.KindDrift, From: timeline.DriftClean, To: timeline.DriftDrifted},
		{Time: at(18), Kind: timeline.KindFreeze, To: "start"},
		{Time: at(20), Kind: timeline.KindFreeze, From: "start", To: "end"},
		{Time: at(25), Kind: timeline.KindWarning, Ref: "later"},
	}
	c := BuildTimelineChart(entries, since, until, TimelineCurrent{Health: "Progressing", Sync: "Synced"})
	// The freeze entries above (a record that named the App) draw no band:
	// freezes and pauses are the spans the handlers give.
	c.AddSpans([]timeline.Overlay{
		{Kind: timeline.OverlayFreeze, Start: at(17), End: at(19), Reason: "release", By: "alice@example.com", Scope: "env=prod", Ref: "fz-1"},
		{Kind: timeline.OverlayPause, Start: at(19), End: at(30), Reason: "incident", Scope: "prod", Ref: "prod"},
		{Kind: timeline.OverlayFreeze, Start: at(-10), End: at(-2), Reason: "before the range", Scope: "env=prod", Ref: "fz-0"},
	}, since, until)
	type band struct {
		Lane   int
		X0, X1 int
		Class  string
		Href   string
	}
	var bands []band
	for _, b := range c.Bands {
		bands = append(bands, band{b.Y / LaneHeight, int(b.X / ChartWidth * 24), int((b.X + b.W) / ChartWidth * 24), b.Class, b.Href})
	}
	diff := paths.EnvDiff("prod", url.Values{"from": {"s-0000000001"}, "to": {"s-0000000002"}})
	want := []band{
		{laneHealth, 0, 2, "tl-health-healthy", ""},
		{laneHealth, 2, 6, "tl-health-degraded", "#" + EntryID(&entries[0])}, // the deploy 30h before the range
		{laneHealth, 6, 12, "tl-health-healthy", ""},
		{laneHealth, 12, 24, "tl-health-degraded", diff},
		{laneSync, 0, 24, "tl-sync-synced", ""},
		{laneDrift, 15, 24, "tl-drift", ""},
		{laneFreeze, 17, 19, "tl-freeze", ""},
		{lanePause, 19, 24, "tl-pause", ""},
	}
	if d := cmp.Diff(want, bands); d != "" {
		t.Errorf("BuildTimelineChart() bands (lane, hours) mismatch (-want +got):\n%s", d)
	}
	type mark struct {
		Lane  int
		Hour  int
		Class string
		Href  string
	}
	var marks []mark
	for _, m := range c.Marks {
		marks = append(marks, mark{m.Y / LaneHeight, int(m.X / ChartWidth * 24), m.Class, m.Href})
	}
	wantMarks := []mark{
		{laneDeploy, 4, "tl-deploy", diff},
		{lanePods, 13, "tl-restart", "#" + EntryID(&entries[5])},
		{laneDeploy, 14, "tl-rollback", "#" + EntryID(&rollback)},
	}
	if d := cmp.Diff(wantMarks, marks); d != "" {
		t.Errorf("BuildTimelineChart() marks mismatch (-want +got):\n%s", d)
	}
	if len(c.Ticks) != 7 || c.Ticks[0].Label != "03:00" {
		t.Errorf("BuildTimelineChart() ticks = %+v, want 7 every 3h from 03:00", c.Ticks)
	}

	// A Degraded band with no deploy before it links nowhere; an App with
	// no entries shows its current state.
	c = BuildTimelineChart([]timeline.Entry{{Time: at(1), Kind: timeline.KindHealth, From: "Healthy", To: "Degraded"}}, since, until, TimelineCurrent{})
	if len(c.Bands) != 2 || c.Bands[1].Class != "tl-health-degraded" || c.Bands[1].Href != "" {
		t.Errorf("BuildTimelineChart(no deploy) bands = %+v, want a Degraded band without a link", c.Bands)
	}
	c = BuildTimelineChart(nil, since, until, TimelineCurrent{Health: "Healthy", Drifted: true})
	var classes []string
	for _, b := range c.Bands {
		classes = append(classes, b.Class)
	}
	if d := cmp.Diff([]string{"tl-health-healthy", "tl-drift"}, classes); d != "" {
		t.Errorf("BuildTimelineChart(nil) bands mismatch (-want +got):\n%s", d)
	}
}

// TestAppLiveTimelineLink: the app page links its Timeline tab when the
// timeline is on, and not when it is off.
func TestAppLiveTimelineLink(t *testing.T) {
	for _, tt := range []struct {
		url  string
		want bool
	}{{"/clusters/c/apps/ns/web/timeline", true}, {"", false}} {
		live := AppLive{Namespace: "ns", Name: "web", Now: time.Now(), PollURL: "/x", TimelineURL: tt.url}
		var b bytes.Buffer
		if err := AppLiveView(live).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(b.String(), `href="`+tt.url+`" data-testid="timeline-link"`)
		if tt.url == "" {
			got = strings.Contains(b.String(), `data-testid="timeline-link"`)
		}
		if got != tt.want {
			t.Errorf("AppLiveView(TimelineURL %q) has the Timeline link = %v, want %v", tt.url, got, tt.want)
		}
	}
}

// TestTimelineRowShowsFoldedEpisode: an entry that folded a crash loop's
// restarts shows its count and span in the row and the mark's title; one
// that happened once shows neither.
func TestTimelineRowShowsFoldedEpisode(t *testing.T) {
	first := time.Date(2026, 12, 2, 10, 2, 0, 0, time.UTC)
	tests := []struct {
		name      string
		e         timeline.Entry
		wantRow   []string
		wantTitle string
	}{
		{"folded", timeline.Entry{Time: first, Kind: timeline.KindRestart, Ref: "p/app", From: "0", To: "37", Count: 37, Last: first.Add(38 * time.Minute)},
			[]string{`data-testid="timeline-count">× 37<`, `data-testid="timeline-span">10:02–10:40<`}, "37 times, 10:02–10:40"},
		{"across midnight", timeline.Entry{Time: first.Add(13*time.Hour + 50*time.Minute), Kind: timeline.KindWarning, Ref: "x", Count: 4, Last: first.Add(14*time.Hour + 20*time.Minute)},
			[]string{`data-testid="timeline-span">Dec 2 23:52–Dec 3 00:22<`}, "4 times, Dec 2 23:52–Dec 3 00:22"},
		{"once", timeline.Entry{Time: first, Kind: timeline.KindRestart, Ref: "p/app", From: "0", To: "1", Count: 1}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := TimelineRowView(TimelineRowOf(&tt.e)).Render(context.Background(), &b); err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.wantRow {
				if !strings.Contains(b.String(), want) {
					t.Errorf("TimelineRowView(%s) = %s, want it to contain %s", tt.name, b.String(), want)
				}
			}
			if tt.wantRow == nil && strings.Contains(b.String(), "timeline-count") {
				t.Errorf("TimelineRowView(%s) = %s, want no count", tt.name, b.String())
			}
			if got := markTitle(&tt.e); tt.wantTitle != "" && !strings.Contains(got, tt.wantTitle) || tt.wantTitle == "" && strings.Contains(got, "times") {
				t.Errorf("markTitle(%s) = %q, want it to say %q", tt.name, got, tt.wantTitle)
			}
		})
	}
}

// TestBuildTimelineChartRecordedSince: before the record of an App
// reaches back (the console started watching it at hour 20), its state
// lanes draw no state but a "not recorded" band, and a transition seen
// later still starts its band where it happened.
func TestBuildTimelineChartRecordedSince(t *testing.T) {
	until := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	since := until.Add(-24 * time.Hour)
	at := func(h float64) time.Time { return since.Add(time.Duration(h * float64(time.Hour))) }
	entries := []timeline.Entry{{Time: at(22), Kind: timeline.KindHealth, From: "Healthy", To: "Degraded"}}
	type band struct {
		Lane   int
		X0, X1 int
		Class  string
	}
	for _, c := range []struct {
		name     string
		recorded time.Time
		want     []band
	}{
		{"unknown: from the range's start", time.Time{}, []band{
			{laneHealth, 0, 22, "tl-health-healthy"}, {laneHealth, 22, 24, "tl-health-degraded"}, {laneSync, 0, 24, "tl-sync-synced"}}},
		{"before the range: from the range's start", at(-5), []band{
			{laneHealth, 0, 22, "tl-health-healthy"}, {laneHealth, 22, 24, "tl-health-degraded"}, {laneSync, 0, 24, "tl-sync-synced"}}},
		{"watched since hour 20", at(20), []band{
			{laneHealth, 0, 20, "tl-unrecorded"}, {laneHealth, 20, 22, "tl-health-healthy"}, {laneHealth, 22, 24, "tl-health-degraded"},
			{laneSync, 0, 20, "tl-unrecorded"}, {laneSync, 20, 24, "tl-sync-synced"}, {laneDrift, 0, 20, "tl-unrecorded"}}},
		{"after the range: nothing known", at(30), []band{
			{laneHealth, 0, 24, "tl-unrecorded"}, {laneSync, 0, 24, "tl-unrecorded"}, {laneDrift, 0, 24, "tl-unrecorded"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch := BuildTimelineChart(entries, since, until, TimelineCurrent{Health: "Degraded", Sync: "Synced", RecordedSince: c.recorded})
			var got []band
			for _, b := range ch.Bands {
				got = append(got, band{b.Y / LaneHeight, int(math.Round(b.X / ChartWidth * 24)), int(math.Round((b.X + b.W) / ChartWidth * 24)), b.Class})
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("bands = %v, want %v", got, c.want)
			}
			if wantNote := c.recorded.After(since); !ch.RecordedSince.IsZero() != wantNote {
				t.Errorf("RecordedSince = %v, want set: %v", ch.RecordedSince, wantNote)
			}
		})
	}
}
