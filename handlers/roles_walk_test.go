package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/roles"
)

// walkRoles is the roles file of the role walk: a viewer, a viewer with
// logs, a deployer scoped to namespace apps and to environment dev (two
// bindings), an approver and a superadmin group.
const walkRoles = `bindings:
  - role: viewer
    groups: [viewers]
  - role: viewer
    groups: [viewers-logs]
    logs: true
  - role: deployer
    groups: [deployers]
    scope: {namespaces: [apps]}
  - role: deployer
    groups: [deployers]
    scope: {environments: [dev]}
  - role: approver
    groups: [approvers]
  - role: superadmin
    groups: [admins]
`

// walkPersona is one person of the walk.
type walkPersona struct {
	name string
	id   auth.Identity
}

func walkPersonas() []walkPersona {
	person := func(sub string, admin bool, groups ...string) auth.Identity {
		return auth.Identity{Subject: sub, Email: sub + "@example.com", Name: sub, Admin: admin, Groups: auth.NewGroupList(groups), Expires: testNow.Add(time.Hour)}
	}
	return []walkPersona{
		{"viewer", person("vera", false, "viewers")},
		{"viewer+logs", person("lou", false, "viewers-logs")},
		{"deployer (scoped)", person("dee", false, "deployers")},
		{"approver", person("abe", false, "approvers")},
		{"superadmin (group)", person("sam", false, "admins")},
		{"superadmin (admin claim)", person("ada", true)},
		{"no role", person("nobody", false, "engineering")},
	}
}

// walkPolicy parses walkRoles.
func walkPolicy(t testing.TB) *roles.Policy {
	t.Helper()
	p, err := roles.Parse("roles.yaml", []byte(walkRoles), roles.Options{})
	if err != nil {
		t.Fatalf("roles.Parse(walkRoles) error = %v", err)
	}
	return p
}

// walkView knows App "web" in both platform namespaces (apps, which the
// deployer's scope covers, and infra, which it does not), with a history
// that offers a rollback.
type walkView struct{ *fakeView }

func (v walkView) LookupApp(ns, name string) (*unstructured.Unstructured, error) {
	if name != "web" || (ns != "apps" && ns != "infra") {
		return nil, kubeview.ErrAppNotFound
	}
	u := &unstructured.Unstructured{}
	u.SetNamespace(ns)
	u.SetName(name)
	return u, nil
}

func (v walkView) Row(ns, name string) (kubeview.AppRow, bool) {
	if _, err := v.LookupApp(ns, name); err != nil {
		return kubeview.AppRow{}, false
	}
	return kubeview.AppRow{Name: name, Namespace: ns, Version: "1.2.0", Health: objrules.Health{Status: objrules.HealthHealthy}}, true
}

func (v walkView) Tree(ns, name string) (kubeview.Tree, error) {
	if _, err := v.LookupApp(ns, name); err != nil {
		return kubeview.Tree{}, err
	}
	return kubeview.Tree{}, nil
}

func (v walkView) History(ns, name string) ([]kubeview.Release, error) {
	if _, err := v.LookupApp(ns, name); err != nil {
		return nil, err
	}
	return []kubeview.Release{
		{Revision: 2, Version: "1.2.0", Current: true, Declared: true, CleanSemver: true, Created: testNow},
		{Revision: 1, Version: "1.1.0", CleanSemver: true, Created: testNow.Add(-24 * time.Hour)},
	}, nil
}

func (v walkView) DriftOf(uid string) []objrules.DriftField { return nil }

// walkServer is a test server over walkView with rollback, sync and logs
// configured and the walk's roles.
func walkServer(t *testing.T) *testServer {
	t.Helper()
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Clusters[0].Release = &recordingReleaser{}
		o.Clusters[0].Logs = &fakeLogs{pods: webPods, follow: func(context.Context, kubeview.LogQuery, func(kubeview.LogEvent) error) error { return nil }}
		o.Roles = walkPolicy(t)
	})
	ts.srv.clusters[0].View = walkView{ts.view}
	ts.handler = ts.srv.Handler()
	return ts
}

// walkSample is one sample request of a route: the namespace and the
// environment its path names.
type walkSample struct{ namespace, env string }

// walkSamples are in the deployer's scope (apps, dev) and out of it
// (infra, prod).
var walkSamples = []walkSample{{"apps", "dev"}, {"infra", "prod"}}

// walkRequest fills pattern's wildcards for sample s; the API names its
// App's cluster and namespace in the query.
func walkRequest(pattern string, s walkSample) (method, target string) {
	method, p, ok := strings.Cut(pattern, " ")
	if !ok {
		method, p = http.MethodGet, pattern
	}
	r := strings.NewReplacer("{$}", "", "{cluster}", "in-cluster", "{namespace}", s.namespace, "{name}", "web",
		"{env}", s.env, "{id}", "r1", "{ref}", ":Service:"+s.namespace+":web", "{rest...}", "logs")
	target = r.Replace(p)
	if strings.HasSuffix(p, "/") {
		target += "no-such-page"
	}
	if strings.HasPrefix(p, "/v1/deploy/{name}/") {
		target += "?" + url.Values{"cluster": {"in-cluster"}, "namespace": {s.namespace}}.Encode()
	}
	return method, target
}

// walkTarget is where a sample request of pattern acts, written out here
// apart from targetOf: the App of the path (or of the API's query), the
// environment of the path, or (false) no one target.
func walkTarget(pattern string, s walkSample) (roles.Target, bool) {
	switch {
	case strings.Contains(pattern, "{namespace}") || strings.Contains(pattern, "/v1/deploy/{name}/"):
		return roles.Target{Cluster: "in-cluster", Namespace: s.namespace, App: "web"}, true
	case strings.Contains(pattern, "{env}"):
		return roles.Target{Environment: s.env}, true
	}
	return roles.Target{}, false
}

// decide is what the roles decide for id doing a at the sample's target.
func decide(p *roles.Policy, id auth.Identity, a roles.Action, t roles.Target, one bool) roles.Decision {
	if one {
		return p.Allow(id.Principal(), a, t)
	}
	return p.For(id.Principal()).AllowSomewhere(a)
}

// TestRouteActionsFitTheirMethod: a route that writes never names a read
// action, and a logs route names Logs; so a route cannot be registered
// with an action weaker than what it does.
func TestRouteActionsFitTheirMethod(t *testing.T) {
	ts := walkServer(t)
	for _, rt := range ts.srv.routes {
		if rt.public {
			continue
		}
		if !rt.action.Known() {
			t.Errorf("route %q: action %q is not a roles action", rt.pattern, rt.action)
		}
		if strings.HasPrefix(rt.pattern, "POST ") && (rt.action == roles.View || rt.action == roles.Logs) {
			t.Errorf("route %q: action %q, want a write action (it changes something)", rt.pattern, rt.action)
		}
		if strings.Contains(rt.pattern, "/logs") && rt.action != roles.Logs {
			t.Errorf("route %q: action %q, want %q", rt.pattern, rt.action, roles.Logs)
		}
	}
}

// TestRoleWalk walks every protected route of the route table for every
// persona, in and out of the deployer's scope: the answer is 403, with the
// decision's reason, exactly when the roles deny the route's action at the
// sample's target; and every page drawn shows only buttons (data-action)
// the same decision allows.
func TestRoleWalk(t *testing.T) {
	ts := walkServer(t)
	policy := ts.srv.opts.Roles
	for _, persona := range walkPersonas() {
		id := persona.id
		ts.auth.id = &id
		for _, rt := range ts.srv.routes {
			if rt.public {
				continue
			}
			for _, s := range walkSamples {
				method, target := walkRequest(rt.pattern, s)
				tgt, one := walkTarget(rt.pattern, s)
				d := decide(policy, id, rt.action, tgt, one)
				for _, accept := range []string{"text/html", "application/json"} {
					w := ts.do(t, request{method: method, target: target, admin: true, header: map[string]string{"Accept": accept}})
					if got := w.Code == http.StatusForbidden; got != !d.Allowed {
						t.Errorf("%s: %s %s (%s, %s at %s) = %d, want 403 %v (%s)", persona.name, method, target, accept, rt.action, tgt, w.Code, !d.Allowed, d.Because)
						continue
					}
					if !d.Allowed && !strings.Contains(w.Body.String(), html.EscapeString(d.Because)) && !strings.Contains(w.Body.String(), jsonString(d.Because)) {
						t.Errorf("%s: %s %s (%s): 403 body %.300s, want the reason %q", persona.name, method, target, accept, w.Body, d.Because)
					}
					if d.Allowed && accept == "text/html" && strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
						for _, n := range findAll(parseHTML(t, w.Body.String()), func(n *html.Node) bool { return attr(n, "data-action") != "" }) {
							a := roles.Action(attr(n, "data-action"))
							if !decide(policy, id, a, tgt, one).Allowed {
								t.Errorf("%s: %s %s draws a %q button (%s), which the roles deny at %s", persona.name, method, target, a, attr(n, "data-testid"), tgt)
							}
						}
					}
				}
				if !strings.Contains(rt.pattern, "{") {
					break // one sample is enough for a route without wildcards
				}
			}
		}
	}
}

// drawsAction reports whether a page has a button (data-action) for a.
func drawsAction(doc *html.Node, a roles.Action) bool {
	return len(findAll(doc, func(n *html.Node) bool { return attr(n, "data-action") == string(a) })) > 0
}

// jsonString is s as encoding/json writes it inside a string (HTML-safe).
func jsonString(s string) string {
	r := strings.NewReplacer(`"`, `\"`, "<", `\u003c`, ">", `\u003e`, "&", `\u0026`)
	return r.Replace(s)
}

// TestRoleWalkAppButtons: on the app page, the sync, rollback and logs
// buttons are each drawn exactly when the roles allow that action on the
// App, for every persona, in and out of the deployer's scope.
func TestRoleWalkAppButtons(t *testing.T) {
	ts := walkServer(t)
	policy := ts.srv.opts.Roles
	for _, persona := range walkPersonas() {
		id := persona.id
		ts.auth.id = &id
		for _, s := range walkSamples {
			tgt := roles.Target{Cluster: "in-cluster", Namespace: s.namespace, App: "web"}
			if !policy.Allow(id.Principal(), roles.View, tgt).Allowed {
				continue // the page itself is refused (TestRoleWalk)
			}
			page := "/clusters/in-cluster/apps/" + s.namespace + "/web"
			w := ts.get(t, page, nil)
			if w.Code != http.StatusOK {
				t.Fatalf("%s: GET %s = %d, want 200: %.300s", persona.name, page, w.Code, w.Body)
			}
			doc := parseHTML(t, w.Body.String())
			for _, a := range []roles.Action{roles.Sync, roles.Rollback, roles.Logs} {
				want := policy.Allow(id.Principal(), a, tgt).Allowed
				got := drawsAction(doc, a)
				if got != want {
					t.Errorf("%s: GET %s: %s button drawn = %v, want %v", persona.name, page, a, got, want)
				}
			}
		}
	}
}

// TestRoleWalkEnvButtons: on an environment page with a ready plan, Plan
// and Apply are each drawn exactly when the roles allow them there.
func TestRoleWalkEnvButtons(t *testing.T) {
	ts, _, save := planServer(t)
	save("ready")
	policy := walkPolicy(t)
	ts.srv.opts.Roles = policy
	tgt := ts.srv.envTarget("dev")
	if tgt.Environment != "dev" || tgt.Namespace != "staging" {
		t.Fatalf("envTarget(dev) = %+v, want environment dev in namespace staging", tgt)
	}
	drawn := 0
	for _, persona := range walkPersonas() {
		id := persona.id
		ts.auth.id = &id
		if !policy.Allow(id.Principal(), roles.View, tgt).Allowed {
			continue
		}
		w := ts.get(t, "/environments/dev", nil)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: GET /environments/dev = %d, want 200: %.300s", persona.name, w.Code, w.Body)
		}
		doc := parseHTML(t, w.Body.String())
		for _, a := range []roles.Action{roles.Plan, roles.Apply} {
			want := policy.Allow(id.Principal(), a, tgt).Allowed
			got := drawsAction(doc, a)
			if got != want {
				t.Errorf("%s: GET /environments/dev: %s button drawn = %v, want %v", persona.name, a, got, want)
			}
			if got {
				drawn++
			}
		}
	}
	if drawn == 0 {
		t.Errorf("no persona saw a Plan or Apply button: the page offers none, so the test shows nothing")
	}
}
