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
	// Day-2 actions on the panel's object (app_operate.go): the
	// confirmation and the form.
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/resource/{ref}/actions/{action}", roles.Operate, s.appOperateConfirm)
	s.protect(m, "POST /clusters/{cluster}/apps/{namespace}/{name}/resource/{ref}/actions/{action}", roles.Operate, s.appOperate)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/logs", roles.Logs, s.logsPage)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/logs/stream", roles.Logs, s.logsStream)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/rollback", roles.Rollback, s.rollbackConfirm)
	s.protect(m, "POST /clusters/{cluster}/apps/{namespace}/{name}/rollback", roles.Rollback, s.appRollback)
	s.protect(m, "POST /clusters/{cluster}/apps/{namespace}/{name}/sync", roles.Sync, s.appSync)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/actions/clear", roles.View, s.clearActions)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/timeline", roles.View, s.appTimeline)
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/timeline/stream", roles.View, limited(s.timelineStreams, s.appTimelineStream))
	// "Why isn't it live?": the app and environment pages' panels (app_why.go).
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/why", roles.View, s.appWhy)
	s.protect(m, "GET /environments/{env}/why", roles.View, s.envWhy)
	// The promotion checks' values and charts (app_metrics.go).
	s.protect(m, "GET /clusters/{cluster}/apps/{namespace}/{name}/metrics", roles.View, s.appMetrics)
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
	// GitOps: the panel's refresh, and pausing auto-sync (env_pause.go).
	s.protect(m, "GET /environments/{env}/gitops", roles.View, s.envGitOps)
	s.protect(m, "POST /environments/{env}/pause", roles.Pause, s.envPauseForm)
	s.protect(m, "POST /environments/{env}/resume", roles.Pause, s.envResumeForm)
	// Rolling an environment back to an apply record of its History
	// (env_rollback.go): the confirmation and the page's form.
	s.protect(m, "GET /environments/{env}/rollback", roles.Rollback, s.envRollbackConfirm)
	s.protect(m, "POST /environments/{env}/rollback", roles.Rollback, s.envRollbackForm)
	// One App in two environments (env_compare.go).
	s.protect(m, "GET /environments/{env}/compare/{app}", roles.View, s.envCompare)
	// Promotions into an environment: the dialog with its gates, a
	// matrix cell's soak and checks, the promotion (or its request), a
	// second person's decision (env_promote_page.go,
	// env_promote_checks.go, env_promote.go).
	s.protect(m, "GET /environments/{env}/promote", roles.View, s.envPromotePage)
	s.protect(m, "GET /environments/{env}/promote/checks", roles.View, s.envPromoteChecks)
	s.protect(m, "POST /environments/{env}/promote", roles.Promote, s.envPromoteSubmit)
	s.protect(m, "POST /environments/{env}/promotions/{id}/approve", roles.Approve, s.envPromotionDecide(true))
	s.protect(m, "POST /environments/{env}/promotions/{id}/reject", roles.Approve, s.envPromotionDecide(false))
	// The audit trail of every cluster and environment: superadmins (a
	// scoped viewer reads its environments' History sections instead).
	s.protect(m, "GET /audit", roles.Admin, s.auditPage)
	// Notifications: the subscriptions of an App's and an environment's
	// page (notify_pages.go), and their JSON (notify_api.go).
	s.protect(m, "POST /clusters/{cluster}/apps/{namespace}/{name}/notifications", roles.Notify, s.appNotifyCreate)
	s.protect(m, "POST /clusters/{cluster}/apps/{namespace}/{name}/notifications/{id}/test", roles.Notify, s.appNotifyTest)
	s.protect(m, "POST /clusters/{cluster}/apps/{namespace}/{name}/notifications/{id}/delete", roles.Notify, s.appNotifyDelete)
	s.protect(m, "POST /environments/{env}/notifications", roles.Notify, s.envNotifyCreate)
	s.protect(m, "POST /environments/{env}/notifications/{id}/test", roles.Notify, s.envNotifyTest)
	s.protect(m, "POST /environments/{env}/notifications/{id}/delete", roles.Notify, s.envNotifyDelete)
	s.protect(m, "GET /v1/deploy/notifications/subscriptions", roles.View, s.apiSubscriptions)
	s.protect(m, "POST /v1/deploy/notifications/subscriptions", roles.Notify, s.apiSubscriptionCreate)
	s.protect(m, "GET /v1/deploy/notifications/subscriptions/{id}", roles.View, s.apiSubscription)
	s.protect(m, "PUT /v1/deploy/notifications/subscriptions/{id}", roles.Notify, s.apiSubscriptionUpdate)
	s.protect(m, "DELETE /v1/deploy/notifications/subscriptions/{id}", roles.Notify, s.apiSubscriptionDelete)
	s.protect(m, "POST /v1/deploy/notifications/subscriptions/{id}/test", roles.Notify, s.apiSubscriptionTest)
	s.protect(m, "GET /v1/deploy/notifications/subscriptions/{id}/log", roles.View, s.apiSubscriptionLog)
	// The fleet's timeline entries, of the Apps the person may view.
	s.protect(m, "GET /activity", roles.View, s.activityPage)
	// Search every cluster's cached objects (fleet_search.go).
	s.protect(m, "GET /search", roles.View, s.searchPage)
	// Delivery metrics from the audit records and the timeline, of the
	// Apps the person may view (insights_report.go).
	s.protect(m, "GET /insights", roles.View, s.insightsPage)

	// JSON API.
	s.protect(m, "GET /v1/deploy/me", roles.View, s.apiMe)
	s.protect(m, "GET /v1/deploy/applications", roles.View, s.apiApplications)
	s.protect(m, "GET /v1/deploy/search", roles.View, s.apiSearch)
	s.protect(m, "GET /v1/deploy/insights", roles.View, s.apiInsights)
	s.protect(m, "GET /v1/deploy/{name}/tree", roles.View, s.apiTree)
	// An App's resource, /v1/deploy/{name}/resource/{ref}, through a
	// pattern the environments' routes below are more specific than
	// (apiDeploySub).
	s.protect(m, "GET /v1/deploy/{name}/{sub}/{ref}", roles.View, s.apiDeploySub)
	s.protect(m, "GET /v1/deploy/{name}/logs", roles.Logs, s.apiLogs)
	s.protect(m, "GET /v1/deploy/{name}/timeline", roles.View, s.apiTimeline)
	s.protect(m, "GET /v1/deploy/{name}/why", roles.View, s.apiWhy)
	s.protect(m, "POST /v1/deploy/{name}/rollback", roles.Rollback, s.apiRollback)
	s.protect(m, "POST /v1/deploy/{name}/sync", roles.Sync, s.apiSync)
	// A day-2 action, /v1/deploy/{name}/resource/{ref}/actions/{action},
	// through a pattern the promotions' routes are more specific than
	// (apiDeployAction).
	s.protect(m, "POST /v1/deploy/{name}/{sub}/{ref}/{verb}/{action}", roles.Operate, s.apiDeployAction)
	s.protect(m, "GET /v1/deploy/environments/{env}/diff", roles.View, limited(s.diffs, s.apiEnvDiff))
	s.protect(m, "GET /v1/deploy/audit", roles.Admin, s.apiAudit)
	s.protect(m, "GET /v1/deploy/environments/{env}/history", roles.View, s.apiEnvHistory)
	// The environments' GitOps state and auto-sync pauses (env_pause.go),
	// or with ?view=matrix the matrix of versions (env_matrix.go); one
	// environment's through apiDeployPair (see there).
	s.protect(m, "GET /v1/deploy/environments", roles.View, s.apiEnvironments)
	s.protect(m, "GET /v1/deploy/{name}/{sub}", roles.View, s.apiDeployPair)
	s.protect(m, "POST /v1/deploy/environments/{env}/pause", roles.Pause, s.apiEnvPause)
	s.protect(m, "DELETE /v1/deploy/environments/{env}/pause", roles.Pause, s.apiEnvResume)
	s.protect(m, "POST /v1/deploy/environments/{env}/rollback", roles.Rollback, s.apiEnvRollback)
	// Promotions (env_promote.go).
	s.protect(m, "POST /v1/deploy/environments/{env}/promotions", roles.Promote, s.apiPromote)
	s.protect(m, "POST /v1/deploy/environments/{env}/promotions/{id}/approve", roles.Approve, s.apiPromotionApprove)
	s.protect(m, "POST /v1/deploy/environments/{env}/promotions/{id}/reject", roles.Approve, s.apiPromotionReject)

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
