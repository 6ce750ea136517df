package handlers

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"hash/fnv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// Formats of the audit export.
const (
	auditFormatJSON = "json"
	auditFormatCSV  = "csv"
)

// auditRequest is a parsed, validated audit query: the store's filter,
// the export format, the query as given (the page's form shows it back)
// and the version an HTMX poll already shows.
type auditRequest struct {
	filter audit.Filter
	format string
	query  templates.AuditQuery
	since  string
}

// parseAuditRequest validates the audit list's query parameters:
// actor, verb, env, app, namespace, cluster, outcome, since, until
// (RFC 3339, or 2006-01-02T15:04 and 2006-01-02 in UTC; a bare date as
// until is the end of that day), limit (1 to audit.MaxLimit), continue
// and format (json or csv). A pure function of the parameters.
func parseAuditRequest(v url.Values) (auditRequest, error) {
	var ar auditRequest
	q := &ar.query
	q.Actor, q.Verb, q.Env, q.App = strings.TrimSpace(v.Get("actor")), v.Get("verb"), strings.TrimSpace(v.Get("env")), strings.TrimSpace(v.Get("app"))
	q.Namespace, q.Cluster, q.Outcome = strings.TrimSpace(v.Get("namespace")), strings.TrimSpace(v.Get("cluster")), v.Get("outcome")
	q.Since, q.Until, q.Limit = strings.TrimSpace(v.Get("since")), strings.TrimSpace(v.Get("until")), v.Get("limit")
	for name, val := range map[string]string{"actor": q.Actor, "env": q.Env, "app": q.App, "namespace": q.Namespace, "cluster": q.Cluster} {
		if len(val) > audit.MaxFieldBytes {
			return ar, badRequest("%s: at most %d bytes", name, audit.MaxFieldBytes)
		}
	}
	f := &ar.filter
	f.Actor, f.Environment, f.App, f.Namespace, f.Cluster = q.Actor, q.Env, q.App, q.Namespace, q.Cluster
	if q.Verb != "" {
		if !audit.Verb(q.Verb).Valid() {
			return ar, badRequest("verb: %q is not one of %s", q.Verb, verbList())
		}
		f.Verb = audit.Verb(q.Verb)
	}
	if q.Outcome != "" {
		if !audit.Outcome(q.Outcome).Valid() {
			return ar, badRequest("outcome: %q is not one of succeeded, failed, refused", q.Outcome)
		}
		f.Outcome = audit.Outcome(q.Outcome)
	}
	var err error
	if f.Since, err = parseAuditTime("since", q.Since, false); err != nil {
		return ar, err
	}
	if f.Until, err = parseAuditTime("until", q.Until, true); err != nil {
		return ar, err
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && f.Until.Before(f.Since) {
		return ar, badRequest("until: %s is before since %s", q.Until, q.Since)
	}
	if q.Limit != "" {
		n, err := strconv.Atoi(q.Limit)
		if err != nil || n < 1 || n > audit.MaxLimit {
			return ar, badRequest("limit: %.40q is not between 1 and %d", q.Limit, audit.MaxLimit)
		}
		f.Limit = n
	}
	f.Continue = v.Get("continue")
	switch ar.format = v.Get("format"); ar.format {
	case "", auditFormatJSON, auditFormatCSV:
	default:
		return ar, badRequest("format: %.40q is not json or csv", ar.format)
	}
	ar.since = v.Get("version")
	return ar, nil
}

func verbList() string {
	var b strings.Builder
	for i, v := range audit.Verbs() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(v))
	}
	return b.String()
}

// parseAuditTime reads a time bound; a date alone as the end of a range
// is the last instant of that day.
func parseAuditTime(name, s string, end bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse("2006-01-02T15:04", s); err == nil {
		if end {
			t = t.Add(time.Minute - time.Nanosecond)
		}
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		if end {
			t = t.Add(24*time.Hour - time.Nanosecond)
		}
		return t, nil
	}
	return time.Time{}, badRequest("%s: %.40q is not a time (2026-12-01, 2026-12-01T10:00 or RFC 3339)", name, s)
}

// auditLog is the audit trail, or the answer that there is none.
func (s *Server) auditLog() (AuditLog, error) {
	if s.opts.Audit == nil {
		return nil, &httpError{Status: http.StatusServiceUnavailable, Reason: "NoAudit",
			Public: "the audit trail is not configured (deploy-web needs its namespace: --history-namespace or $POD_NAMESPACE)"}
	}
	return s.opts.Audit, nil
}

// listAudit reads one page of records; a continue token the store does
// not know is the client's mistake.
func listAudit(ctx context.Context, log AuditLog, f audit.Filter) (audit.Page, error) {
	p, err := log.List(ctx, f)
	if err != nil {
		if errors.Is(err, audit.ErrBadContinue) {
			return p, badRequest("continue: not a token this server issued; start from the first page")
		}
		return p, &httpError{Status: http.StatusBadGateway, Reason: "ClusterError", Public: "could not read the audit records from the cluster", Err: err}
	}
	if p.Records == nil {
		p.Records = []audit.Record{}
	}
	return p, nil
}

// apiAudit serves GET /v1/deploy/audit: one page of records across
// clusters and environments, newest first, as JSON or CSV.
func (s *Server) apiAudit(w http.ResponseWriter, r *http.Request) error {
	log, err := s.auditLog()
	if err != nil {
		return err
	}
	ar, err := parseAuditRequest(r.URL.Query())
	if err != nil {
		return err
	}
	if ar.format == auditFormatCSV && ar.filter.Limit == 0 {
		p, err := exportAudit(r.Context(), log, ar.filter, audit.MaxLimit, maxAuditExport)
		if err != nil {
			return err
		}
		return writeAuditCSV(w, p)
	}
	p, err := listAudit(r.Context(), log, ar.filter)
	if err != nil {
		return err
	}
	if ar.format == auditFormatCSV {
		return writeAuditCSV(w, p)
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// maxAuditExport bounds a CSV export without a limit: every record the
// filter selects, at most this many (the rest from the Audit-Continue
// token).
const maxAuditExport = 10_000

// exportAudit reads the records f selects in pages of pageSize, from f's
// continue token, up to most; Continue is set when more remain.
func exportAudit(ctx context.Context, log AuditLog, f audit.Filter, pageSize, most int) (audit.Page, error) {
	all := audit.Page{Records: []audit.Record{}}
	for {
		f.Limit = min(pageSize, most-len(all.Records))
		p, err := listAudit(ctx, log, f)
		if err != nil {
			return all, err
		}
		all.Records = append(all.Records, p.Records...)
		all.Continue = p.Continue
		if p.Continue == "" || len(all.Records) >= most {
			return all, nil
		}
		f.Continue = p.Continue
	}
}

// apiEnvHistory serves GET /v1/deploy/environments/{env}/history: the
// environment's records, newest first, paged (limit, continue). Records
// outlive the configuration, so an environment no longer configured
// still answers with its records.
func (s *Server) apiEnvHistory(w http.ResponseWriter, r *http.Request) error {
	log, err := s.auditLog()
	if err != nil {
		return err
	}
	q := r.URL.Query()
	ar, err := parseAuditRequest(url.Values{"limit": q["limit"], "continue": q["continue"]})
	if err != nil {
		return err
	}
	ar.filter.Environment = r.PathValue("env")
	p, err := listAudit(r.Context(), log, ar.filter)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// auditCSVHeader is the CSV export's header row.
var auditCSVHeader = []string{"id", "time", "duration", "actor_email", "actor_subject", "actor_groups", "verb", "cluster",
	"environment", "namespace", "app", "commit", "rendered_digest", "outcome", "message", "break_glass", "blockers", "objects", "chain_ok", "chain_prev", "chain_reason"}

// writeAuditCSV writes records as CSV, a header row first, every cell
// CSV-injection safe (csvCell); the token of the records after them, if
// any, is in the Audit-Continue header.
func writeAuditCSV(w http.ResponseWriter, p audit.Page) error {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	_ = cw.Write(auditCSVHeader)
	for _, rec := range p.Records {
		objs := make([]string, len(rec.Objects))
		for i, o := range rec.Objects {
			objs[i] = o.Kind + " " + o.Namespace + "/" + o.Name
		}
		chain := audit.Chain{}
		if rec.Chain != nil {
			chain = *rec.Chain
		}
		row := []string{rec.ID, rec.Time.UTC().Format(time.RFC3339Nano), time.Duration(rec.Duration).String(), rec.Actor.Email, rec.Actor.Subject,
			strings.Join(rec.Actor.Groups, ";"), string(rec.Verb), rec.Cluster, rec.Environment, rec.Namespace, rec.App, rec.Commit,
			rec.RenderedDigest, string(rec.Outcome), rec.Message, rec.BreakGlass, strings.Join(rec.Blockers, ";"), strings.Join(objs, ";"),
			strconv.FormatBool(chain.OK), chain.Prev, chain.Reason}
		for i := range row {
			row[i] = csvCell(row[i])
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="deploy-web-audit.csv"`)
	w.Header().Set("Cache-Control", "no-store")
	if p.Continue != "" {
		w.Header().Set("Audit-Continue", p.Continue)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	return nil
}

// csvCell makes a cell safe to open in a spreadsheet: one that starts
// with a character a spreadsheet reads as a formula (= + - @, or a tab or
// carriage return that hides one) is prefixed with a single quote, so it
// stays text (OWASP "CSV Injection").
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// auditPage serves GET /audit: the records across clusters and
// environments, filtered by the query (bookmarkable), paged server-side;
// an HTMX request gets the results fragment alone (the filters, and the
// first page's refresh, which is answered 204 while nothing changed).
func (s *Server) auditPage(w http.ResponseWriter, r *http.Request) error {
	ar, err := parseAuditRequest(r.URL.Query())
	if err != nil {
		return err
	}
	res := templates.AuditResultsProps{Query: ar.query, Continue: ar.filter.Continue != ""}
	if s.opts.Audit == nil {
		res.Error = "The audit trail is not configured: deploy-web needs its namespace (--history-namespace or $POD_NAMESPACE)."
	} else {
		p, err := listAudit(r.Context(), s.opts.Audit, ar.filter)
		if err != nil {
			return err
		}
		res.Records = p.Records
		version := auditVersion(p.Records)
		if isHTMX(r) && ar.since != "" && ar.since == version {
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
		base := ar.query.Values()
		if p.Continue != "" {
			next := ar.query.Values()
			next.Set("continue", p.Continue)
			res.NextURL = paths.Audit(next)
		}
		if ar.filter.Continue == "" {
			poll := ar.query.Values()
			poll.Set("version", version)
			res.PollURL = paths.Audit(poll)
		}
		res.FirstURL = paths.Audit(base)
		// CSV: every record the filters select (the page size left out);
		// JSON: this page.
		export := ar.query.Values()
		export.Del("limit")
		export.Set("format", auditFormatCSV)
		res.CSVURL = paths.APIAudit(export)
		export = ar.query.Values()
		if ar.filter.Continue != "" {
			export.Set("continue", ar.filter.Continue)
		}
		export.Set("format", auditFormatJSON)
		res.JSONURL = paths.APIAudit(export)
	}
	if isHTMX(r) {
		return s.render(w, r, http.StatusOK, templates.AuditResults(res))
	}
	return s.render(w, r, http.StatusOK, templates.Audit(templates.AuditProps{
		Layout: s.layout(r, "audit", "Audit"), Verbs: audit.Verbs(), Clusters: s.clusterNames(), Results: res,
	}))
}

// auditVersion identifies what a page of records shows (each record's id
// and chain verdict), so a refresh that would show the same is a 204.
func auditVersion(recs []audit.Record) string {
	h := fnv.New64a()
	for _, r := range recs {
		h.Write([]byte(r.ID))
		if r.Chain != nil && r.Chain.OK {
			h.Write([]byte{1})
		} else {
			h.Write([]byte{0})
		}
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

// historySection is the records of an environment's or an App's page
// (newest first, the first page only, with a link to the rest on
// /audit); without an audit trail, or on a read error, the section says
// so instead of failing the page.
func (s *Server) historySection(ctx context.Context, f audit.Filter) templates.AuditHistoryProps {
	q := url.Values{}
	for k, v := range map[string]string{"env": f.Environment, "namespace": f.Namespace, "app": f.App, "cluster": f.Cluster} {
		if v != "" {
			q.Set(k, v)
		}
	}
	h := templates.AuditHistoryProps{AllURL: paths.Audit(q)}
	if s.opts.Audit == nil {
		h.Error = "The audit trail is not configured."
		return h
	}
	f.Limit = historySectionLimit
	p, err := s.opts.Audit.List(ctx, f)
	if err != nil {
		s.log.Warn("audit records not read", "err", err)
		h.Error = "Could not read the audit records from the cluster."
		return h
	}
	h.Records, h.More = p.Records, p.Continue != ""
	return h
}

// appHistory is the History section of an App's page: its rollbacks
// and syncs.
func (s *Server) appHistory(ctx context.Context, cluster, namespace, name string) templates.AuditHistoryProps {
	return s.historySection(ctx, audit.Filter{Cluster: cluster, Namespace: namespace, App: name})
}

// envHistory is the History section of an environment's page.
func (s *Server) envHistory(ctx context.Context, env string) templates.AuditHistoryProps {
	h := s.historySection(ctx, audit.Filter{Environment: env})
	h.DiffURL = paths.EnvDiff(env, nil)
	return h
}

// historySectionLimit is how many records an environment's or App's page
// shows.
const historySectionLimit = 20
