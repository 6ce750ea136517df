package handlers

import (
	"net/http"

	"github.com/hanzoai/deploy-web/envrun"
)

// route is one entry of the route table.
type route struct {
	pattern string
	public  bool
}

// mux is THE route table: every URL deploy-web serves, in one place.
// Routes are protected (authenticated superadmin, fail closed) unless they
// are registered with public.
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
	s.protect(m, "GET /{$}", s.appList)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}", s.appPage)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/resource/{ref}", s.appResource)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/logs", s.logsPage)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/logs/stream", s.logsStream)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/rollback", s.rollbackConfirm)
	s.protect(m, "POST /clusters/{cluster}/apps/{namespace}/{name}/rollback", s.appRollback)
	s.protect(m, "POST /clusters/{cluster}/apps/{namespace}/{name}/sync", s.appSync)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/actions/clear", s.clearActions)
	// The single-cluster app URLs (bookmarks): redirected (legacyApp).
	s.protect(m, "/apps/{namespace}/{name}", s.legacyApp)
	s.protect(m, "/apps/{namespace}/{name}/{rest...}", s.legacyApp)
	s.protect(m, "GET /environments", s.envList)
	s.protect(m, "GET /environments/{env}", s.envPage)
	s.protect(m, "POST /environments/{env}/plan", s.envStart(envrun.ActionPlan))
	s.protect(m, "POST /environments/{env}/apply", s.envStart(envrun.ActionApply))
	s.protect(m, "GET /environments/{env}/runs/{id}", s.envRun)
	s.protect(m, "GET /environments/{env}/runs/{id}/stream", limited(s.runStreams, s.envRunStream))
	s.protect(m, "GET /environments/{env}/reports/{id}", s.envPage)
	s.protect(m, "GET /environments/{env}/reports/{id}/json", s.envReportJSON)
	s.protect(m, "GET /environments/{env}/diff", limited(s.diffs, s.envDiffPage))
	s.protect(m, "GET /audit", s.auditPage)

	// JSON API.
	s.protect(m, "GET /v1/deploy/applications", s.apiApplications)
	s.protect(m, "GET /v1/deploy/{name}/tree", s.apiTree)
	// An App's resource, /v1/deploy/{name}/resource/{ref}, through a
	// pattern the environments' routes below are more specific than
	// (apiDeploySub).
	s.protect(m, "GET /v1/deploy/{name}/{sub}/{ref}", s.apiDeploySub)
	s.protect(m, "GET /v1/deploy/{name}/logs", s.apiLogs)
	s.protect(m, "POST /v1/deploy/{name}/rollback", s.apiRollback)
	s.protect(m, "POST /v1/deploy/{name}/sync", s.apiSync)
	s.protect(m, "GET /v1/deploy/environments/{env}/diff", limited(s.diffs, s.apiEnvDiff))
	s.protect(m, "GET /v1/deploy/audit", s.apiAudit)
	s.protect(m, "GET /v1/deploy/environments/{env}/history", s.apiEnvHistory)

	// Anything else: 404 (or 405 for a POST-only route), after
	// authentication (unknown URLs reveal nothing).
	s.protect(m, "/", s.notFound)
	s.m = m
	return m
}

func (s *Server) public(m *http.ServeMux, pattern string, h http.Handler) {
	s.routes = append(s.routes, route{pattern, true})
	m.Handle(pattern, s.instrument(pattern, h))
}

func (s *Server) protect(m *http.ServeMux, pattern string, h handlerFunc) {
	s.routes = append(s.routes, route{pattern, false})
	m.Handle(pattern, s.instrument(pattern, s.auth.Require(s.adapt(h))))
}
