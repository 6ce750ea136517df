package templates

import (
	"slices"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/timeline"
)

// The Timeline tab's overlays: freezes and auto-sync pauses that cover an
// App are not timeline entries (a freeze of an environment names no App,
// and writing one entry per App it covers would cost a write per App);
// package timeline/overlays works them out when a timeline is drawn, as
// spans (timeline.Overlay), and the chart draws them as bands of their own
// lanes, the table as rows of their starts and ends.

// spanLane is the chart lane of a kind of span.
func spanLane(kind string) int {
	if kind == timeline.OverlayPause {
		return lanePause
	}
	return laneFreeze
}

// spanText is a span's kind and what it says, for a band's title and
// (without the ticket, which the row links) a row.
func spanText(s *timeline.Overlay, ticket bool) string {
	var b strings.Builder
	if s.Kind == timeline.OverlayPause {
		b.WriteString("auto-sync of " + s.Scope + " paused")
	} else {
		b.WriteString("frozen (" + s.Scope + ")")
	}
	if s.By != "" {
		b.WriteString(" by " + s.By)
	}
	b.WriteString(": " + s.Reason)
	if ticket && s.Ticket != "" {
		b.WriteString(" · " + s.Ticket)
	}
	return b.String()
}

// AddSpans draws spans over [since, until) as bands of the freeze and
// pause lanes, each titled with its times, reason, author and ticket.
func (c *TimelineChart) AddSpans(spans []timeline.Overlay, since, until time.Time) {
	if !until.After(since) {
		return
	}
	x := chartX(since, until)
	for i := range spans {
		s := &spans[i]
		if !s.End.After(since) || !s.Start.Before(until) {
			continue
		}
		x0, x1 := x(s.Start), x(s.End)
		title := s.Start.UTC().Format("2006-01-02 15:04") + "–" + s.End.UTC().Format("2006-01-02 15:04") + " UTC · " + spanText(s, true)
		c.Bands = append(c.Bands, TimelineBand{Y: spanLane(s.Kind) * LaneHeight, X: x0, W: max(x1-x0, 2), Class: "tl-" + s.Kind, Title: title})
	}
	sortBands(c.Bands)
}

// SpanRows are the table rows of spans: one at each start and end that
// falls in [since, until).
func SpanRows(spans []timeline.Overlay, since, until time.Time) []TimelineRow {
	var out []TimelineRow
	in := func(t time.Time) bool { return !t.Before(since) && t.Before(until) }
	for i := range spans {
		s := &spans[i]
		kind, start, end := "freeze", "start", "end"
		if s.Kind == timeline.OverlayPause {
			kind, start, end = EntryKindText("pause"), "paused", "resumed"
		}
		if !s.Ended && s.Kind == timeline.OverlayPause {
			end = "pause ended"
		}
		row := func(t time.Time, change string) TimelineRow {
			r := TimelineRow{ID: "tl-" + s.Kind + "-" + change + "-" + itoa(int(t.Unix())), Time: t, Kind: kind, Change: change,
				Message: spanText(s, false), Ref: s.Ref}
			if s.Ticket != "" {
				r.Href, r.HrefLabel = s.Ticket, "ticket"
			}
			return r
		}
		if in(s.Start) {
			out = append(out, row(s.Start, start))
		}
		if in(s.End) {
			out = append(out, row(s.End, end))
		}
	}
	return out
}

// MergeRows merges two lists of rows newest first into one, newest first.
func MergeRows(a, b []TimelineRow) []TimelineRow {
	out := append(slices.Clone(a), b...)
	slices.SortStableFunc(out, func(x, y TimelineRow) int { return y.Time.Compare(x.Time) })
	return out
}
