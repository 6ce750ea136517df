package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/release"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/paths"
)

// TestDecideOperate: the decision on a day-2 action apart from the role
// and the freezes: the kinds each action applies to, the replicas' and
// the reason's bounds, and self-heal (a scale of an App its environment
// heals is refused unless auto-sync is paused; a restart is allowed).
func TestDecideOperate(t *testing.T) {
	dep := release.Target{Group: "apps", Kind: "Deployment", Namespace: "apps", Name: "web"}
	sts := release.Target{Group: "apps", Kind: "StatefulSet", Namespace: "apps", Name: "db"}
	ds := release.Target{Group: "apps", Kind: "DaemonSet", Namespace: "apps", Name: "agent"}
	cj := release.Target{Group: "batch", Kind: "CronJob", Namespace: "apps", Name: "nightly"}
	pod := release.Target{Kind: "Pod", Namespace: "apps", Name: "web-1"}
	svc := release.Target{Kind: "Service", Namespace: "apps", Name: "web"}
	app := release.Target{Group: "hanzo.ai", Kind: "App", Namespace: "apps", Name: "web", App: true}
	healed := selfHeal{Env: "dev", On: true}
	paused := selfHeal{Env: "dev", On: true, Paused: true}
	op := func(o release.Op, t release.Target, n int) release.Operation {
		return release.Operation{Op: o, App: "web", Target: t, Replicas: n}
	}
	tests := []struct {
		name   string
		o      release.Operation
		sh     selfHeal
		status int    // 0: allowed
		want   string // in the refusal's public text
	}{
		{"restart a Deployment", op(release.OpRestart, dep, 0), selfHeal{}, 0, ""},
		{"restart a StatefulSet", op(release.OpRestart, sts, 0), selfHeal{}, 0, ""},
		{"restart a DaemonSet", op(release.OpRestart, ds, 0), selfHeal{}, 0, ""},
		{"restart a Pod", op(release.OpRestart, pod, 0), selfHeal{}, http.StatusUnprocessableEntity, "restart does not apply to a Pod"},
		{"restart the App", op(release.OpRestart, app, 0), selfHeal{}, http.StatusUnprocessableEntity, "restart does not apply to a App"},
		{"scale a Deployment", op(release.OpScale, dep, 3), selfHeal{}, 0, ""},
		{"scale a StatefulSet to 0", op(release.OpScale, sts, 0), selfHeal{}, 0, ""},
		{"scale the App to 1000", op(release.OpScale, app, 1000), selfHeal{}, 0, ""},
		{"scale a DaemonSet", op(release.OpScale, ds, 2), selfHeal{}, http.StatusUnprocessableEntity, "scale does not apply to a DaemonSet"},
		{"scale a Service", op(release.OpScale, svc, 2), selfHeal{}, http.StatusUnprocessableEntity, "scale does not apply to a Service"},
		{"scale to 1001", op(release.OpScale, dep, 1001), selfHeal{}, http.StatusBadRequest, "replicas: 1001 is out of range 0-1000"},
		{"scale to -1", op(release.OpScale, dep, -1), selfHeal{}, http.StatusBadRequest, "replicas: -1 is out of range 0-1000"},
		{"suspend a CronJob", op(release.OpSuspend, cj, 0), selfHeal{}, 0, ""},
		{"resume a CronJob", op(release.OpResume, cj, 0), selfHeal{}, 0, ""},
		{"suspend a Deployment", op(release.OpSuspend, dep, 0), selfHeal{}, http.StatusUnprocessableEntity, "suspend does not apply to a Deployment"},
		{"delete a Pod", op(release.OpDelete, pod, 0), selfHeal{}, 0, ""},
		{"delete a Deployment", op(release.OpDelete, dep, 0), selfHeal{}, http.StatusUnprocessableEntity, "delete does not apply to a Deployment"},
		{"delete the App", op(release.OpDelete, app, 0), selfHeal{}, http.StatusUnprocessableEntity, "delete does not apply to a App"},
		{"unknown action", op("explode", dep, 0), selfHeal{}, http.StatusBadRequest, `unknown action "explode"`},
		{"reason too long", release.Operation{Op: release.OpRestart, App: "web", Target: dep, Reason: strings.Repeat("x", release.MaxReasonBytes+1)}, selfHeal{}, http.StatusBadRequest, "reason: at most 1024 bytes"},
		{"reason at the bound, after cleaning", release.Operation{Op: release.OpRestart, App: "web", Target: dep, Reason: strings.Repeat("x", release.MaxReasonBytes) + "\u202e"}, selfHeal{}, 0, ""},
		{"scale of a self-healed App", op(release.OpScale, app, 3), healed, http.StatusUnprocessableEntity, "self-heal would put the replicas back"},
		{"scale of a self-healed App's Deployment", op(release.OpScale, dep, 3), healed, http.StatusUnprocessableEntity, "pause its auto-sync first"},
		{"scale of a self-healed App, auto-sync paused", op(release.OpScale, app, 3), paused, 0, ""},
		{"restart of a self-healed App's Deployment", op(release.OpRestart, dep, 0), healed, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := releaseError(decideOperate(tt.o, tt.sh))
			if tt.status == 0 {
				if err != nil {
					t.Fatalf("decideOperate = %v, want allowed", err)
				}
				return
			}
			var he *httpError
			if !errors.As(err, &he) || he.Status != tt.status || !strings.Contains(he.Public, tt.want) {
				t.Fatalf("decideOperate = %v, want %d containing %q", err, tt.status, tt.want)
			}
		})
	}
}

// operateRoles: a viewer, a deployer (without operate), an operator
// (a deployer with operate: true, in namespace apps only).
const operateRoles = `bindings:
  - role: viewer
    groups: [viewers]
  - role: deployer
    groups: [deployers]
  - role: deployer
    groups: [operators]
    scope: {namespaces: [apps]}
    operate: true
`

// operatePersonas are the people of the operate tests.
var operatePersonas = map[string]auth.Identity{
	"viewer":   {Subject: "vera", Email: "vera@example.com", Groups: auth.NewGroupList([]string{"viewers"}), Expires: testNow.Add(time.Hour)},
	"deployer": {Subject: "dee", Email: "dee@example.com", Groups: auth.NewGroupList([]string{"deployers"}), Expires: testNow.Add(time.Hour)},
	"operator": {Subject: "otto", Email: "otto@example.com", Groups: auth.NewGroupList([]string{"operators"}), Expires: testNow.Add(time.Hour)},
	"admin":    {Subject: "ada", Email: "ada@example.com", Admin: true, Expires: testNow.Add(time.Hour)},
}

// opsView is walkView with trees: App web (in apps and infra) owns a
// Deployment, a Pod, a CronJob and a Service; its Deployment declares 2
// replicas.
type opsView struct{ walkView }

func (v opsView) Tree(ns, name string) (kubeview.Tree, error) {
	if _, err := v.LookupApp(ns, name); err != nil {
		return kubeview.Tree{}, err
	}
	node := func(group, version, kind, n string, depth int) kubeview.TreeNode {
		ref := kubeview.Ref{Group: group, Kind: kind, Namespace: ns, Name: n}
		return kubeview.TreeNode{Ref: ref.String(), Group: group, Version: version, Kind: kind, Namespace: ns, Name: n, UID: "uid-" + kind + "-" + n, Depth: depth}
	}
	return kubeview.Tree{Nodes: []kubeview.TreeNode{
		node("hanzo.ai", "v1", "App", name, 0),
		node("apps", "v1", "Deployment", name, 1),
		node("", "v1", "Pod", name+"-1", 2),
		node("batch", "v1", "CronJob", name+"-nightly", 1),
		node("", "v1", "Service", name, 1),
	}}, nil
}

func (v opsView) Object(ctx context.Context, ns, app string, ref kubeview.Ref) (*unstructured.Unstructured, kubeview.TreeNode, error) {
	tree, err := v.Tree(ns, app)
	if err != nil {
		return nil, kubeview.TreeNode{}, err
	}
	for _, n := range tree.Nodes {
		if n.Ref == ref.String() {
			u := &unstructured.Unstructured{Object: map[string]any{"kind": n.Kind, "metadata": map[string]any{"name": n.Name, "namespace": ns}, "spec": map[string]any{"replicas": int64(2)}}}
			return u, n, nil
		}
	}
	return nil, kubeview.TreeNode{}, kubeview.ErrNotInTree
}

func (v opsView) DriftOf(string) []objrules.DriftField { return nil }

// recordingOperator is an Operator that records the operations it got.
type recordingOperator struct {
	mu    sync.Mutex
	calls []string
}

func (o *recordingOperator) Operate(ctx context.Context, op release.Operation, user string) (release.OperationResult, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls = append(o.calls, string(op.Op)+" "+op.Target.Kind+" "+op.Target.Namespace+"/"+op.Target.Name)
	return release.OperationResult{Op: op.Op, Kind: op.Target.Kind, Namespace: op.Target.Namespace, Name: op.Target.Name, Before: "2 replicas", After: "3 replicas", Changed: true}, nil
}

func (o *recordingOperator) got() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.calls)
}

// operateServer is a server over opsView with operateRoles, a recording
// Operator, an audit trail and (frozen) a freeze of namespace apps.
func operateServer(t *testing.T, frozen bool) (*testServer, *recordingOperator, *audit.Store) {
	t.Helper()
	policy, err := roles.Parse("roles.yaml", []byte(operateRoles), roles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops := &recordingOperator{}
	store, _ := newTestAudit(t)
	gate := freeze.NewGate(freeze.NewStore(fake.NewClientset().CoreV1(), "deploy-web", signtest.Keys()).WithClock(func() time.Time { return testNow }))
	if frozen {
		if _, err := gate.Store().Add(t.Context(), freeze.Freeze{Scope: scope.Scope{Namespaces: []string{"apps"}},
			Start: testNow.Add(-time.Hour), End: testNow.Add(time.Hour), Reason: "release week", Author: freeze.Author{Email: "root@example.com", Subject: "root"}}); err != nil {
			t.Fatal(err)
		}
	}
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Clusters[0].Release = &recordingReleaser{}
		o.Clusters[0].Operations = ops
		o.Roles = policy
		o.Audit = store
		o.Freezes = gate
	})
	ts.srv.clusters[0].View = opsView{walkView{ts.view}}
	ts.handler = ts.srv.Handler()
	return ts, ops, store
}

// apiAction is the API URL of action on ref of App web in namespace ns
// of cluster in-cluster.
func apiAction(ns, ref, action string) string { return apiActionIn("in-cluster", ns, ref, action) }

// apiActionIn is the API URL of action on ref of App web in namespace ns
// of cluster.
func apiActionIn(cluster, ns, ref, action string) string {
	return paths.WithQuery(paths.APIResourceAction("web", ref, action), url.Values{"cluster": {cluster}, "namespace": {ns}})
}

// TestOperateAPI: who may act (operate, not deployer nor viewer, and only
// in the operator's scope), on what (only objects of the App's tree: any
// other ref is the 404 of every resource), with which input; each
// accepted action reaches the write seam once and leaves a record with
// before, after and the reason; each refusal after authentication leaves
// a refused record and writes nothing.
func TestOperateAPI(t *testing.T) {
	ts, ops, store := operateServer(t, false)
	const dep, pod, cj, svc, app = "apps:Deployment:apps:web", ":Pod:apps:web-1", "batch:CronJob:apps:web-nightly", ":Service:apps:web", "hanzo.ai:App:apps:web"
	tests := []struct {
		name, who, target, body string
		status                  int
		call                    string        // the operation made, "" none
		record                  audit.Outcome // "" none
	}{
		{"operator restarts a Deployment", "operator", apiAction("apps", dep, "restart"), `{"reason": "stuck \u202eworkers"}`, http.StatusOK, "restart Deployment apps/web", audit.OutcomeSucceeded},
		{"operator scales a Deployment", "operator", apiAction("apps", dep, "scale"), `{"replicas": 3}`, http.StatusOK, "scale Deployment apps/web", audit.OutcomeSucceeded},
		{"operator scales the App", "operator", apiAction("apps", app, "scale"), `{"replicas": 3}`, http.StatusOK, "scale App apps/web", audit.OutcomeSucceeded},
		{"operator suspends a CronJob", "operator", apiAction("apps", cj, "suspend"), ``, http.StatusOK, "suspend CronJob apps/web-nightly", audit.OutcomeSucceeded},
		{"operator deletes a Pod", "operator", apiAction("apps", pod, "delete"), ``, http.StatusOK, "delete Pod apps/web-1", audit.OutcomeSucceeded},
		{"superadmin restarts", "admin", apiAction("infra", "apps:Deployment:infra:web", "restart"), ``, http.StatusOK, "restart Deployment infra/web", audit.OutcomeSucceeded},
		{"deployer without operate", "deployer", apiAction("apps", dep, "restart"), ``, http.StatusForbidden, "", ""},
		{"viewer", "viewer", apiAction("apps", dep, "scale"), `{"replicas": 3}`, http.StatusForbidden, "", ""},
		{"operator outside its scope", "operator", apiAction("infra", "apps:Deployment:infra:web", "restart"), ``, http.StatusForbidden, "", ""},
		{"another App's Deployment", "operator", apiAction("apps", "apps:Deployment:apps:other", "restart"), ``, http.StatusNotFound, "", audit.OutcomeRefused},
		{"a Secret", "operator", apiAction("apps", ":Secret:apps:web", "delete"), ``, http.StatusNotFound, "", audit.OutcomeRefused},
		{"a kind not in the registry", "operator", apiAction("apps", "rbac.authorization.k8s.io:Role:apps:web", "delete"), ``, http.StatusBadRequest, "", audit.OutcomeRefused},
		{"restart a Service", "operator", apiAction("apps", svc, "restart"), ``, http.StatusUnprocessableEntity, "", audit.OutcomeRefused},
		{"delete a Deployment", "operator", apiAction("apps", dep, "delete"), ``, http.StatusUnprocessableEntity, "", audit.OutcomeRefused},
		{"scale to 1001", "operator", apiAction("apps", dep, "scale"), `{"replicas": 1001}`, http.StatusBadRequest, "", audit.OutcomeRefused},
		{"scale without replicas", "operator", apiAction("apps", dep, "scale"), ``, http.StatusBadRequest, "", audit.OutcomeRefused},
		{"scale to 2.5", "operator", apiAction("apps", dep, "scale"), `{"replicas": 2.5}`, http.StatusBadRequest, "", audit.OutcomeRefused},
		{"replicas on a restart", "operator", apiAction("apps", dep, "restart"), `{"replicas": 2}`, http.StatusBadRequest, "", audit.OutcomeRefused},
		{"unknown field", "operator", apiAction("apps", dep, "restart"), `{"force": true}`, http.StatusBadRequest, "", audit.OutcomeRefused},
		{"unknown action", "operator", apiAction("apps", dep, "explode"), ``, http.StatusBadRequest, "", audit.OutcomeRefused},
		{"reason too long", "operator", apiAction("apps", dep, "restart"), `{"reason": "` + strings.Repeat("x", release.MaxReasonBytes+1) + `"}`, http.StatusBadRequest, "", audit.OutcomeRefused},
		{"not the actions verb", "operator", "/v1/deploy/web/resource/" + dep + "/other/restart?cluster=in-cluster&namespace=apps", ``, http.StatusNotFound, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			callsBefore, recsBefore := len(ops.got()), len(records(t, store))
			id := operatePersonas[tt.who]
			ts.auth.id = &id
			w := ts.do(t, request{method: http.MethodPost, target: tt.target, admin: true, body: tt.body, header: map[string]string{"Content-Type": "application/json"}})
			if w.Code != tt.status {
				t.Fatalf("POST %s = %d %s, want %d", tt.target, w.Code, w.Body, tt.status)
			}
			if got := strings.Join(ops.got()[callsBefore:], ","); got != tt.call {
				t.Errorf("operations = %q, want %q", got, tt.call)
			}
			recs := records(t, store)
			if tt.record == "" {
				if len(recs) != recsBefore {
					t.Errorf("%d records, want %d (none)", len(recs), recsBefore)
				}
				return
			}
			if len(recs) != recsBefore+1 {
				t.Fatalf("%d records, want %d", len(recs), recsBefore+1)
			}
			r := recs[0]
			if r.Verb != audit.VerbOperate || r.Outcome != tt.record || r.App != "web" || r.Actor.Email != id.Email {
				t.Errorf("record = %s %s of %s by %s, want operate %s of web by %s", r.Verb, r.Outcome, r.App, r.Actor.Email, tt.record, id.Email)
			}
			if tt.record != audit.OutcomeSucceeded {
				return
			}
			var res operationResponse
			if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || res.Cluster != "in-cluster" || res.After != "3 replicas" {
				t.Errorf("answer = %s (%v), want the operation's result in cluster in-cluster", w.Body, err)
			}
			if r.Action == "" || r.Before != "2 replicas" || r.After != "3 replicas" || len(r.Objects) != 1 || r.Objects[0].Name == "" {
				t.Errorf("record = action %q, %q -> %q, objects %+v, want the action, before, after and the object", r.Action, r.Before, r.After, r.Objects)
			}
			if strings.Contains(tt.body, "reason") && r.Reason != "stuck workers" {
				t.Errorf("record's reason = %q, want %q (cleaned)", r.Reason, "stuck workers")
			}
		})
	}
}

// TestOperateFrozen: in a freeze a day-2 action is refused as a rollback
// is (409, reason frozen, nothing written, a refused record), a
// superadmin's break-glass goes through and is recorded with the action.
func TestOperateFrozen(t *testing.T) {
	ts, ops, store := operateServer(t, true)
	for _, tc := range []struct {
		name, who, body string
		status          int
		call            string
		outcome         audit.Outcome
		breakGlass      string
	}{
		{"operator", "operator", `{"replicas": 3}`, http.StatusConflict, "", audit.OutcomeRefused, ""},
		{"operator's break-glass", "operator", `{"replicas": 3, "breakGlass": {"reason": "spike"}}`, http.StatusConflict, "", audit.OutcomeRefused, ""},
		{"superadmin without break-glass", "admin", `{"replicas": 3}`, http.StatusConflict, "", audit.OutcomeRefused, ""},
		{"superadmin's break-glass", "admin", `{"replicas": 3, "breakGlass": {"reason": "Black Friday spike"}}`, http.StatusOK, "scale Deployment apps/web", audit.OutcomeSucceeded, "Black Friday spike"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(ops.got())
			id := operatePersonas[tc.who]
			ts.auth.id = &id
			w := ts.do(t, request{method: http.MethodPost, target: apiAction("apps", "apps:Deployment:apps:web", "scale"), admin: true, body: tc.body, header: map[string]string{"Content-Type": "application/json"}})
			if w.Code != tc.status {
				t.Fatalf("status = %d %s, want %d", w.Code, w.Body, tc.status)
			}
			if tc.status == http.StatusConflict {
				var e struct{ Error, Reason string }
				if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Reason != "frozen" || !strings.Contains(e.Error, "release week") {
					t.Errorf("answer = %s, want reason frozen naming the freeze", w.Body)
				}
			}
			if got := strings.Join(ops.got()[before:], ","); got != tc.call {
				t.Errorf("operations = %q, want %q", got, tc.call)
			}
			r := records(t, store)[0]
			if r.Verb != audit.VerbOperate || r.Outcome != tc.outcome || r.BreakGlass != tc.breakGlass {
				t.Errorf("record = %s %s (break-glass %q), want operate %s (break-glass %q)", r.Verb, r.Outcome, r.BreakGlass, tc.outcome, tc.breakGlass)
			}
		})
	}
}

// TestOperatePanel: the resource panel shows the actions the person may
// take on its object (those of its kind, with operate there; none to a
// deployer without operate); a button opens the confirmation (replicas
// filled in for a scale), and the form's answer is the result line.
func TestOperatePanel(t *testing.T) {
	ts, ops, _ := operateServer(t, false)
	panel := func(who, ref string) []string {
		t.Helper()
		id := operatePersonas[who]
		ts.auth.id = &id
		w := ts.get(t, "/clusters/in-cluster/apps/apps/web/resource/"+url.PathEscape(ref), map[string]string{"HX-Request": "true", "HX-Target": "panel"})
		if w.Code != http.StatusOK {
			t.Fatalf("panel of %s = %d %s", ref, w.Code, w.Body)
		}
		var got []string
		for _, b := range byTestID(parseHTML(t, w.Body.String()), "panel-operations") {
			for _, n := range byTag(b, "button") {
				got = append(got, attr(n, "data-action"))
			}
		}
		return got
	}
	for _, tc := range []struct {
		who, ref string
		want     []string
	}{
		{"operator", "apps:Deployment:apps:web", []string{"restart", "scale"}},
		{"operator", ":Pod:apps:web-1", []string{"delete"}},
		{"operator", "batch:CronJob:apps:web-nightly", []string{"suspend", "resume"}},
		{"operator", "hanzo.ai:App:apps:web", []string{"scale"}},
		{"operator", ":Service:apps:web", nil},
		{"admin", "apps:Deployment:apps:web", []string{"restart", "scale"}},
		{"deployer", "apps:Deployment:apps:web", nil},
		{"viewer", "apps:Deployment:apps:web", nil},
	} {
		if got := panel(tc.who, tc.ref); !slices.Equal(got, tc.want) {
			t.Errorf("panel(%s, %s) actions = %q, want %q", tc.who, tc.ref, got, tc.want)
		}
	}

	id := operatePersonas["operator"]
	ts.auth.id = &id
	w := ts.get(t, "/clusters/in-cluster/apps/apps/web/resource/apps:Deployment:apps:web/actions/scale", htmxHeader)
	doc := parseHTML(t, w.Body.String())
	if w.Code != http.StatusOK || attr(oneByTestID(t, doc, "operation-replicas"), "value") != "2" {
		t.Fatalf("scale confirmation = %d %s, want 200 with replicas 2", w.Code, w.Body)
	}
	if len(ops.got()) != 0 {
		t.Fatalf("the confirmation operated: %q", ops.got())
	}
	w = ts.do(t, request{method: http.MethodPost, target: "/clusters/in-cluster/apps/apps/web/resource/apps:Deployment:apps:web/actions/scale", admin: true,
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "HX-Request": "true"}, body: "replicas=3&reason=spike"})
	if w.Code != http.StatusOK || !strings.Contains(text(oneByTestID(t, parseHTML(t, w.Body.String()), "operation-result")), "scale of Deployment web: 2 replicas → 3 replicas") {
		t.Fatalf("scale form = %d %s, want the result line", w.Code, w.Body)
	}
	// A refusal is the error line, with a status htmx swaps.
	w = ts.do(t, request{method: http.MethodPost, target: "/clusters/in-cluster/apps/apps/web/resource/apps:Deployment:apps:web/actions/scale", admin: true,
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "HX-Request": "true"}, body: "replicas=5000"})
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(text(oneByTestID(t, parseHTML(t, w.Body.String()), "operation-error")), "out of range") {
		t.Fatalf("scale form with 5000 = %d %s, want 422 with the refusal", w.Code, w.Body)
	}
	if got := ops.got(); len(got) != 1 {
		t.Errorf("operations = %q, want the one scale", got)
	}
}

// desiredWeb renders App apps/web in environment dev.
type desiredWeb struct{}

func (desiredWeb) Lookup(group, kind, namespace, name string) (envsource.Desired, bool) {
	if group != "hanzo.ai" || kind != "App" || namespace != "apps" || name != "web" {
		return envsource.Desired{}, false
	}
	return envsource.Desired{Object: appObject("web", "reg.example/acme/web:1.2.0"), Environment: "dev", Path: "overlays/dev"}, true
}

// TestOperateSelfHeal: App web is rendered from git by dev, whose
// auto-sync self-heals: a scale is refused with the reason (nothing
// written, a refused record) until dev's auto-sync is paused; a restart
// is allowed all along; the scale confirmation says so before the click.
func TestOperateSelfHeal(t *testing.T) {
	cfg, err := envconfig.ParseConfig([]byte(`
environments:
  - name: dev
    cluster: {context: test}
    namespace: apps
    source: {repo: "https://git.example.com/shop/manifests.git", ref: main, path: overlays/dev}
    catalog: catalog.json
    writeBack: {mode: push, author: {name: "deploy-web", email: "deploy-web@example.com"}}
    autoSync: {enabled: true, selfHeal: true, interval: 15s}
`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cs := fake.NewClientset()
	runner := envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{Store: planstore.New(cs.CoreV1(), "deploy-web", 10)})
	as := &fakeAutoSync{pauses: autosync.NewPauses(cs.CoreV1(), "deploy-web", signtest.Keys(), func() time.Time { return testNow })}
	ops := &recordingOperator{}
	trail, _ := newTestAudit(t)
	ts := newTestServer(t, newFakeView(nil), withAudit(trail), func(o *Options) {
		o.Environments, o.AutoSync, o.Desired = runner, as, desiredWeb{}
		o.Clusters[0].Operations = ops
	})
	ts.srv.clusters[0].View = opsView{walkView{ts.view}}
	ts.handler = ts.srv.Handler()
	post := func(ref, action, body string) *httptest.ResponseRecorder {
		return ts.do(t, request{method: http.MethodPost, target: apiAction("apps", ref, action), admin: true, body: body, header: map[string]string{"Content-Type": "application/json"}})
	}
	w := post("hanzo.ai:App:apps:web", "scale", `{"replicas": 3}`)
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), "self-heal would put the replicas back") || !strings.Contains(w.Body.String(), `"SelfHeal"`) {
		t.Fatalf("scale of a self-healed App = %d %s, want 422 SelfHeal", w.Code, w.Body)
	}
	if r := records(t, trail)[0]; r.Verb != audit.VerbOperate || r.Outcome != audit.OutcomeRefused || !strings.Contains(r.Message, "self-heal") {
		t.Errorf("record = %s %s %q, want a refused operate naming self-heal", r.Verb, r.Outcome, r.Message)
	}
	doc := parseHTML(t, ts.get(t, "/clusters/in-cluster/apps/apps/web/resource/hanzo.ai:App:apps:web/actions/scale", htmxHeader).Body.String())
	if !strings.Contains(text(oneByTestID(t, doc, "operation-error")), "self-heal") {
		t.Errorf("the scale confirmation does not say self-heal refuses it")
	}
	if w := post("apps:Deployment:apps:web", "restart", ``); w.Code != http.StatusOK {
		t.Errorf("restart of a self-healed App's Deployment = %d %s, want 200", w.Code, w.Body)
	}
	if _, err := as.pauses.Pause(t.Context(), "dev", "spike", testNow.Add(time.Hour), "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	if w := post("hanzo.ai:App:apps:web", "scale", `{"replicas": 3}`); w.Code != http.StatusOK {
		t.Errorf("scale with dev's auto-sync paused = %d %s, want 200", w.Code, w.Body)
	}
	if got := ops.got(); !slices.Equal(got, []string{"restart Deployment apps/web", "scale App apps/web"}) {
		t.Errorf("operations = %q, want the restart and the scale after the pause", got)
	}
}
