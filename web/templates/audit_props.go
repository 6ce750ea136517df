package templates

import (
	"net/url"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/web/paths"
)

// AuditQuery is the audit page's filters as given (the form shows them
// back; a bookmark holds them).
type AuditQuery struct {
	Actor, Verb, Env, App, Namespace, Cluster, Outcome string
	Since, Until, Limit                                string
}

// Values is the query string of q (empty filters left out).
func (q AuditQuery) Values() url.Values {
	v := url.Values{}
	for _, kv := range [][2]string{{"actor", q.Actor}, {"verb", q.Verb}, {"env", q.Env}, {"app", q.App},
		{"namespace", q.Namespace}, {"cluster", q.Cluster}, {"outcome", q.Outcome}, {"since", q.Since},
		{"until", q.Until}, {"limit", q.Limit}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	return v
}

// AuditProps is /audit.
type AuditProps struct {
	Layout LayoutProps
	// Verbs and Clusters are the filters' choices.
	Verbs    []audit.Verb
	Clusters []string
	Results  AuditResultsProps
}

// AuditResultsProps is the audit page's results fragment: one page of
// records, newest first.
type AuditResultsProps struct {
	Query   AuditQuery
	Records []audit.Record
	// Continue: this is not the first page.
	Continue bool
	// NextURL is the next page ("" on the last); FirstURL the first.
	NextURL, FirstURL string
	// PollURL refreshes the first page ("" on later pages: a page past
	// the first stays as it was read).
	PollURL string
	// CSVURL and JSONURL export this page with its filters.
	CSVURL, JSONURL string
	// Error replaces the results (no audit trail).
	Error string
}

// AuditHistoryProps is the History section of an environment's or an
// App's page: its newest records.
type AuditHistoryProps struct {
	Records []audit.Record
	// More: older records exist (on AllURL).
	More bool
	// AllURL is /audit filtered to this environment or App.
	AllURL string
	Error  string
	// DiffURL, on an environment's page, is its diff page: the section
	// then lets one pick two records (from, to) to compare, a plain GET
	// form.
	DiffURL string
	// Rollback, on an environment's page, are the records whose row
	// offers "Roll back to this" (the person may, the record qualifies):
	// the URL of each one's confirmation, by record id.
	Rollback map[string]string
}

// EnvRollbackProps is the confirmation of an environment's rollback to
// an apply record, or its result, in the History section's
// #env-rollback.
type EnvRollbackProps struct {
	Env string
	// To is the record's id; RecordCommit the commit it applied,
	// RecordTime and RecordBy when and by whom.
	To, RecordCommit string
	RecordTime       time.Time
	RecordBy         string
	// Kind is "confirm", "success" or "error".
	Kind string
	// Through says what the write will do (confirm).
	Through string
	CSRF    string
	Freeze  BreakGlassProps
	// Git is the commit and the run (success).
	Git   *GitAction
	Error string
}

// auditBroken reports whether a record's chain is broken (edited, next to
// a deleted record, or unreadable).
func auditBroken(r audit.Record) bool { return r.Chain == nil || !r.Chain.OK }

func auditChainReason(r audit.Record) string {
	if r.Chain == nil {
		return "the record's chain was not verified"
	}
	return "chain broken: " + r.Chain.Reason
}

// auditWho is the actor as a row shows it: the email, else the subject.
func auditWho(a audit.Actor) string {
	if a.Email != "" {
		return a.Email
	}
	return orDash(a.Subject)
}

// auditTarget is what a record acted on: the environment, or the App
// (namespace/name).
func auditTarget(r audit.Record) string {
	if r.Environment != "" {
		return r.Environment
	}
	if r.Namespace != "" {
		return r.Namespace + "/" + r.App
	}
	return r.App
}

// auditTargetURL links a record's target: the environment's page, or the
// App's page when the record names its namespace.
func auditTargetURL(r audit.Record) string {
	switch {
	case r.Environment != "":
		return paths.Env(r.Environment)
	case r.Namespace != "" && r.App != "" && r.Cluster != "":
		return paths.App(r.Cluster, r.Namespace, r.App)
	}
	return ""
}

func auditDuration(d audit.Duration) string {
	return time.Duration(d).Round(time.Millisecond).String()
}

// verbOption is one choice of the verb filter: the verb and its label.
type verbOption struct{ Value, Label string }

func verbOptions(vs []audit.Verb) []verbOption {
	out := make([]verbOption, len(vs))
	for i, v := range vs {
		out[i] = verbOption{Value: string(v), Label: v.Label()}
	}
	return out
}

// auditHistoryCount is the History section's count: the records shown,
// "+" when older ones exist ("" when they could not be read).
func auditHistoryCount(h AuditHistoryProps) string {
	if h.Error != "" {
		return ""
	}
	return countOf(len(h.Records), h.More)
}
