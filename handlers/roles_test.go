package handlers

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/paths"
)

// rolesServer is a test server over testRows (api and web in apps, cron in
// infra) with the walk's roles, signed in as persona name.
func rolesServer(t *testing.T, name string) *testServer {
	t.Helper()
	ts := newTestServer(t, newFakeView(testRows()), func(o *Options) { o.Roles = walkPolicy(t) })
	signIn(t, ts, name)
	return ts
}

// signIn signs ts's requests in as the walk's persona name.
func signIn(t *testing.T, ts *testServer, name string) {
	t.Helper()
	for _, p := range walkPersonas() {
		if p.name == name {
			id := p.id
			ts.auth.id = &id
			return
		}
	}
	t.Fatalf("no persona %q", name)
}

// TestFleetShowsOnlyVisibleApps: a person who may view only some Apps gets
// only those rows, and counts, totals and pages over them alone; one who
// may view every App gets the whole list.
func TestFleetShowsOnlyVisibleApps(t *testing.T) {
	names := func(rows []kubeview.AppRow) []string {
		var out []string
		for _, r := range rows {
			out = append(out, r.Name)
		}
		return out
	}
	for _, tt := range []struct {
		persona, query string
		wantItems      []string
		wantTotal      int
		wantContinue   string
		wantCounts     map[objrules.HealthStatus]int
		wantFleet      int
	}{
		{"deployer (scoped)", "", []string{"api", "web"}, 2, "", map[objrules.HealthStatus]int{objrules.HealthHealthy: 1, objrules.HealthProgressing: 1}, 2},
		{"deployer (scoped)", "?health=Healthy", []string{"api"}, 1, "", map[objrules.HealthStatus]int{objrules.HealthHealthy: 1, objrules.HealthProgressing: 1}, 2},
		{"deployer (scoped)", "?limit=1", []string{"api"}, 2, "vis.1", map[objrules.HealthStatus]int{objrules.HealthHealthy: 1, objrules.HealthProgressing: 1}, 2},
		{"deployer (scoped)", "?limit=1&continue=vis.1", []string{"web"}, 2, "", map[objrules.HealthStatus]int{objrules.HealthHealthy: 1, objrules.HealthProgressing: 1}, 2},
		{"viewer", "", []string{"api", "web", "cron"}, 3, "", map[objrules.HealthStatus]int{objrules.HealthHealthy: 1, objrules.HealthProgressing: 1, objrules.HealthMissing: 1}, 3},
	} {
		ts := rolesServer(t, tt.persona)
		w := ts.get(t, paths.APIApplications()+tt.query, nil)
		if w.Code != http.StatusOK {
			t.Fatalf("%s: GET applications%s = %d, want 200: %s", tt.persona, tt.query, w.Code, w.Body)
		}
		var got applicationsResponse
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		for h, n := range got.Counts.Health {
			if n == 0 {
				delete(got.Counts.Health, h)
			}
		}
		if !slices.Equal(names(got.Items), tt.wantItems) || got.Total != tt.wantTotal || got.Continue != tt.wantContinue ||
			got.Counts.Fleet != tt.wantFleet || got.Counts.Total != tt.wantFleet || !maps.Equal(got.Counts.Health, tt.wantCounts) {
			t.Errorf("%s: GET applications%s = items %q total %d continue %q fleet %d counts.total %d health %v; want %q %d %q %d %d %v",
				tt.persona, tt.query, names(got.Items), got.Total, got.Continue, got.Counts.Fleet, got.Counts.Total, got.Counts.Health,
				tt.wantItems, tt.wantTotal, tt.wantContinue, tt.wantFleet, tt.wantFleet, tt.wantCounts)
		}
	}

	ts := rolesServer(t, "deployer (scoped)")
	if w := ts.get(t, paths.APIApplications()+"?continue=set.1", nil); w.Code != http.StatusBadRequest {
		t.Errorf("GET applications with another list's continue token = %d, want 400", w.Code)
	}
	doc := parseHTML(t, ts.get(t, "/", nil).Body.String())
	if rows := byTestID(doc, "app-row"); len(rows) != 2 {
		t.Errorf("fleet page for the scoped deployer: %d rows, want 2 (api, web)", len(rows))
	}
	if n := text(oneByTestID(t, doc, "count-health-Missing")); !slices.Contains(strings.Fields(n), "0") {
		t.Errorf("fleet page for the scoped deployer: Missing count %q, want 0 (cron is not visible)", n)
	}
}

// TestMe: /me and its JSON list the person's relevant groups, each role
// with its source and what each action comes to; the header links to it.
func TestMe(t *testing.T) {
	ts := rolesServer(t, "deployer (scoped)")
	w := ts.get(t, paths.APIMe(), nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s = %d, want 200: %s", paths.APIMe(), w.Code, w.Body)
	}
	var me struct {
		Subject string   `json:"subject"`
		Groups  []string `json:"groups"`
		Roles   []struct {
			Role, Where, Source, Via string
		} `json:"roles"`
		Actions []struct {
			Action              string
			Allowed, Everywhere bool
		} `json:"actions"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &me); err != nil {
		t.Fatal(err)
	}
	if me.Subject != "dee" || !slices.Equal(me.Groups, []string{"deployers"}) || len(me.Roles) != 2 ||
		me.Roles[0].Role != "deployer" || me.Roles[0].Source != "roles.yaml bindings[2]" || me.Roles[0].Via != `group "deployers"` ||
		me.Roles[1].Source != "roles.yaml bindings[3]" || me.Roles[0].Where == "everywhere" {
		t.Errorf("GET /v1/deploy/me = %+v, want dee's two scoped deployer bindings from group deployers", me)
	}
	want := map[string][2]bool{"view": {true, false}, "sync": {true, false}, "logs": {false, false}, "freeze": {false, false}, "secret-values": {false, false}, "approve": {false, false}}
	for _, a := range me.Actions {
		if w, ok := want[a.Action]; ok && (a.Allowed != w[0] || a.Everywhere != w[1]) {
			t.Errorf("me action %s = allowed %v everywhere %v, want %v %v", a.Action, a.Allowed, a.Everywhere, w[0], w[1])
		}
	}
	if len(me.Actions) != len(roles.Actions()) {
		t.Errorf("me lists %d actions, want every one (%d)", len(me.Actions), len(roles.Actions()))
	}

	doc := parseHTML(t, ts.get(t, paths.Me(), nil).Body.String())
	if n := len(byTestID(doc, "me-role")); n != 2 {
		t.Errorf("GET /me: %d role rows, want 2", n)
	}
	if a := oneByTestID(t, doc, "user-name"); attr(a, "href") != paths.Me() {
		t.Errorf("header user name links to %q, want %q", attr(a, "href"), paths.Me())
	}
}

// TestEnvListShowsOnlyVisibleEnvironments: the environments page lists the
// environments the person may view (the scoped deployer: dev, not prod).
func TestEnvListShowsOnlyVisibleEnvironments(t *testing.T) {
	for _, tt := range []struct {
		persona string
		want    []string
	}{
		{"deployer (scoped)", []string{"dev"}},
		{"viewer", []string{"dev", "prod"}},
	} {
		ts := envServer(t, fake.NewClientset())
		ts.srv.opts.Roles = walkPolicy(t)
		for _, p := range walkPersonas() {
			if p.name == tt.persona {
				id := p.id
				ts.auth.id = &id
			}
		}
		var got []string
		for _, row := range byTestID(parseHTML(t, ts.get(t, paths.Environments(), nil).Body.String()), "env-row") {
			got = append(got, attr(row, "data-env"))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: GET /environments lists %q, want %q", tt.persona, got, tt.want)
		}
	}
}

// TestNavAuditDrawnByItsRoute: the header's Audit entry is drawn exactly
// when the person may open /audit (its route's action, Admin).
func TestNavAuditDrawnByItsRoute(t *testing.T) {
	for _, tt := range []struct {
		persona string
		want    bool
	}{
		{"deployer (scoped)", false},
		{"superadmin (group)", true},
		{"superadmin (admin claim)", true},
	} {
		ts := rolesServer(t, tt.persona)
		doc := parseHTML(t, ts.get(t, paths.Fleet(nil), nil).Body.String())
		if got := len(byTestID(doc, "nav-audit")) == 1; got != tt.want {
			t.Errorf("%s: Audit in the header = %v, want %v", tt.persona, got, tt.want)
		}
		if code := ts.get(t, paths.Audit(nil), nil).Code; (code == http.StatusOK) != tt.want {
			t.Errorf("%s: GET /audit = %d, want 200 iff the entry is drawn (%v)", tt.persona, code, tt.want)
		}
	}
}
