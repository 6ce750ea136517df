package handlers

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/insights"
	"github.com/hanzoai/deploy-web/timeline"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// insightsRequest is a parsed query of the delivery metrics.
type insightsRequest struct {
	env, app string
	window   insights.Window
	// csv: the page's ?format=csv.
	csv bool
}

// insightsParams are the query parameters the metrics take; format is
// the page's only (?format=csv).
var insightsParams = []string{"env", "app", "since"}

// reasonInvalidQuery is the reason of a 400 for a query of the metrics
// they cannot answer (an *insights.QueryError).
const reasonInvalidQuery = "InvalidQuery"

// parseInsights decides the selection from the URL, strictly: only env
// (a configured environment), app (an App's name), since (a window) and,
// on the page, format=csv; each at most once. Anything else is an
// *insights.QueryError naming the parameter.
func parseInsights(q url.Values, envs []string, page bool) (insightsRequest, error) {
	bad := func(field, format string, args ...any) error {
		return &insights.QueryError{Field: field, Public: field + ": " + fmt.Sprintf(format, args...)}
	}
	allowed := insightsParams
	if page {
		allowed = append(slices.Clone(allowed), "format")
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return insightsRequest{}, bad(trimForMessage(k), "not a parameter of the metrics: give %v", allowed)
		}
		if len(q[k]) > 1 {
			return insightsRequest{}, bad(k, "given %d times: give it once", len(q[k]))
		}
	}
	req := insightsRequest{env: q.Get("env"), app: q.Get("app")}
	if req.env != "" && !slices.Contains(envs, req.env) {
		return req, bad("env", "%q is not a configured environment", trimForMessage(req.env))
	}
	if req.app != "" && len(validation.IsDNS1123Subdomain(req.app)) > 0 {
		return req, bad("app", "%q is not an App's name (a DNS subdomain of at most 253 characters)", trimForMessage(req.app))
	}
	w, err := insights.ParseWindow(q.Get("since"))
	if err != nil {
		return req, err
	}
	req.window = w
	switch f := q.Get("format"); f {
	case "":
	case "csv":
		req.csv = true
	default:
		return req, bad("format", "%q is not a format: give csv, or nothing for the page", trimForMessage(f))
	}
	return req, nil
}

// insightsError is the 400 of a query the metrics cannot answer.
func insightsError(err error) error {
	var qe *insights.QueryError
	if errors.As(err, &qe) {
		return &httpError{Status: http.StatusBadRequest, Reason: reasonInvalidQuery, Public: qe.Public}
	}
	return err
}

// insightsReadWait bounds the reads of one report (the records' pages and
// the timeline's).
const insightsReadWait = 20 * time.Second

// insightsReport reads the records and health entries of req (each read
// bounded: insights.MaxRecords, insights.MaxEntries) and computes the
// report, of the Apps the person may view only. notes say what the
// numbers could not include.
func (s *Server) insightsReport(ctx context.Context, req insightsRequest) (rep insights.Report, notes []string, err error) {
	ctx, cancel := context.WithTimeout(ctx, insightsReadWait)
	defer cancel()
	now := s.opts.Now().UTC()
	in := insights.Input{Now: now, Window: req.window, Environment: req.env, App: req.app,
		IsApp: s.isAppResource, EnvOf: func(a timeline.App) string { return s.appEnv(a.Cluster, a.Namespace) },
		SourceOf: s.promotedFrom, Visible: s.visibleApps(ctx)}
	if s.opts.Audit == nil {
		notes = append(notes, "The audit trail is off (deploy-web has no namespace of its own): no deployments to count.")
	} else {
		f := audit.Filter{Since: insights.ReadSince(now, req.window), Until: now, Limit: audit.MaxLimit}
		recs, cut, err := readPaged(insights.MaxRecords, func(cont string) ([]audit.Record, string, error) {
			f.Continue = cont
			p, err := s.opts.Audit.List(ctx, f)
			return p.Records, p.Continue, err
		})
		if err != nil {
			return rep, nil, &httpError{Status: http.StatusServiceUnavailable, Reason: "AuditUnavailable", Public: "the audit records could not be read: try again in a moment", Err: err}
		}
		in.Records, in.Truncated = recs, cut
	}
	if s.opts.Timeline == nil {
		notes = append(notes, "The timeline is off: no health changes, so no failures by Degraded and no time to restore.")
	} else {
		f := timeline.Filter{App: req.app, Kinds: []timeline.Kind{timeline.KindHealth}, Since: now.Add(-req.window.Duration()), Until: now,
			Limit: timeline.MaxLimit, Visible: in.Visible}
		if req.env != "" {
			t := s.envTarget(req.env)
			f.Cluster, f.Namespace = t.Cluster, t.Namespace
		}
		entries, cut, err := readPaged(insights.MaxEntries, func(cont string) ([]timeline.Entry, string, error) {
			f.Continue = cont
			p, err := s.opts.Timeline.Fleet(ctx, f)
			return p.Entries, p.Continue, err
		})
		if err != nil {
			return rep, nil, &httpError{Status: http.StatusServiceUnavailable, Reason: "TimelineLoading", Public: "the timeline is still loading: try again in a moment", Err: err}
		}
		in.Health, in.Truncated = entries, in.Truncated || cut
	}
	rep = insights.Compute(in)
	if rep.Truncated {
		notes = append(notes, fmt.Sprintf("More than %d records or %d health changes in this window: the oldest were not read. Narrow it to an environment or an App.",
			insights.MaxRecords, insights.MaxEntries))
	}
	return rep, notes, nil
}

// readPaged reads pages (next(continue) returns a page and the next
// token, "" on the last) until the last page or at least limit items:
// truncated says it stopped with more to read.
func readPaged[T any](limit int, next func(cont string) ([]T, string, error)) (out []T, truncated bool, err error) {
	cont := ""
	for {
		items, more, err := next(cont)
		if err != nil {
			return nil, false, err
		}
		out = append(out, items...)
		if more == "" {
			return out, false, nil
		}
		if len(out) >= limit {
			return out, true, nil
		}
		cont = more
	}
}

// isAppResource says whether group/kind is cluster's App resource (the
// Apps of an environment's apply record).
func (s *Server) isAppResource(cluster, group, kind string) bool {
	c := s.cluster(cluster)
	if c == nil && !s.multiCluster() {
		c = s.clusters[0]
	}
	return c != nil && c.AppGroup == group && c.AppKind == kind
}

// promotedFrom is the environment env takes promotions from ("" when
// none, or no environments are configured).
func (s *Server) promotedFrom(env string) string {
	if s.opts.Environments == nil {
		return ""
	}
	e, err := s.opts.Environments.Config().Env(env)
	if err != nil {
		return ""
	}
	return e.PromotedFrom()
}

// environmentNames are the configured environments, in the file's order.
func (s *Server) environmentNames() []string {
	if s.opts.Environments == nil {
		return nil
	}
	var out []string
	for _, e := range s.opts.Environments.Config().Environments {
		out = append(out, e.Name)
	}
	return out
}

// apiInsights serves GET /v1/deploy/insights: the delivery metrics of
// ?env=, ?app= and ?since= (7d, 30d, 90d) as JSON.
func (s *Server) apiInsights(w http.ResponseWriter, r *http.Request) error {
	req, err := parseInsights(r.URL.Query(), s.environmentNames(), false)
	if err != nil {
		return insightsError(err)
	}
	rep, notes, err := s.insightsReport(r.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		insights.Report
		Notes []string `json:"notes"`
	}{rep, append([]string{}, notes...)})
	return nil
}

// insightsPage serves GET /insights: the page, its results alone for the
// filters (HTMX), or with ?format=csv the table as CSV.
func (s *Server) insightsPage(w http.ResponseWriter, r *http.Request) error {
	envs := s.environmentNames()
	req, err := parseInsights(r.URL.Query(), envs, true)
	if err != nil {
		return insightsError(err)
	}
	rep, notes, err := s.insightsReport(r.Context(), req)
	if err != nil {
		return err
	}
	if req.csv {
		return writeInsightsCSV(w, rep)
	}
	q := insightsQuery(req)
	res := templates.InsightsResultsProps{Query: templates.InsightsQuery{Env: req.env, App: req.app, Since: string(req.window)},
		CSVURL: paths.Insights(withParam(q, "format", "csv")), APIURL: paths.APIInsights(q),
		Charts: templates.InsightsChartsOf(rep), Rows: templates.InsightsRowsOf(rep), Notes: notes, Since: rep.Since, Until: rep.Until}
	p := templates.InsightsProps{Layout: s.layout(r, "insights", "Insights"), Environments: envs}
	for _, win := range insights.Windows() {
		p.Windows = append(p.Windows, string(win))
		res.WindowLinks = append(res.WindowLinks, templates.InsightsLink{Label: string(win), Active: win == req.window,
			URL: paths.Insights(withParam(q, "since", string(win)))})
	}
	p.Results = res
	if isHTMX(r) {
		return s.render(w, r, http.StatusOK, templates.InsightsResults(res))
	}
	return s.render(w, r, http.StatusOK, templates.InsightsView(p))
}

// insightsQuery is req as a query (the window always, the others when
// set), for the page's links.
func insightsQuery(req insightsRequest) url.Values {
	q := url.Values{"since": {string(req.window)}}
	if req.env != "" {
		q.Set("env", req.env)
	}
	if req.app != "" {
		q.Set("app", req.app)
	}
	return q
}

// withParam is a copy of q with key set to value.
func withParam(q url.Values, key, value string) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = slices.Clone(v)
	}
	out.Set(key, value)
	return out
}

// insightsCSVHeader names the CSV's columns: the row, then the numbers of
// the four metrics.
var insightsCSVHeader = []string{"environment", "cluster", "namespace", "app",
	"deployments", "deployments_per_day",
	"lead_time_count", "lead_time_median_seconds", "lead_time_p90_seconds",
	"change_failures", "change_failure_rate",
	"restores", "time_to_restore_median_seconds", "time_to_restore_p90_seconds", "unrestored"}

// writeInsightsCSV answers rep's rows as CSV (an environment's own row
// has an empty app), every text cell through csvCell.
func writeInsightsCSV(w http.ResponseWriter, rep insights.Report) error {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	_ = cw.Write(insightsCSVHeader)
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, r := range rep.Rows {
		m := r.Metrics
		_ = cw.Write([]string{csvCell(r.Environment), csvCell(r.Cluster), csvCell(r.Namespace), csvCell(r.App),
			strconv.Itoa(m.DeploymentFrequency.Deployments), num(m.DeploymentFrequency.PerDay),
			strconv.Itoa(m.LeadTime.Count), num(m.LeadTime.MedianSeconds), num(m.LeadTime.P90Seconds),
			strconv.Itoa(m.ChangeFailureRate.Failures), num(m.ChangeFailureRate.Rate),
			strconv.Itoa(m.TimeToRestore.Count), num(m.TimeToRestore.MedianSeconds), num(m.TimeToRestore.P90Seconds),
			strconv.Itoa(m.TimeToRestore.Unrestored)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("handlers: insights csv: %w", err)
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="deploy-web-insights.csv"`)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	return nil
}
