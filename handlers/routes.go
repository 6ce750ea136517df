package handlers

import (
	"net/http"

	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/roles"
)

// route is one entry of the route table.
type route struct {
	pattern string
	public  bool
	// action is what a protected route does ("" for a public one).
	action roles.Action
}

// mux is THE route table: every URL deploy-web serves, in one place.
// Routes are protected unless they are registered with public: Require
// authenticates (fail closed), then authorize decides the route's action
// (a roles.Action) at its target, found by the pattern's shape (targetOf).
func (s *Server) mux() *http.ServeMux {
	m := http.NewServeMux()
	s.routes = nil

	// Public: probes, assets and the login flow.
	s.public(m, "GET /healthz", http.HandlerFunc(s.healthz))
	s.public(m, "GET /readyz", http.HandlerFunc(s.readyz))
	s.public(m, "GET /static/{file}", http.HandlerFunc(s.static))
	s.public(m, "GET /auth/login", http.HandlerFunc(s.auth.HandleLogin))
	s.public(m, "GET /auth/callback", http.HandlerFunc(s.auth.HandleCallback))
	s.public(m, "POST /auth/logout", http.HandlerFunc(s.auth.HandleLogout))

	// Pages and their HTMX fragments.
	s.protect(m, "GET /{$}", roles.View, s.appList)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}", roles.View, s.appPage)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/resource/{ref}", roles.View, s.appResource)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/logs", roles.Logs, s.logsPage)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/logs/stream", roles.Logs, s.logsStream)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/rollback", roles.Rollback, s.rollbackConfirm)
	s.protect(m, "POST /clusters/{cluster}/apps/{namespace}/{name}/rollback", roles.Rollback, s.appRollback)
	s.protect(m, "POST /clusters/{cluster}/apps/{namespace}/{name}/sync", roles.Sync, s.appSync)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/actions/clear", roles.View, s.clearActions)
	// The single-cluster app URLs (bookmarks): redirected (legacyApp).
	s.protect(m, "/apps/{namespace}/{name}", roles.View, s.legacyApp)
	s.protect(m, "/apps/{namespace}/{name}/{rest...}", roles.View, s.legacyApp)
	s.protect(m, "GET /me", roles.View, s.mePage)
	s.protect(m, "GET /environments", roles.View, s.envList)
	s.protect(m, "GET /environments/{env}", roles.View, s.envPage)
	s.protect(m, "POST /environments/{env}/plan", roles.Plan, s.envStart(envrun.ActionPlan))
	s.protect(m, "POST /environments/{env}/apply", roles.Apply, s.envStart(envrun.ActionApply))
	s.protect(m, "GET /environments/{env}/runs/{id}", roles.View, s.envRun)
	s.protect(m, "GET /environments/{env}/runs/{id}/stream", roles.View, limited(s.runStreams, s.envRunStream))
	s.protect(m, "GET /environments/{env}/reports/{id}", roles.View, s.envPage)
	s.protect(m, "GET /environments/{env}/reports/{id}/json", roles.View, s.envReportJSON)
	s.protect(m, "GET /environments/{env}/diff", roles.View, limited(s.diffs, s.envDiffPage))
	// The audit trail of every cluster and environment: superadmins (a
	// scoped viewer reads its environments' History sections instead).
	s.protect(m, "GET /audit", roles.Admin, s.auditPage)

	// JSON API.
	s.protect(m, "GET /v1/deploy/me", roles.View, s.apiMe)
	s.protect(m, "GET /v1/deploy/applications", roles.View, s.apiApplications)
	s.protect(m, "GET /v1/deploy/{name}/tree", roles.View, s.apiTree)
	// An App's resource, /v1/deploy/{name}/resource/{ref}, through a
	// pattern the environments' routes below are more specific than
	// (apiDeploySub).
	s.protect(m, "GET /v1/deploy/{name}/{sub}/{ref}", roles.View, s.apiDeploySub)
	s.protect(m, "GET /v1/deploy/{name}/logs", roles.Logs, s.apiLogs)
	s.protect(m, "POST /v1/deploy/{name}/rollback", roles.Rollback, s.apiRollback)
	s.protect(m, "POST /v1/deploy/{name}/sync", roles.Sync, s.apiSync)
	s.protect(m, "GET /v1/deploy/environments/{env}/diff", roles.View, limited(s.diffs, s.apiEnvDiff))
	s.protect(m, "GET /v1/deploy/audit", roles.Admin, s.apiAudit)
	s.protect(m, "GET /v1/deploy/environments/{env}/history", roles.View, s.apiEnvHistory)

	// Deploy freezes: anyone reads them; creating and ending one is
	// roles.Freeze (superadmins).
	s.protect(m, "GET /freezes", roles.View, s.freezesPage)
	s.protect(m, "POST /freezes", roles.Freeze, s.freezeCreate)
	s.protect(m, "POST /freezes/{id}/end", roles.Freeze, s.freezeEnd)
	s.protect(m, "GET /v1/deploy/freezes", roles.View, s.apiFreezes)
	s.protect(m, "POST /v1/deploy/freezes", roles.Freeze, s.apiFreezeCreate)
	s.protect(m, "DELETE /v1/deploy/freezes/{id}", roles.Freeze, s.apiFreezeDelete)

	// Anything else: 404 (or 405 for a POST-only route), after
	// authentication (unknown URLs reveal nothing).
	s.protect(m, "/", roles.View, s.notFound)
	s.m = m
	return m
}

func (s *Server) public(m *http.ServeMux, pattern string, h http.Handler) {
	s.routes = append(s.routes, route{pattern: pattern, public: true})
	m.Handle(pattern, s.instrument(pattern, h))
}

// protect registers a route behind Require and authorize: the person must
// be allowed action at the route's target (targetOf(pattern)).
func (s *Server) protect(m *http.ServeMux, pattern string, action roles.Action, h handlerFunc) {
	s.routes = append(s.routes, route{pattern: pattern, action: action})
	m.Handle(pattern, s.instrument(pattern, s.auth.Require(s.authorize(action, s.targetOf(pattern), s.adapt(h)))))
}
