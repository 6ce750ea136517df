package handlers

import (
	"context"
	"net/http"
	"net/url"
	"slices"

	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/timeline"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// activityPageSize is the feed's page.
const activityPageSize = 50

// maxActivityField bounds a filter's value (a name: 253 bytes).
const maxActivityField = 253

// parseActivity decides the feed's filter from the URL: cluster (one of
// clusters), namespace, app and kind (one of timeline.Kinds), and the
// continue token of the page. A mistake is a 400 that says what to give.
func parseActivity(q url.Values, clusters []string) (templates.ActivityQuery, timeline.Filter, error) {
	aq := templates.ActivityQuery{Cluster: q.Get("cluster"), Namespace: q.Get("namespace"), App: q.Get("app"), Kind: q.Get("kind")}
	f := timeline.Filter{Cluster: aq.Cluster, Namespace: aq.Namespace, App: aq.App, Limit: activityPageSize, Continue: q.Get("continue")}
	for _, v := range []struct{ name, value string }{{"cluster", aq.Cluster}, {"namespace", aq.Namespace}, {"app", aq.App}} {
		if len(v.value) > maxActivityField {
			return aq, f, badRequest("%s: longer than %d bytes", v.name, maxActivityField)
		}
	}
	if aq.Cluster != "" && !slices.Contains(clusters, aq.Cluster) {
		return aq, f, badRequest("cluster: %q is not a configured cluster", trimForMessage(aq.Cluster))
	}
	if aq.Kind != "" {
		k := timeline.Kind(aq.Kind)
		if !k.Valid() {
			return aq, f, badRequest("kind: %q is not one of %v", trimForMessage(aq.Kind), timeline.Kinds())
		}
		f.Kinds = []timeline.Kind{k}
	}
	return aq, f, nil
}

// visibleApps is the feed's filter of what the person may see: nil for one
// who may view every App, else Allow(View) per App.
func (s *Server) visibleApps(ctx context.Context) func(timeline.App) bool {
	g := s.grantsOf(ctx)
	if g.Allow(roles.View, roles.Target{}).Allowed {
		return nil
	}
	return func(a timeline.App) bool {
		return g.Allow(roles.View, roles.Target{Cluster: a.Cluster, Environment: s.appEnv(a.Cluster, a.Namespace), Namespace: a.Namespace, App: a.Name}).Allowed
	}
}

// activityPage serves GET /activity: the fleet's timeline entries, newest
// first, filtered (?cluster=, ?namespace=, ?app=, ?kind=) and paged
// (?continue=) on the server, only of the Apps the person may view.
func (s *Server) activityPage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	aq, f, err := parseActivity(q, s.clusterNames())
	if err != nil {
		return err
	}
	p := templates.ActivityProps{Layout: s.layout(r, "activity", "Activity"), Query: aq, Clusters: s.clusterNames()}
	seen := map[string]bool{}
	for _, c := range s.clusters {
		for _, ns := range c.View.Namespaces() {
			if !seen[ns] {
				seen[ns] = true
				p.Namespaces = append(p.Namespaces, ns)
			}
		}
	}
	slices.Sort(p.Namespaces)
	for _, k := range timeline.Kinds() {
		p.Kinds = append(p.Kinds, string(k))
	}
	if s.opts.Timeline == nil {
		p.Off = "The activity feed is off: deploy-web has no namespace of its own to keep the timeline in (--history-namespace or $POD_NAMESPACE)."
		return s.render(w, r, http.StatusOK, templates.ActivityView(p))
	}
	f.Visible = s.visibleApps(r.Context())
	ctx, cancel := context.WithTimeout(r.Context(), timelineReadWait)
	defer cancel()
	page, err := s.opts.Timeline.Fleet(ctx, f)
	switch {
	case err != nil && f.Continue != "" && ctx.Err() == nil:
		return badRequest("continue: not a token of this feed: start again from the newest")
	case err != nil:
		return &httpError{Status: http.StatusServiceUnavailable, Reason: "TimelineLoading", Public: "the timeline is still loading: try again in a moment", Err: err}
	}
	for i := range page.Entries {
		e := &page.Entries[i]
		p.Rows = append(p.Rows, templates.ActivityRow{App: e.App, Row: templates.TimelineRowOf(e),
			TimelineURL: paths.AppTimeline(e.App.Cluster, e.App.Namespace, e.App.Name, nil)})
	}
	base := url.Values{}
	for k, v := range map[string]string{"cluster": aq.Cluster, "namespace": aq.Namespace, "app": aq.App, "kind": aq.Kind} {
		if v != "" {
			base.Set(k, v)
		}
	}
	if f.Continue != "" {
		p.FirstURL = paths.Activity(base)
	}
	if page.Continue != "" {
		next := url.Values{}
		for k, v := range base {
			next[k] = v
		}
		next.Set("continue", page.Continue)
		p.NextURL = paths.Activity(next)
	}
	return s.render(w, r, http.StatusOK, templates.ActivityView(p))
}
