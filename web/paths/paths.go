// Package paths is the one place that builds deploy-web's URLs: one
// function per page, fragment, stream and API route of the route table
// (handlers/routes.go). Every variable segment is escaped, so a name with a
// slash, a percent sign, a space or a dot segment stays one segment and
// round-trips through the router; handlers (redirects, stream URLs, links
// in props) and templates both build their URLs here.
//
// A segment must not be empty (Kubernetes names, environment names and
// run ids never are).
package paths

import (
	"net/url"
	"strings"
)

// seg escapes one path segment. url.PathEscape leaves "." and ".." as they
// are, which a router (and a browser) would resolve as dot segments; they
// are written with escaped dots so they stay data.
func seg(s string) string {
	switch s {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return url.PathEscape(s)
}

// join builds an absolute path from literal parts and escaped segments:
// the arguments alternate, a literal (already a path) first, then a
// segment, and so on: join("/apps/", ns, "/", name).
func join(parts ...string) string {
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 {
			b.WriteString(seg(p))
		} else {
			b.WriteString(p)
		}
	}
	return b.String()
}

// WithQuery appends q to path, nothing when q is empty.
func WithQuery(path string, q url.Values) string {
	if e := q.Encode(); e != "" {
		return path + "?" + e
	}
	return path
}

// Fleet is the application list (the home page) with its query.
func Fleet(q url.Values) string { return WithQuery("/", q) }

// FleetNamespace is the application list filtered to one namespace (of
// one cluster when cluster is not "").
func FleetNamespace(cluster, ns string) string {
	q := url.Values{"namespace": {ns}}
	if cluster != "" {
		q.Set("cluster", cluster)
	}
	return Fleet(q)
}

// FleetCluster is the application list filtered to one cluster.
func FleetCluster(cluster string) string { return Fleet(url.Values{"cluster": {cluster}}) }

// App is an App's page: /clusters/{cluster}/apps/{namespace}/{name}.
func App(cluster, ns, name string) string {
	return join("/clusters/", cluster, "/apps/", ns, "/", name)
}

// AppResource is the app page with a resource's panel open.
func AppResource(cluster, ns, name, ref string) string {
	return App(cluster, ns, name) + join("/resource/", ref)
}

// AppResourceAction is a day-2 action on an object of an App's tree
// (restart, scale, ...): GET is its confirmation, POST the action (form).
func AppResourceAction(cluster, ns, name, ref, action string) string {
	return AppResource(cluster, ns, name, ref) + join("/actions/", action)
}

// AppLogs is an App's log viewer.
func AppLogs(cluster, ns, name string) string { return App(cluster, ns, name) + "/logs" }

// AppLogsStream is the log viewer's live stream (server-sent events).
func AppLogsStream(cluster, ns, name string) string { return AppLogs(cluster, ns, name) + "/stream" }

// AppRollback is the rollback confirmation (GET) and the rollback (POST).
func AppRollback(cluster, ns, name string) string { return App(cluster, ns, name) + "/rollback" }

// AppSync is the sync request (POST).
func AppSync(cluster, ns, name string) string { return App(cluster, ns, name) + "/sync" }

// AppActionsClear is the empty actions area (a confirmation's Cancel).
func AppActionsClear(cluster, ns, name string) string {
	return App(cluster, ns, name) + "/actions/clear"
}

// LegacyApp is the single-cluster app path, /apps/{namespace}/{name}
// (plus rest, a path under it, already escaped), which the server
// redirects to App. Only the redirect and its tests build it.
func LegacyApp(ns, name, rest string) string { return join("/apps/", ns, "/", name) + rest }

// Environments is the list of plan/apply environments.
func Environments() string { return "/environments" }

// Me is the signed-in person's page: their roles and where each comes from.
func Me() string { return "/me" }

// Env is an environment's page.
func Env(env string) string { return join("/environments/", env) }

// EnvGitOps is the GitOps panel of an environment page (an HTMX
// fragment: source, branch head, commit live, write-back, auto-sync).
func EnvGitOps(env string) string { return Env(env) + "/gitops" }

// EnvPause pauses an environment's auto-sync (POST, the page's form).
func EnvPause(env string) string { return Env(env) + "/pause" }

// EnvResume resumes an environment's auto-sync (POST, the page's form).
func EnvResume(env string) string { return Env(env) + "/resume" }

// EnvRollback is an environment's rollback to an apply record: its
// confirmation (GET, ?to=<record id>: EnvRollbackTo) and the page's form
// (POST).
func EnvRollback(env string) string { return Env(env) + "/rollback" }

// EnvRollbackTo is the confirmation of a rollback of env to record id.
func EnvRollbackTo(env, id string) string {
	return WithQuery(EnvRollback(env), url.Values{"to": {id}})
}

// APIEnvironment is one environment's GitOps state as JSON.
func APIEnvironment(env string) string { return join("/v1/deploy/environments/", env) }

// APIEnvPause pauses (POST) or resumes (DELETE) an environment's
// auto-sync.
func APIEnvPause(env string) string { return APIEnvironment(env) + "/pause" }

// APIEnvRollback rolls an environment back to an apply record (POST).
func APIEnvRollback(env string) string { return APIEnvironment(env) + "/rollback" }

// EnvPlan starts a plan (POST).
func EnvPlan(env string) string { return Env(env) + "/plan" }

// EnvApply starts an apply (POST).
func EnvApply(env string) string { return Env(env) + "/apply" }

// EnvRun is a run's page.
func EnvRun(env, id string) string { return Env(env) + join("/runs/", id) }

// EnvRunStream is a run's progress stream (server-sent events).
func EnvRunStream(env, id string) string { return EnvRun(env, id) + "/stream" }

// EnvReport is a stored report's page.
func EnvReport(env, id string) string { return Env(env) + join("/reports/", id) }

// EnvReportJSON is a stored report as a JSON download.
func EnvReportJSON(env, id string) string { return EnvReport(env, id) + "/json" }

// APIApplications is the JSON application list.
func APIApplications() string { return "/v1/deploy/applications" }

// APIMe is the signed-in person's roles, as JSON (the /me page).
func APIMe() string { return "/v1/deploy/me" }

// APITree is an App's tree as JSON.
func APITree(name string) string { return join("/v1/deploy/", name, "/tree") }

// APIResource is a resource of an App's tree as JSON.
func APIResource(name, ref string) string { return join("/v1/deploy/", name, "/resource/", ref) }

// APIResourceAction is a day-2 action on an object of an App's tree
// (POST; ?cluster= ?namespace= as the other App routes).
func APIResourceAction(name, ref, action string) string {
	return join("/v1/deploy/", name, "/resource/", ref, "/actions/", action)
}

// APILogs is an App's logs (JSON, or text with format=text).
func APILogs(name string) string { return join("/v1/deploy/", name, "/logs") }

// APIRollback is the rollback API (POST).
func APIRollback(name string) string { return join("/v1/deploy/", name, "/rollback") }

// APISync is the sync API (POST).
func APISync(name string) string { return join("/v1/deploy/", name, "/sync") }

// Audit is the audit page with its filters (and its page's continue
// token) in the query.
func Audit(q url.Values) string { return WithQuery("/audit", q) }

// APIAudit is the audit records as JSON or CSV (format=csv), filtered by
// the query.
func APIAudit(q url.Values) string { return WithQuery("/v1/deploy/audit", q) }

// APIEnvHistory is an environment's audit records as JSON.
func APIEnvHistory(env string) string { return join("/v1/deploy/environments/", env) + "/history" }

// Static is a static asset (without its cache-busting version).
func Static(file string) string { return join("/static/", file) }

// EnvDiff is the diff page of an environment, with its from and to
// (record ids, "live", "ref:REF") in q.
func EnvDiff(env string, q url.Values) string { return WithQuery(Env(env)+"/diff", q) }

// APIEnvDiff is the JSON diff of an environment, with its from and to in q.
func APIEnvDiff(env string, q url.Values) string {
	return WithQuery(join("/v1/deploy/environments/", env, "/diff"), q)
}

// AppTimeline is an App's Timeline tab, with its range (?range=) and
// fragment in q.
func AppTimeline(cluster, ns, name string, q url.Values) string {
	return WithQuery(App(cluster, ns, name)+"/timeline", q)
}

// AppTimelineStream is the Timeline tab's live entries (server-sent events).
func AppTimelineStream(cluster, ns, name string) string {
	return App(cluster, ns, name) + "/timeline/stream"
}

// APITimeline is an App's timeline as JSON (?since=, ?until=, ?cluster=,
// ?namespace= in q).
func APITimeline(name string, q url.Values) string {
	return WithQuery(join("/v1/deploy/", name, "/timeline"), q)
}

// Activity is the fleet's activity feed with its filters and page (q).
func Activity(q url.Values) string { return WithQuery("/activity", q) }

// Freezes is the deploy freezes page (POST: create one).
func Freezes() string { return "/freezes" }

// FreezeEnd ends a freeze now (POST).
func FreezeEnd(id string) string { return join("/freezes/", id) + "/end" }

// APIFreezes is the freezes as JSON (POST: create one).
func APIFreezes() string { return "/v1/deploy/freezes" }

// APIFreeze is one freeze (DELETE: end it now).
func APIFreeze(id string) string { return join("/v1/deploy/freezes/", id) }

// AppWhy is an App's "Why isn't it live?" panel (the app page's fragment).
func AppWhy(cluster, ns, name string) string { return App(cluster, ns, name) + "/why" }

// AppMetrics is the app page's promotion checks panel (its metrics over
// the last day).
func AppMetrics(cluster, ns, name string) string { return App(cluster, ns, name) + "/metrics" }

// EnvWhy is an environment's "Not live" panel (the environment page's
// fragment).
func EnvWhy(env string) string { return Env(env) + "/why" }

// APIWhy is an App's reasons not to be live as JSON (?cluster=,
// ?namespace= in q).
func APIWhy(name string, q url.Values) string {
	return WithQuery(join("/v1/deploy/", name, "/why"), q)
}

// Search is the fleet-wide search page with its query (?q=, ?offset=).
func Search(q url.Values) string { return WithQuery("/search", q) }

// APISearch is the fleet-wide search of the JSON API.
func APISearch(q url.Values) string { return WithQuery("/v1/deploy/search", q) }

// Insights is the delivery metrics page with its query (?env=, ?app=,
// ?since=; ?format=csv for the CSV).
func Insights(q url.Values) string { return WithQuery("/insights", q) }

// APIInsights is the delivery metrics as JSON, with the page's query.
func APIInsights(q url.Values) string { return WithQuery("/v1/deploy/insights", q) }
