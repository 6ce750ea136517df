package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/web/paths"
)

// hostileSegments are values a path builder must keep as one segment.
var hostileSegments = []string{
	"web", "a/b", "..", ".", "%", "100%25", "a b", "ünïcode-名前", "a?b#c", "a;b", "apps:Deployment:ns:a/b", "-", "~x", "a+b", `a\b`,
}

// routeRecorder is a mux with the route table's patterns whose handlers
// record the pattern that matched and its wildcards.
type routeRecorder struct {
	mux     *http.ServeMux
	pattern string
	values  map[string]string
}

var wildcardRE = regexp.MustCompile(`\{([a-z]+)(\.\.\.)?\}`)

func newRouteRecorder(t *testing.T, routes []route) *routeRecorder {
	t.Helper()
	rr := &routeRecorder{mux: http.NewServeMux()}
	for _, rt := range routes {
		pattern := rt.pattern
		rr.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			rr.pattern = pattern
			rr.values = map[string]string{}
			for _, m := range wildcardRE.FindAllStringSubmatch(pattern, -1) {
				rr.values[m[1]] = r.PathValue(m[1])
			}
		})
	}
	return rr
}

// TestPathsServeTheirRoute builds every path with hostile segments and
// routes it through the route table: the intended pattern matches (no
// redirect, no other route), each segment round-trips through PathValue,
// and the real mux picks the same pattern.
func TestPathsServeTheirRoute(t *testing.T) {
	ts := newTestServer(t, newFakeView(testRows()))
	rr := newRouteRecorder(t, ts.srv.routes)
	type tc struct {
		name, method, path, pattern string
		values                      map[string]string
		query                       url.Values
	}
	var cases []tc
	for _, h := range hostileSegments {
		cl, ns, name, ref, env, id := "c"+h, h, "n"+h, h, h, "id"+h
		app := map[string]string{"cluster": cl, "namespace": ns, "name": name}
		cases = append(cases,
			tc{"App", "GET", paths.App(cl, ns, name), "GET /clusters/{cluster}/apps/{namespace}/{name}", app, nil},
			tc{"AppResource", "GET", paths.AppResource(cl, ns, name, ref), "GET /clusters/{cluster}/apps/{namespace}/{name}/resource/{ref}", map[string]string{"cluster": cl, "namespace": ns, "name": name, "ref": ref}, nil},
			tc{"AppResourceAction GET", "GET", paths.AppResourceAction(cl, ns, name, ref, "a"+h), "GET /clusters/{cluster}/apps/{namespace}/{name}/resource/{ref}/actions/{action}", map[string]string{"cluster": cl, "namespace": ns, "name": name, "ref": ref, "action": "a" + h}, nil},
			tc{"AppResourceAction POST", "POST", paths.AppResourceAction(cl, ns, name, ref, "a"+h), "POST /clusters/{cluster}/apps/{namespace}/{name}/resource/{ref}/actions/{action}", map[string]string{"cluster": cl, "namespace": ns, "name": name, "ref": ref, "action": "a" + h}, nil},
			tc{"APIResourceAction", "POST", paths.APIResourceAction(name, ref, "a"+h), "POST /v1/deploy/{name}/{sub}/{ref}/{verb}/{action}", map[string]string{"name": name, "sub": "resource", "ref": ref, "verb": "actions", "action": "a" + h}, nil},
			tc{"AppLogs", "GET", paths.AppLogs(cl, ns, name), "GET /clusters/{cluster}/apps/{namespace}/{name}/logs", app, nil},
			tc{"AppLogsStream", "GET", paths.AppLogsStream(cl, ns, name), "GET /clusters/{cluster}/apps/{namespace}/{name}/logs/stream", app, nil},
			tc{"AppRollback GET", "GET", paths.AppRollback(cl, ns, name), "GET /clusters/{cluster}/apps/{namespace}/{name}/rollback", app, nil},
			tc{"AppRollback POST", "POST", paths.AppRollback(cl, ns, name), "POST /clusters/{cluster}/apps/{namespace}/{name}/rollback", app, nil},
			tc{"AppSync", "POST", paths.AppSync(cl, ns, name), "POST /clusters/{cluster}/apps/{namespace}/{name}/sync", app, nil},
			tc{"AppActionsClear", "GET", paths.AppActionsClear(cl, ns, name), "GET /clusters/{cluster}/apps/{namespace}/{name}/actions/clear", app, nil},
			tc{"LegacyApp", "GET", paths.LegacyApp(ns, name, ""), "/apps/{namespace}/{name}", map[string]string{"namespace": ns, "name": name}, nil},
			tc{"LegacyApp rest", "POST", paths.LegacyApp(ns, name, "/rollback"), "/apps/{namespace}/{name}/{rest...}", map[string]string{"namespace": ns, "name": name, "rest": "rollback"}, nil},
			tc{"Env", "GET", paths.Env(env), "GET /environments/{env}", map[string]string{"env": env}, nil},
			tc{"EnvPlan", "POST", paths.EnvPlan(env), "POST /environments/{env}/plan", map[string]string{"env": env}, nil},
			tc{"EnvApply", "POST", paths.EnvApply(env), "POST /environments/{env}/apply", map[string]string{"env": env}, nil},
			tc{"EnvRun", "GET", paths.EnvRun(env, id), "GET /environments/{env}/runs/{id}", map[string]string{"env": env, "id": id}, nil},
			tc{"EnvRunStream", "GET", paths.EnvRunStream(env, id), "GET /environments/{env}/runs/{id}/stream", map[string]string{"env": env, "id": id}, nil},
			tc{"EnvReport", "GET", paths.EnvReport(env, id), "GET /environments/{env}/reports/{id}", map[string]string{"env": env, "id": id}, nil},
			tc{"EnvReportJSON", "GET", paths.EnvReportJSON(env, id), "GET /environments/{env}/reports/{id}/json", map[string]string{"env": env, "id": id}, nil},
			tc{"APITree", "GET", paths.APITree(name), "GET /v1/deploy/{name}/tree", map[string]string{"name": name}, nil},
			tc{"APIResource", "GET", paths.APIResource(name, ref), "GET /v1/deploy/{name}/{sub}/{ref}", map[string]string{"name": name, "sub": "resource", "ref": ref}, nil},
			tc{"APIEnvDiff", "GET", paths.APIEnvDiff(env, url.Values{"from": {h}, "to": {"ref:" + h}}), "GET /v1/deploy/environments/{env}/diff", map[string]string{"env": env}, url.Values{"from": {h}, "to": {"ref:" + h}}},
			tc{"EnvDiff", "GET", paths.EnvDiff(env, url.Values{"from": {h}, "to": {h}}), "GET /environments/{env}/diff", map[string]string{"env": env}, url.Values{"from": {h}, "to": {h}}},
			tc{"APILogs", "GET", paths.APILogs(name), "GET /v1/deploy/{name}/logs", map[string]string{"name": name}, nil},
			tc{"APIRollback", "POST", paths.APIRollback(name), "POST /v1/deploy/{name}/rollback", map[string]string{"name": name}, nil},
			tc{"APISync", "POST", paths.APISync(name), "POST /v1/deploy/{name}/sync", map[string]string{"name": name}, nil},
			tc{"Static", "GET", paths.Static(h), "GET /static/{file}", map[string]string{"file": h}, nil},
			tc{"Fleet", "GET", paths.Fleet(url.Values{"namespace": {h}, "q": {h}}), "GET /{$}", map[string]string{}, url.Values{"namespace": {h}, "q": {h}}},
			tc{"FleetNamespace", "GET", paths.FleetNamespace("", h), "GET /{$}", map[string]string{}, url.Values{"namespace": {h}}},
			tc{"FleetNamespace of a cluster", "GET", paths.FleetNamespace(cl, h), "GET /{$}", map[string]string{}, url.Values{"cluster": {cl}, "namespace": {h}}},
			tc{"FleetCluster", "GET", paths.FleetCluster(cl), "GET /{$}", map[string]string{}, url.Values{"cluster": {cl}}},
			tc{"APIEnvHistory", "GET", paths.APIEnvHistory(env), "GET /v1/deploy/environments/{env}/history", map[string]string{"env": env}, nil},
			tc{"EnvGitOps", "GET", paths.EnvGitOps(env), "GET /environments/{env}/gitops", map[string]string{"env": env}, nil},
			tc{"EnvWhy", "GET", paths.EnvWhy(env), "GET /environments/{env}/why", map[string]string{"env": env}, nil},
			tc{"EnvPause", "POST", paths.EnvPause(env), "POST /environments/{env}/pause", map[string]string{"env": env}, nil},
			tc{"EnvResume", "POST", paths.EnvResume(env), "POST /environments/{env}/resume", map[string]string{"env": env}, nil},
			tc{"EnvRollbackTo", "GET", paths.EnvRollbackTo(env, "0123456789abcdef-0000000001"), "GET /environments/{env}/rollback", map[string]string{"env": env}, url.Values{"to": {"0123456789abcdef-0000000001"}}},
			tc{"EnvRollback", "POST", paths.EnvRollback(env), "POST /environments/{env}/rollback", map[string]string{"env": env}, nil},
			tc{"APIEnvRollback", "POST", paths.APIEnvRollback(env), "POST /v1/deploy/environments/{env}/rollback", map[string]string{"env": env}, nil},
			tc{"APIEnvironment", "GET", paths.APIEnvironment(env), "GET /v1/deploy/{name}/{sub}", map[string]string{"name": "environments", "sub": env}, nil},
			tc{"APIEnvPause", "POST", paths.APIEnvPause(env), "POST /v1/deploy/environments/{env}/pause", map[string]string{"env": env}, nil},
			tc{"APIEnvPause DELETE", "DELETE", paths.APIEnvPause(env), "DELETE /v1/deploy/environments/{env}/pause", map[string]string{"env": env}, nil},
			tc{"Audit", "GET", paths.Audit(url.Values{"actor": {h}, "app": {h}}), "GET /audit", map[string]string{}, url.Values{"actor": {h}, "app": {h}}},
			tc{"APIAudit", "GET", paths.APIAudit(url.Values{"env": {h}, "format": {"csv"}}), "GET /v1/deploy/audit", map[string]string{}, url.Values{"env": {h}, "format": {"csv"}}},
			tc{"EnvCompare", "GET", paths.EnvCompare(env, name, h), "GET /environments/{env}/compare/{app}", map[string]string{"env": env, "app": name}, url.Values{"from": {h}}},
			tc{"EnvMatrix", "GET", paths.EnvMatrix(url.Values{"q": {h}, "differs": {"1"}}), "GET /environments", map[string]string{}, url.Values{"q": {h}, "differs": {"1"}}},
			tc{"APIEnvironments", "GET", paths.APIEnvironments(url.Values{"view": {"matrix"}, "q": {h}}), "GET /v1/deploy/environments", map[string]string{}, url.Values{"view": {"matrix"}, "q": {h}}},
			tc{"EnvPromote", "GET", paths.EnvPromote(env, h, name), "GET /environments/{env}/promote", map[string]string{"env": env}, url.Values{"from": {h}, "app": {name}}},
			tc{"EnvPromoteChecks", "GET", paths.EnvPromoteChecks(env, h, name), "GET /environments/{env}/promote/checks", map[string]string{"env": env}, url.Values{"from": {h}, "app": {name}}},
			tc{"EnvPromoteRequest", "POST", paths.EnvPromoteRequest(env), "POST /environments/{env}/promote", map[string]string{"env": env}, nil},
			tc{"EnvPromoteApprove", "POST", paths.EnvPromoteApprove(env, id), "POST /environments/{env}/promotions/{id}/approve", map[string]string{"env": env, "id": id}, nil},
			tc{"EnvPromoteReject", "POST", paths.EnvPromoteReject(env, id), "POST /environments/{env}/promotions/{id}/reject", map[string]string{"env": env, "id": id}, nil},
			tc{"APIEnvPromotions", "POST", paths.APIEnvPromotions(env), "POST /v1/deploy/environments/{env}/promotions", map[string]string{"env": env}, nil},
			tc{"APIEnvPromotionApprove", "POST", paths.APIEnvPromotionApprove(env, id), "POST /v1/deploy/environments/{env}/promotions/{id}/approve", map[string]string{"env": env, "id": id}, nil},
			tc{"APIEnvPromotionReject", "POST", paths.APIEnvPromotionReject(env, id), "POST /v1/deploy/environments/{env}/promotions/{id}/reject", map[string]string{"env": env, "id": id}, nil},
			tc{"FreezeEnd", "POST", paths.FreezeEnd(h), "POST /freezes/{id}/end", map[string]string{"id": h}, nil},
			tc{"APIFreeze", "DELETE", paths.APIFreeze(h), "DELETE /v1/deploy/freezes/{id}", map[string]string{"id": h}, nil},
			tc{"WithQuery", "GET", paths.WithQuery(paths.APILogs(name), url.Values{"namespace": {ns}, "pod": {h}}), "GET /v1/deploy/{name}/logs", map[string]string{"name": name}, url.Values{"namespace": {ns}, "pod": {h}}},
			tc{"AppTimeline", "GET", paths.AppTimeline(cl, ns, name, url.Values{"range": {h}}), "GET /clusters/{cluster}/apps/{namespace}/{name}/timeline", app, url.Values{"range": {h}}},
			tc{"AppTimelineStream", "GET", paths.AppTimelineStream(cl, ns, name), "GET /clusters/{cluster}/apps/{namespace}/{name}/timeline/stream", app, nil},
			tc{"AppWhy", "GET", paths.AppWhy(cl, ns, name), "GET /clusters/{cluster}/apps/{namespace}/{name}/why", app, nil},
			tc{"AppMetrics", "GET", paths.AppMetrics(cl, ns, name), "GET /clusters/{cluster}/apps/{namespace}/{name}/metrics", app, nil},
			tc{"APIWhy", "GET", paths.APIWhy(name, url.Values{"cluster": {cl}}), "GET /v1/deploy/{name}/why", map[string]string{"name": name}, url.Values{"cluster": {cl}}},
			tc{"APITimeline", "GET", paths.APITimeline(name, url.Values{"since": {h}, "cluster": {cl}}), "GET /v1/deploy/{name}/timeline", map[string]string{"name": name}, url.Values{"since": {h}, "cluster": {cl}}},
		)
	}
	cases = append(cases,
		tc{"Fleet without query", "GET", paths.Fleet(nil), "GET /{$}", map[string]string{}, url.Values{}},
		tc{"Environments", "GET", paths.Environments(), "GET /environments", map[string]string{}, url.Values{}},
		tc{"Freezes", "GET", paths.Freezes(), "GET /freezes", map[string]string{}, url.Values{}},
		tc{"Freezes POST", "POST", paths.Freezes(), "POST /freezes", map[string]string{}, url.Values{}},
		tc{"APIFreezes", "GET", paths.APIFreezes(), "GET /v1/deploy/freezes", map[string]string{}, url.Values{}},
		tc{"APIFreezes POST", "POST", paths.APIFreezes(), "POST /v1/deploy/freezes", map[string]string{}, url.Values{}},
		tc{"APIApplications", "GET", paths.APIApplications(), "GET /v1/deploy/applications", map[string]string{}, url.Values{}},
		tc{"Me", "GET", paths.Me(), "GET /me", map[string]string{}, url.Values{}},
		tc{"APIMe", "GET", paths.APIMe(), "GET /v1/deploy/me", map[string]string{}, url.Values{}},
		tc{"APIEnvironments", "GET", paths.APIEnvironments(nil), "GET /v1/deploy/environments", map[string]string{}, url.Values{}},
		tc{"Activity", "GET", paths.Activity(url.Values{"namespace": {"a b"}, "kind": {"deploy"}}), "GET /activity", map[string]string{}, url.Values{"namespace": {"a b"}, "kind": {"deploy"}}},
		tc{"Search", "GET", paths.Search(url.Values{"q": {"name:a/b* %"}, "offset": {"50"}}), "GET /search", map[string]string{}, url.Values{"q": {"name:a/b* %"}, "offset": {"50"}}},
		tc{"APISearch", "GET", paths.APISearch(url.Values{"q": {"label:k=v&x"}}), "GET /v1/deploy/search", map[string]string{}, url.Values{"q": {"label:k=v&x"}}},
		tc{"Insights", "GET", paths.Insights(url.Values{"env": {"a b"}, "since": {"7d"}}), "GET /insights", map[string]string{}, url.Values{"env": {"a b"}, "since": {"7d"}}},
		tc{"APIInsights", "GET", paths.APIInsights(url.Values{"app": {"a&b"}}), "GET /v1/deploy/insights", map[string]string{}, url.Values{"app": {"a&b"}}},
	)
	for _, c := range cases {
		t.Run(c.name+"/"+c.path, func(t *testing.T) {
			req := httptest.NewRequest(c.method, c.path, nil)
			if req.URL.Path == "" || req.URL.Path[0] != '/' {
				t.Fatalf("%s = %q, want an absolute path", c.name, c.path)
			}
			rr.pattern, rr.values = "", nil
			w := httptest.NewRecorder()
			rr.mux.ServeHTTP(w, req)
			if rr.pattern != c.pattern {
				t.Fatalf("%s %s: matched %q (status %d, Location %q), want %q", c.method, c.path, rr.pattern, w.Code, w.Header().Get("Location"), c.pattern)
			}
			if diff := cmp.Diff(c.values, rr.values); diff != "" {
				t.Errorf("%s %s: path values mismatch (-want +got):\n%s", c.method, c.path, diff)
			}
			if c.query != nil {
				if diff := cmp.Diff(c.query, req.URL.Query()); diff != "" {
					t.Errorf("%s %s: query mismatch (-want +got):\n%s", c.method, c.path, diff)
				}
			}
			if _, pattern := ts.srv.m.Handler(req); pattern != c.pattern {
				t.Errorf("%s %s: the server's mux matched %q, want %q", c.method, c.path, pattern, c.pattern)
			}
		})
	}
}

// TestEveryRouteHasABuilder: each pattern of the route table is one the
// builders above exercise, so a new route needs a path function (and a
// row in TestPathsServeTheirRoute).
func TestEveryRouteHasABuilder(t *testing.T) {
	ts := newTestServer(t, newFakeView(testRows()))
	built := map[string]bool{}
	rr := newRouteRecorder(t, ts.srv.routes)
	for _, c := range []struct{ method, path string }{
		{"GET", paths.Fleet(nil)}, {"GET", paths.App("c", "n", "a")}, {"GET", paths.AppResource("c", "n", "a", "r")},
		{"GET", paths.AppResourceAction("c", "n", "a", "r", "x")}, {"POST", paths.AppResourceAction("c", "n", "a", "r", "x")}, {"POST", paths.APIResourceAction("a", "r", "x")},
		{"GET", paths.AppLogs("c", "n", "a")}, {"GET", paths.AppLogsStream("c", "n", "a")}, {"GET", paths.AppRollback("c", "n", "a")},
		{"POST", paths.AppRollback("c", "n", "a")}, {"POST", paths.AppSync("c", "n", "a")}, {"GET", paths.AppActionsClear("c", "n", "a")},
		{"GET", paths.LegacyApp("n", "a", "")}, {"GET", paths.LegacyApp("n", "a", "/logs")},
		{"GET", paths.Environments()}, {"GET", paths.Env("e")}, {"POST", paths.EnvPlan("e")}, {"POST", paths.EnvApply("e")},
		{"GET", paths.EnvRun("e", "i")}, {"GET", paths.EnvRunStream("e", "i")}, {"GET", paths.EnvReport("e", "i")},
		{"GET", paths.EnvReportJSON("e", "i")}, {"GET", paths.APIApplications()}, {"GET", paths.Me()}, {"GET", paths.APIMe()}, {"GET", paths.APITree("a")},
		{"GET", paths.APIResource("a", "r")}, {"GET", paths.APILogs("a")}, {"POST", paths.APIRollback("a")},
		{"POST", paths.APISync("a")}, {"GET", paths.Static("app.css")}, {"GET", paths.EnvDiff("e", nil)}, {"GET", paths.APIEnvDiff("e", nil)},
		{"POST", paths.APISync("a")}, {"GET", paths.Static("app.css")},
		{"GET", paths.Audit(nil)}, {"GET", paths.APIAudit(nil)}, {"GET", paths.APIEnvHistory("e")},
		{"GET", paths.EnvGitOps("e")}, {"POST", paths.EnvPause("e")}, {"POST", paths.EnvResume("e")}, {"GET", paths.APIEnvironments(nil)},
		{"GET", paths.APIEnvironment("e")}, {"POST", paths.APIEnvPause("e")}, {"DELETE", paths.APIEnvPause("e")},
		{"GET", paths.EnvRollbackTo("e", "i")}, {"POST", paths.EnvRollback("e")}, {"POST", paths.APIEnvRollback("e")},
		{"POST", paths.AppNotifications("c", "n", "a")}, {"POST", paths.AppNotificationTest("c", "n", "a", "i")}, {"POST", paths.AppNotificationDelete("c", "n", "a", "i")},
		{"POST", paths.EnvNotifications("e")}, {"POST", paths.EnvNotificationTest("e", "i")}, {"POST", paths.EnvNotificationDelete("e", "i")},
		{"GET", paths.APISubscriptions(nil)}, {"POST", paths.APISubscriptions(nil)}, {"GET", paths.APISubscription("i")}, {"PUT", paths.APISubscription("i")},
		{"DELETE", paths.APISubscription("i")}, {"POST", paths.APISubscriptionTest("i")}, {"GET", paths.APISubscriptionLog("i")},
		{"GET", paths.EnvCompare("e", "a", "f")},
		{"GET", paths.EnvPromote("e", "f", "a")}, {"POST", paths.EnvPromoteRequest("e")}, {"POST", paths.EnvPromoteApprove("e", "i")},
		{"POST", paths.EnvPromoteReject("e", "i")}, {"POST", paths.APIEnvPromotions("e")}, {"POST", paths.APIEnvPromotionApprove("e", "i")},
		{"POST", paths.APIEnvPromotionReject("e", "i")},
		{"GET", paths.AppTimeline("c", "n", "a", nil)}, {"GET", paths.AppTimelineStream("c", "n", "a")}, {"GET", paths.APITimeline("a", nil)},
		{"GET", paths.Activity(nil)},
		{"GET", paths.AppWhy("c", "n", "a")}, {"GET", paths.EnvWhy("e")}, {"GET", paths.APIWhy("a", nil)},
		{"GET", paths.AppMetrics("c", "n", "a")}, {"GET", paths.EnvPromoteChecks("e", "f", "a")},
		{"GET", paths.Activity(nil)}, {"GET", paths.Search(nil)}, {"GET", paths.APISearch(nil)},
		{"GET", paths.Insights(nil)}, {"GET", paths.APIInsights(nil)},
		{"GET", paths.Freezes()}, {"POST", paths.Freezes()}, {"POST", paths.FreezeEnd("f")},
		{"GET", paths.APIFreezes()}, {"POST", paths.APIFreezes()}, {"DELETE", paths.APIFreeze("f")},
	} {
		rr.pattern = ""
		rr.mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(c.method, c.path, nil))
		built[rr.pattern] = true
	}
	// Built by package auth (auth.LoginPath, ...), and the probes and the
	// catch-all, which no page links to.
	notBuilt := map[string]bool{"GET /auth/login": true, "GET /auth/callback": true, "POST /auth/logout": true,
		"GET /healthz": true, "GET /readyz": true, "/": true}
	for _, rt := range ts.srv.routes {
		if !built[rt.pattern] && !notBuilt[rt.pattern] {
			t.Errorf("route %q: no path function builds it; add one to web/paths and a row to TestPathsServeTheirRoute", rt.pattern)
		}
	}
}
