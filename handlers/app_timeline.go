package handlers

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/hanzoai/deploy-web/timeline"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// timelineRange is one range of the Timeline tab (?range=).
type timelineRange struct {
	label string
	span  time.Duration
}

// timelineRanges are the Timeline tab's ranges (defaultTimelineRange when
// ?range= is absent).
var timelineRanges = [...]timelineRange{{"1h", time.Hour}, {"24h", 24 * time.Hour}, {"7d", 7 * 24 * time.Hour}, {"30d", 30 * 24 * time.Hour}}

const defaultTimelineRange = "24h"

// Bounds of the timeline's reads: the most entries a page or an API
// answer holds (an App holds at most timeline.DefaultPerApp), the longest
// range, and how long a read waits for the store to load.
const (
	maxTimelineEntries = timeline.DefaultPerApp
	maxTimelineSpan    = timeline.DefaultMaxAge
	timelineReadWait   = 10 * time.Second
)

// Bounds of the Timeline tab's live streams, per user and in all (each
// holds a subscription to the store).
const (
	timelineStreamsPerUser = 4
	timelineStreamsTotal   = 256
)

// timelineWindow decides the Timeline tab's window from ?range= at now.
func timelineWindow(rng string, now time.Time) (label string, since, until time.Time, err error) {
	if rng == "" {
		rng = defaultTimelineRange
	}
	for _, r := range timelineRanges {
		if r.label == rng {
			return r.label, now.Add(-r.span), now, nil
		}
	}
	return "", time.Time{}, time.Time{}, badRequest("range: %q is not one of 1h, 24h, 7d, 30d", trimForMessage(rng))
}

// apiTimelineWindow decides the API's window: ?since= and ?until= (RFC
// 3339 times; defaults the last 24 hours, and now), since before until,
// at most maxTimelineSpan apart.
func apiTimelineWindow(q url.Values, now time.Time) (since, until time.Time, err error) {
	until, since = now, now.Add(-24*time.Hour)
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"since", &since}, {"until", &until}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return since, until, badRequest("%s: %q is not an RFC 3339 time (2026-12-01T10:00:00Z)", p.name, trimForMessage(v))
		}
		*p.dst = t
	}
	if q.Get("since") == "" && q.Get("until") != "" {
		since = until.Add(-24 * time.Hour)
	}
	switch {
	case !since.Before(until):
		return since, until, badRequest("since must be before until")
	case until.Sub(since) > maxTimelineSpan:
		return since, until, badRequest("since and until are more than %d days apart: the timeline keeps %d days", int(maxTimelineSpan/(24*time.Hour)), int(maxTimelineSpan/(24*time.Hour)))
	}
	return since, until, nil
}

// inWindow returns the entries of all (oldest first) that overlap
// [since, until), newest first, at most maxTimelineEntries (the newest),
// and whether some were left out.
func inWindow(all []timeline.Entry, since, until time.Time) ([]timeline.Entry, bool) {
	var out []timeline.Entry
	for i := len(all) - 1; i >= 0; i-- {
		e := &all[i]
		if e.LastTime().Before(since) || !e.Time.Before(until) {
			continue
		}
		if len(out) == maxTimelineEntries {
			return out, true
		}
		out = append(out, *e)
	}
	return out, false
}

// timelineOf reads an App's held entries up to until, oldest first.
func (s *Server) timelineOf(ctx context.Context, a appRef, until time.Time) ([]timeline.Entry, error) {
	if s.opts.Timeline == nil {
		return nil, &httpError{Status: http.StatusNotFound, Reason: "NoTimeline", Public: "the timeline is off: deploy-web has no namespace of its own to keep it in (see docs/timeline.md)"}
	}
	ctx, cancel := context.WithTimeout(ctx, timelineReadWait)
	defer cancel()
	all, err := s.opts.Timeline.Query(ctx, timeline.App{Cluster: a.Cluster(), Namespace: a.Namespace, Name: a.Name}, time.Time{}, until)
	if err != nil {
		return nil, &httpError{Status: http.StatusServiceUnavailable, Reason: "TimelineLoading", Public: "the timeline is still loading: try again in a moment", Err: err}
	}
	return all, nil
}

// appTimeline serves GET /clusters/{cluster}/apps/{namespace}/{name}/timeline:
// the Timeline tab (?range=); with ?fragment=chart the chart alone.
func (s *Server) appTimeline(w http.ResponseWriter, r *http.Request) error {
	a, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	label, since, until, err := timelineWindow(q.Get("range"), s.opts.Now())
	if err != nil {
		return err
	}
	cl, ns, name := a.Cluster(), a.Namespace, a.Name
	p := templates.TimelineProps{Layout: s.layout(r, "apps", name+" timeline"), Cluster: cl, Multi: s.multiCluster(),
		Namespace: ns, Name: name, AppURL: paths.App(cl, ns, name), Since: since, Until: until}
	for _, rg := range timelineRanges {
		p.Ranges = append(p.Ranges, templates.TimelineRange{Label: rg.label, On: rg.label == label,
			URL: paths.AppTimeline(cl, ns, name, url.Values{"range": {rg.label}})})
	}
	if s.opts.Timeline == nil {
		p.Off = "The timeline is off: deploy-web has no namespace of its own to keep it in (--history-namespace or $POD_NAMESPACE)."
		return s.render(w, r, http.StatusOK, templates.TimelineView(p))
	}
	all, err := s.timelineOf(r.Context(), a, until)
	if err != nil {
		return err
	}
	row, _ := a.c.View.Row(ns, name)
	p.Chart = templates.BuildTimelineChart(all, since, until, templates.TimelineCurrent{Health: string(row.Health.Status), Sync: string(row.Sync.Status),
		Drifted: row.Sync.Drifted, RecordedSince: s.recordedSince(a, all)})
	spans, spansCut := s.timelineSpans(r.Context(), a, since, until)
	p.Chart.AddSpans(spans, since, until)
	p.ChartURL = paths.AppTimeline(cl, ns, name, url.Values{"range": {label}, "fragment": {"chart"}})
	p.StreamURL = paths.AppTimelineStream(cl, ns, name)
	if q.Get("fragment") == "chart" {
		return s.render(w, r, http.StatusOK, templates.TimelineChartView(p.Chart, p.ChartURL, true))
	}
	shown, truncated := inWindow(all, since, until)
	p.Truncated = truncated || spansCut
	for i := range shown {
		p.Rows = append(p.Rows, templates.TimelineRowOf(&shown[i]))
	}
	p.Rows = templates.MergeRows(p.Rows, templates.SpanRows(spans, since, until))
	return s.render(w, r, http.StatusOK, templates.TimelineView(p))
}

// timelineJSON is the API's answer: the App's entries in the window,
// oldest first (the time axis' order), and the freezes and auto-sync
// pauses covering it that overlap the window (Spans, oldest first;
// SpansTruncated when more did than are given).
type timelineJSON struct {
	App            timeline.App       `json:"app"`
	Since          time.Time          `json:"since"`
	Until          time.Time          `json:"until"`
	Entries        []timeline.Entry   `json:"entries"`
	Truncated      bool               `json:"truncated"`
	Spans          []timeline.Overlay `json:"spans"`
	SpansTruncated bool               `json:"spansTruncated"`
}

// apiTimeline serves GET /v1/deploy/{name}/timeline?since=&until=
// (and ?cluster=, ?namespace=).
func (s *Server) apiTimeline(w http.ResponseWriter, r *http.Request) error {
	a, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	since, until, err := apiTimelineWindow(r.URL.Query(), s.opts.Now())
	if err != nil {
		return err
	}
	all, err := s.timelineOf(r.Context(), a, until)
	if err != nil {
		return err
	}
	shown, truncated := inWindow(all, since, until)
	slices.Reverse(shown)
	out := timelineJSON{App: timeline.App{Cluster: a.Cluster(), Namespace: a.Namespace, Name: a.Name}, Since: since.UTC(), Until: until.UTC(),
		Entries: shown, Truncated: truncated}
	if out.Entries == nil {
		out.Entries = []timeline.Entry{}
	}
	out.Spans, out.SpansTruncated = s.timelineSpans(r.Context(), a, since, until)
	if out.Spans == nil {
		out.Spans = []timeline.Overlay{}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// appTimelineStream serves GET /clusters/{cluster}/apps/{namespace}/{name}/timeline/stream:
// the App's new entries as they are recorded, each an "entry" event
// holding its table row.
func (s *Server) appTimelineStream(w http.ResponseWriter, r *http.Request) error {
	a, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	if s.opts.Timeline == nil {
		return notFound("timeline")
	}
	sub, err := s.opts.Timeline.Subscribe(64)
	if err != nil {
		return &httpError{Status: http.StatusServiceUnavailable, Reason: "TooManyStreams", Public: "too many live timelines are open on this server: reload in a minute", Err: err}
	}
	defer sub.Close()
	app := timeline.App{Cluster: a.Cluster(), Namespace: a.Namespace, Name: a.Name}
	// A client that stops reading for 10s is dropped.
	st := openSSE(w, 4096, 10*time.Second)
	if err := st.flush(); err != nil {
		return nil
	}
	shutdown := s.shutdownCtx()
	heartbeat := time.NewTicker(15 * time.Second)
	defer heartbeat.Stop()
	var row bytes.Buffer
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-shutdown.Done():
			st.retry(time.Second)
			_ = st.flush()
			return nil
		case <-heartbeat.C:
			st.heartbeat()
		case e, ok := <-sub.C():
			if !ok {
				return nil
			}
			if e.App != app {
				continue
			}
			row.Reset()
			if err := templates.TimelineRowView(templates.TimelineRowOf(&e)).Render(r.Context(), &row); err != nil {
				return fmt.Errorf("handlers: render timeline row: %w", err)
			}
			writeEvent(st.Writer, "entry", "", row.Bytes())
		}
		if err := st.flush(); err != nil {
			return nil
		}
	}
}

// recordedSince is how far back the record of an App's states reaches:
// its oldest entry (entries are oldest first), or since when this console
// has watched it, whichever is older (zero when neither is known).
func (s *Server) recordedSince(a appRef, entries []timeline.Entry) time.Time {
	since := s.opts.Timeline.Coverage(timeline.App{Cluster: a.Cluster(), Namespace: a.Namespace, Name: a.Name})
	if len(entries) > 0 && (since.IsZero() || entries[0].Time.Before(since)) {
		since = entries[0].Time
	}
	return since
}
