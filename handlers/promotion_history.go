package handlers

import (
	"context"
	"time"

	"github.com/hanzoai/deploy-web/gitops"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/timeline"
)

// soakHistory is the promotion's soak gate's seam over the timeline: the
// record of App app in the source column col over the soak window
// [since, now] (cur its cell now). No timeline (Options.Timeline nil):
// not configured, and the gate cannot pass.
func (s *Server) soakHistory(ctx context.Context, col gitops.Column, app string, cur gitops.Cell, since, now time.Time) gitops.History {
	if s.opts.Timeline == nil {
		return gitops.History{}
	}
	a := timeline.App{Cluster: col.Cluster, Namespace: col.Namespace, Name: app}
	ctx, cancel := context.WithTimeout(ctx, timelineReadWait)
	defer cancel()
	// Every entry held up to now: the one before since says the state
	// the window starts in.
	entries, err := s.opts.Timeline.Query(ctx, a, time.Time{}, now)
	if err != nil {
		s.log.Warn("promotion: the source's timeline is unreadable: the soak gate fails", "app", a.String(), "err", err)
		return gitops.History{Configured: true, Err: err}
	}
	return gitops.History{Configured: true, CoveredSince: s.opts.Timeline.Coverage(a), Unsettled: unsettled(entries, cur, since, now)}
}

// unsettled are the spans of [since, now) in which an App, by its
// timeline entries, was not Healthy (a folded flap through a state other
// than Healthy included) or was drifted; cur is its cell now, the state
// held where no entry says otherwise.
func unsettled(entries []timeline.Entry, cur gitops.Cell, since, now time.Time) []gitops.Interval {
	healthy := string(objrules.HealthHealthy)
	var out []gitops.Interval
	for _, sp := range timeline.Spans(entries, timeline.KindHealth, string(cur.Health.Status), since, now) {
		switch {
		case sp.Flapped != "" && (sp.State != healthy || sp.Flapped != healthy):
			out = append(out, gitops.Interval{From: sp.From, To: sp.To, State: "flapping " + sp.Flapped + "/" + sp.State})
		case sp.Flapped == "" && sp.State != healthy:
			out = append(out, gitops.Interval{From: sp.From, To: sp.To, State: sp.State})
		}
	}
	drift := timeline.DriftClean
	if cur.Drift > 0 {
		drift = timeline.DriftDrifted
	}
	for _, sp := range timeline.Spans(entries, timeline.KindDrift, drift, since, now) {
		if sp.State == timeline.DriftDrifted || sp.Flapped == timeline.DriftDrifted {
			out = append(out, gitops.Interval{From: sp.From, To: sp.To, State: timeline.DriftDrifted})
		}
	}
	return out
}
