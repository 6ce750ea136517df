package handlers

import (
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/web/paths"
)

// TestNotifyPathsServeTheirRoute: each notification path, built with
// hostile segments, matches its route and gives its segments back.
func TestNotifyPathsServeTheirRoute(t *testing.T) {
	ts := newTestServer(t, newFakeView(testRows()))
	rr := newRouteRecorder(t, ts.srv.routes)
	type tc struct {
		name, method, path, pattern string
		values                      map[string]string
	}
	for _, h := range hostileSegments {
		cl, ns, name, env, id := "c"+h, h, "n"+h, h, "id"+h
		app := map[string]string{"cluster": cl, "namespace": ns, "name": name}
		appID := map[string]string{"cluster": cl, "namespace": ns, "name": name, "id": id}
		for _, c := range []tc{
			{"AppNotifications", "POST", paths.AppNotifications(cl, ns, name), "POST /clusters/{cluster}/apps/{namespace}/{name}/notifications", app},
			{"AppNotificationTest", "POST", paths.AppNotificationTest(cl, ns, name, id), "POST /clusters/{cluster}/apps/{namespace}/{name}/notifications/{id}/test", appID},
			{"AppNotificationDelete", "POST", paths.AppNotificationDelete(cl, ns, name, id), "POST /clusters/{cluster}/apps/{namespace}/{name}/notifications/{id}/delete", appID},
			{"EnvNotifications", "POST", paths.EnvNotifications(env), "POST /environments/{env}/notifications", map[string]string{"env": env}},
			{"EnvNotificationTest", "POST", paths.EnvNotificationTest(env, id), "POST /environments/{env}/notifications/{id}/test", map[string]string{"env": env, "id": id}},
			{"EnvNotificationDelete", "POST", paths.EnvNotificationDelete(env, id), "POST /environments/{env}/notifications/{id}/delete", map[string]string{"env": env, "id": id}},
			{"APISubscriptions GET", "GET", paths.APISubscriptions(url.Values{"app": {h}}), "GET /v1/deploy/notifications/subscriptions", map[string]string{}},
			{"APISubscriptions POST", "POST", paths.APISubscriptions(nil), "POST /v1/deploy/notifications/subscriptions", map[string]string{}},
			{"APISubscription GET", "GET", paths.APISubscription(id), "GET /v1/deploy/notifications/subscriptions/{id}", map[string]string{"id": id}},
			{"APISubscription PUT", "PUT", paths.APISubscription(id), "PUT /v1/deploy/notifications/subscriptions/{id}", map[string]string{"id": id}},
			{"APISubscription DELETE", "DELETE", paths.APISubscription(id), "DELETE /v1/deploy/notifications/subscriptions/{id}", map[string]string{"id": id}},
			{"APISubscriptionTest", "POST", paths.APISubscriptionTest(id), "POST /v1/deploy/notifications/subscriptions/{id}/test", map[string]string{"id": id}},
			{"APISubscriptionLog", "GET", paths.APISubscriptionLog(id), "GET /v1/deploy/notifications/subscriptions/{id}/log", map[string]string{"id": id}},
		} {
			t.Run(c.name+"/"+c.path, func(t *testing.T) {
				req := httptest.NewRequest(c.method, c.path, nil)
				rr.pattern, rr.values = "", nil
				rr.mux.ServeHTTP(httptest.NewRecorder(), req)
				if rr.pattern != c.pattern {
					t.Fatalf("%s %s: matched %q, want %q", c.method, c.path, rr.pattern, c.pattern)
				}
				if diff := cmp.Diff(c.values, rr.values); diff != "" {
					t.Errorf("%s %s: path values mismatch (-want +got):\n%s", c.method, c.path, diff)
				}
				if _, pattern := ts.srv.m.Handler(req); pattern != c.pattern {
					t.Errorf("%s %s: the server's mux matched %q, want %q", c.method, c.path, pattern, c.pattern)
				}
			})
		}
	}
}
