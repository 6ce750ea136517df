package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/gitops"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/timeline"
	"github.com/hanzoai/deploy-web/web/paths"
)

// promoteEnvConfig: dev -> staging (push) -> prod (protected, branch,
// soak 1h), and qa after dev whose overlay has no images: entry.
const promoteEnvConfig = `
environments:
  - name: dev
    cluster: {context: test}
    namespace: dev-ns
    source: {repo: %[1]q, ref: main, path: overlays/dev}
    catalog: catalog.json
  - name: staging
    cluster: {context: test}
    namespace: staging-ns
    source: {repo: %[1]q, ref: main, path: overlays/staging}
    catalog: catalog.json
    writeBack: {mode: push}
    promotion: {after: dev}
  - name: prod
    cluster: {context: test}
    namespace: prod-ns
    protected: true
    source: {repo: %[1]q, ref: main, path: overlays/prod}
    catalog: catalog.json
    writeBack: {mode: branch}
    promotion: {after: staging, soak: 1h}
  - name: qa
    cluster: {context: test}
    namespace: qa-ns
    source: {repo: %[1]q, ref: main, path: overlays/qa}
    catalog: catalog.json
    writeBack: {mode: push}
    promotion: {after: dev}
`

const promoteRoles = `bindings:
  - role: viewer
    groups: [viewers]
  - role: deployer
    groups: [deployers]
  - role: deployer
    groups: [staging-deployers]
    scope: {environments: [dev, staging]}
  - role: approver
    groups: [approvers]
`

// promoteTree is the repository: base/api.yaml at 1.2.0, and an overlay
// per environment whose images: entry reaches spec.image (qa's has none).
func promoteTree() fstest.MapFS {
	overlay := func(ns string) string {
		return "resources: [../../base]\nnamespace: " + ns + "\nconfigurations: [app-image.yaml]\nimages:\n  - {name: reg.example/acme/api, newTag: \"1.2.0\"}\n"
	}
	const appImage = "images:\n  - path: spec/image\n    kind: App\n"
	return fstest.MapFS{
		"catalog.json":                        {Data: []byte(`{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`)},
		"base/kustomization.yaml":             {Data: []byte("resources: [api.yaml]\n")},
		"base/api.yaml":                       {Data: []byte("apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: api\nspec:\n  image: reg.example/acme/api:1.2.0\n  replicas: 2\n")},
		"overlays/dev/kustomization.yaml":     {Data: []byte(overlay("dev-ns"))},
		"overlays/dev/app-image.yaml":         {Data: []byte(appImage)},
		"overlays/staging/kustomization.yaml": {Data: []byte(overlay("staging-ns"))},
		"overlays/staging/app-image.yaml":     {Data: []byte(appImage)},
		"overlays/prod/kustomization.yaml":    {Data: []byte(overlay("prod-ns"))},
		"overlays/prod/app-image.yaml":        {Data: []byte(appImage)},
		"overlays/qa/kustomization.yaml":      {Data: []byte("resources: [../../base]\nnamespace: qa-ns\n")},
	}
}

// promoteRows: dev runs api 1.5.0 (deployed at deployed), the others
// 1.2.0 for a day.
func promoteRows(deployed time.Time, health objrules.HealthStatus) []kubeview.AppRow {
	row := func(ns, version string, at time.Time, h objrules.HealthStatus) kubeview.AppRow {
		r := matrixRow(ns, "api", version, h)
		r.Image, r.LastDeployed = "reg.example/acme/api:"+version, at
		return r
	}
	return []kubeview.AppRow{row("dev-ns", "1.5.0", deployed, health), row("staging-ns", "1.2.0", testNow.Add(-24*time.Hour), objrules.HealthHealthy),
		row("prod-ns", "1.2.0", testNow.Add(-24*time.Hour), objrules.HealthHealthy), row("qa-ns", "1.2.0", testNow.Add(-24*time.Hour), objrules.HealthHealthy)}
}

type promoteFixture struct {
	ts    *testServer
	fc    *fakeCommit
	store *promotion.Store
	audit *memAudit
}

// memAudit keeps the records appended.
type memAudit struct{ recs []audit.Record }

func (m *memAudit) Append(_ context.Context, r audit.Record) (audit.Record, error) {
	m.recs = append(m.recs, r)
	return r, nil
}

func (m *memAudit) List(context.Context, audit.Filter) (audit.Page, error) { return audit.Page{}, nil }

func (m *memAudit) verbs() []string {
	var out []string
	for _, r := range m.recs {
		out = append(out, string(r.Verb)+":"+string(r.Outcome)+":"+r.Actor.Subject)
	}
	return out
}

// promoteTimeline is a real timeline store (on a fake clientset) that
// has observed each App of rows since observed, in the states the rows
// say, and holds entries; its clock is testNow after that.
func promoteTimeline(t *testing.T, rows []kubeview.AppRow, observed time.Time, entries ...timeline.Entry) *timeline.Store {
	t.Helper()
	var mu sync.Mutex
	now := observed
	store := loadedTimeline(t, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	for _, r := range rows {
		store.Observe(timeline.App{Cluster: "in-cluster", Namespace: r.Namespace, Name: r.Name},
			timeline.State{Health: string(r.Health.Status), Sync: string(r.Sync.Status), Revision: r.Version})
	}
	mu.Lock()
	now = testNow
	mu.Unlock()
	store.Record(entries...)
	return store
}

// promoteServer serves the environments over rows, with a timeline that
// has recorded them for two days and holds entries.
func promoteServer(t *testing.T, rows []kubeview.AppRow, entries ...timeline.Entry) *promoteFixture {
	t.Helper()
	return promoteServerObserved(t, rows, testNow.Add(-48*time.Hour), entries...)
}

// promoteServerObserved is promoteServer with a timeline that has
// recorded the Apps since observed.
func promoteServerObserved(t *testing.T, rows []kubeview.AppRow, observed time.Time, entries ...timeline.Entry) *promoteFixture {
	t.Helper()
	return promoteServerConfig(t, rows, observed, promoteEnvConfig, nil, entries...)
}

// promoteServerConfig is promoteServerObserved with the environments file
// envConfig (its %[1]q the repository) and the promotion checks'
// evaluator checks (nil: the default).
func promoteServerConfig(t *testing.T, rows []kubeview.AppRow, observed time.Time, envConfig string, checks gitops.MetricChecks, entries ...timeline.Entry) *promoteFixture {
	t.Helper()
	return promoteServerWith(t, rows, observed, envConfig, checks, nil, entries...)
}

// promoteServerWith is promoteServerConfig with more options set by also
// (nil: none), after the fixture's own.
func promoteServerWith(t *testing.T, rows []kubeview.AppRow, observed time.Time, envConfig string, checks gitops.MetricChecks, also func(*Options), entries ...timeline.Entry) *promoteFixture {
	t.Helper()
	tl := promoteTimeline(t, rows, observed, entries...)
	files := map[string]string{}
	for p, f := range promoteTree() {
		files[p] = string(f.Data)
	}
	repo := "file://" + gitservertest.New(t, files, gitservertest.Options{}).Bare
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(envConfig, repo)), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runner := hangingRunner(t, cfg) // a plan started stays going
	policy, err := roles.Parse("roles.yaml", []byte(promoteRoles), roles.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &promoteFixture{fc: &fakeCommit{tree: promoteTree()}, store: promotion.NewStore(fake.NewClientset().CoreV1(), "deploy-web", signtest.Keys()), audit: &memAudit{}}
	view := newFakeView(nil)
	view.namespaces = []string{"dev-ns", "staging-ns", "prod-ns", "qa-ns"}
	f.ts = newTestServer(t, view, func(o *Options) {
		o.Clusters = []Cluster{{Name: "in-cluster", View: &nsView{fakeView: view, rows: rows}}}
		o.Environments = runner
		o.GitCommit = f.fc.commit
		o.Promotions = f.store
		o.Audit = f.audit
		o.Roles = policy
		o.Timeline = tl
		o.Checks = checks
		if also != nil {
			also(o)
		}
	})
	return f
}

// as signs the fixture's server in as sub of group.
func (f *promoteFixture) as(sub, group string) {
	id := auth.Identity{Subject: sub, Email: sub + "@example.com", Name: sub, Groups: auth.NewGroupList([]string{group}), Expires: testNow.Add(time.Hour)}
	f.ts.auth.id = &id
}

// post sends a JSON POST and decodes the answer.
func (f *promoteFixture) post(t *testing.T, target, body string) (int, promotionOutcome, string) {
	t.Helper()
	w := f.ts.do(t, request{method: "POST", target: target, admin: true, header: jsonHeader, body: body})
	var out promotionOutcome
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	return w.Code, out, w.Body.String()
}

// TestPromoteIntoStaging: a deployer promotes dev's api into staging: the
// exact version is committed to staging's own overlay (nothing else) and a
// plan of staging starts; the record names the promoter.
func TestPromoteIntoStaging(t *testing.T) {
	f := promoteServer(t, promoteRows(testNow.Add(-time.Hour), objrules.HealthHealthy))
	f.as("dee", "deployers")
	code, out, body := f.post(t, paths.APIEnvPromotions("staging"), `{"from": "dev", "app": "api", "reason": "ship it"}`)
	if code != 200 || out.Decision != promotion.Perform || out.Commit == nil {
		t.Fatalf("POST promotions (staging) = %d %s, want 200 and a commit", code, body)
	}
	if out.Run == nil {
		t.Errorf("no plan of staging started after the commit: %s", body)
	}
	changed := f.fc.changed
	if len(changed) != 1 || !strings.Contains(changed["overlays/staging/kustomization.yaml"], `newTag: "1.5.0"`) {
		t.Errorf("the commit changed %v, want overlays/staging/kustomization.yaml alone at 1.5.0", changed)
	}
	if got := f.audit.verbs(); len(got) != 1 || got[0] != "promote:succeeded:dee" {
		t.Errorf("audit records = %v, want one promote:succeeded by dee", got)
	}
}

// TestPromoteRefusals: each gate refuses on its own, before any commit.
func TestPromoteRefusals(t *testing.T) {
	tests := []struct {
		name, sub, group string
		rows             []kubeview.AppRow
		target, body     string
		status           int
		want             string
		// entries are dev's api's timeline (none: Healthy throughout).
		entries []timeline.Entry
	}{
		{"younger than the soak", "dee", "deployers", promoteRows(testNow.Add(-5*time.Minute), objrules.HealthHealthy),
			"staging", `{"from": "dev", "app": "api"}`, 422, "for 5m0s of the 10m0s soak", nil},
		{"degraded source", "dee", "deployers", promoteRows(testNow.Add(-time.Hour), objrules.HealthDegraded),
			"staging", `{"from": "dev", "app": "api"}`, 422, "1.5.0 is Degraded in dev", nil},
		{"Degraded two minutes ago, recovered", "dee", "deployers", promoteRows(testNow.Add(-time.Hour), objrules.HealthHealthy),
			"staging", `{"from": "dev", "app": "api"}`, 422, "1.5.0 was Degraded in dev at 11:58:00 UTC for 40s: promotable at 12:08:40 UTC", degradedBand(testNow.Add(-2*time.Minute), 40*time.Second)},
		{"a viewer", "vera", "viewers", promoteRows(testNow.Add(-time.Hour), objrules.HealthHealthy),
			"staging", `{"from": "dev", "app": "api"}`, 403, "", nil},
		{"a deployer of another environment", "stan", "staging-deployers", promoteRows(testNow.Add(-25*time.Hour), objrules.HealthHealthy),
			"prod", `{"from": "staging", "app": "api"}`, 403, "", nil},
		{"not the environment before", "dee", "deployers", promoteRows(testNow.Add(-time.Hour), objrules.HealthHealthy),
			"prod", `{"from": "dev", "app": "api"}`, 400, "prod is promoted from staging", nil},
		{"unknown field", "dee", "deployers", promoteRows(testNow.Add(-time.Hour), objrules.HealthHealthy),
			"staging", `{"from": "dev", "force": true}`, 400, "body:", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := promoteServer(t, tt.rows, tt.entries...)
			f.as(tt.sub, tt.group)
			code, _, body := f.post(t, paths.APIEnvPromotions(tt.target), tt.body)
			if code != tt.status || !strings.Contains(body, tt.want) {
				t.Errorf("POST promotions (%s) = %d %s, want %d containing %q", tt.target, code, body, tt.status, tt.want)
			}
			if len(f.fc.requests()) != 0 {
				t.Errorf("a refused promotion reached the write-back")
			}
			if len(f.fc.changed) != 0 {
				t.Errorf("a refused promotion changed %v", f.fc.changed)
			}
		})
	}
}

// degradedBand is dev's api going Degraded at from and back to Healthy
// after d.
func degradedBand(from time.Time, d time.Duration) []timeline.Entry {
	app := timeline.App{Cluster: "in-cluster", Namespace: "dev-ns", Name: "api"}
	return []timeline.Entry{{Time: from, App: app, Kind: timeline.KindHealth, From: "Healthy", To: "Degraded", Revision: "1.5.0"},
		{Time: from.Add(d), App: app, Kind: timeline.KindHealth, From: "Degraded", To: "Healthy", Revision: "1.5.0"}}
}

// TestPromoteProtectedTwoPerson: a promotion into protected prod is a
// request; its requester cannot approve it; another approver can, and the
// approval writes a review branch (never prod's own branch) and plans
// nothing; each step is an audit record.
func TestPromoteProtectedTwoPerson(t *testing.T) {
	rows := promoteRows(testNow.Add(-time.Hour), objrules.HealthHealthy)
	rows[1].Version, rows[1].Image = "1.5.0", "reg.example/acme/api:1.5.0" // staging runs 1.5.0 for a day
	f := promoteServer(t, rows)
	f.as("dee", "deployers")
	code, out, body := f.post(t, paths.APIEnvPromotions("prod"), `{"from": "staging", "app": "api"}`)
	if code != 202 || out.Request == nil || out.Request.State != promotion.StatePending {
		t.Fatalf("POST promotions (prod) = %d %s, want 202 and a pending request", code, body)
	}
	if len(f.fc.requests()) != 0 {
		t.Fatalf("a request wrote to the repository")
	}
	id := out.Request.ID
	// An approver finds it on the matrix, linked to its dialog.
	f.as("abe", "approvers")
	pending := byTestID(parseHTML(t, f.ts.get(t, paths.Environments(), nil).Body.String()), "pending-promotion")
	if len(pending) != 1 || attr(pending[0], "data-id") != id || !strings.Contains(text(pending[0]), "dee@example.com") {
		t.Errorf("the matrix lists %d pending requests, want request %s by dee", len(pending), id)
	}
	// The requester is refused, even with the approver role.
	f.as("dee", "approvers")
	if code, _, body := f.post(t, paths.APIEnvPromotionApprove("prod", id), ``); code != 403 || !strings.Contains(body, "another approver") {
		t.Errorf("approval by the requester = %d %s, want 403", code, body)
	}
	// A deployer who is not an approver may not approve.
	f.as("dan", "deployers")
	if code, _, _ := f.post(t, paths.APIEnvPromotionApprove("prod", id), ``); code != 403 {
		t.Errorf("approval by a deployer = %d, want 403", code)
	}
	f.as("abe", "approvers")
	code, out, body = f.post(t, paths.APIEnvPromotionApprove("prod", id), ``)
	if code != 200 || out.Commit == nil || out.Request == nil || out.Request.State != promotion.StateApproved {
		t.Fatalf("approval by abe = %d %s, want 200, approved and a commit", code, body)
	}
	reqs := f.fc.requests()
	if len(reqs) != 1 || reqs[0].Mode != "branch" || reqs[0].Branch != "main" {
		t.Errorf("write-back requests = %+v, want one in mode branch based on main", reqs)
	}
	if out.Run != nil {
		t.Errorf("an approval into protected prod started run %+v, want none", out.Run)
	}
	if !strings.Contains(f.fc.changed["overlays/prod/kustomization.yaml"], `newTag: "1.5.0"`) {
		t.Errorf("the review commit changed %v, want prod's overlay at 1.5.0", f.fc.changed)
	}
	// Decided once.
	if code, _, _ := f.post(t, paths.APIEnvPromotionReject("prod", id), ``); code != 409 {
		t.Errorf("a rejection after the approval = %d, want 409", code)
	}
	want := []string{"promote-request:succeeded:dee", "promote-approve:refused:dee", "promote-approve:succeeded:abe"}
	if got := f.audit.verbs(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("audit records = %v, want %v", got, want)
	}
}

// TestPromoteDialogGates: the dialog shows each gate's state before the
// button, and the button is disabled exactly when the POST would refuse.
func TestPromoteDialogGates(t *testing.T) {
	tests := []struct {
		name     string
		deployed time.Time
		sub      string
		group    string
		states   string
		enabled  bool
		// observed is since when the timeline has recorded the Apps
		// (zero: two days), entries dev's api's.
		observed time.Time
		entries  []timeline.Entry
		// msg is in the soak gate's text.
		msg string
	}{
		{"soaked", testNow.Add(-time.Hour), "dee", "deployers", "passed not-configured not-configured passed not-configured", true, time.Time{}, nil, ""},
		{"too young", testNow.Add(-time.Minute), "dee", "deployers", "failed not-configured not-configured passed not-configured", false, time.Time{}, nil, "promotable at 12:09:00 UTC"},
		{"a viewer", testNow.Add(-time.Hour), "vera", "viewers", "passed not-configured not-configured failed not-configured", false, time.Time{}, nil, ""},
		{"Degraded inside the soak", testNow.Add(-time.Hour), "dee", "deployers", "failed not-configured not-configured passed not-configured", false,
			time.Time{}, degradedBand(testNow.Add(-5*time.Minute), time.Minute), "Degraded in dev at 11:55:00 UTC for 1m0s: promotable at 12:06:00 UTC"},
		{"Degraded before the soak", testNow.Add(-time.Hour), "dee", "deployers", "passed not-configured not-configured passed not-configured", true,
			time.Time{}, degradedBand(testNow.Add(-20*time.Minute), time.Minute), "has run Healthy and undrifted in dev"},
		{"history missing: the console started 3 minutes ago", testNow.Add(-time.Hour), "dee", "deployers", "failed not-configured not-configured passed not-configured", false,
			testNow.Add(-3 * time.Minute), nil, "history is missing: the timeline has recorded 1.5.0 in dev only since 11:57:00 UTC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			observed := tt.observed
			if observed.IsZero() {
				observed = testNow.Add(-48 * time.Hour)
			}
			f := promoteServerObserved(t, promoteRows(tt.deployed, objrules.HealthHealthy), observed, tt.entries...)
			f.as(tt.sub, tt.group)
			w := f.ts.get(t, paths.EnvPromote("staging", "dev", "api"), nil)
			doc := parseHTML(t, w.Body.String())
			var states []string
			for _, g := range byTestID(doc, "gate") {
				states = append(states, attr(g, "data-state"))
			}
			if got := strings.Join(states, " "); got != tt.states {
				t.Errorf("gate states = %q, want %q", got, tt.states)
			}
			if gates := byTestID(doc, "gate"); tt.msg != "" && (len(gates) == 0 || !strings.Contains(text(gates[0]), tt.msg)) {
				t.Errorf("the soak gate does not say %q", tt.msg)
			}
			b := byTestID(doc, "promote-button")
			if len(b) != 1 {
				t.Fatalf("%d promote buttons, want 1", len(b))
			}
			if enabled := !hasAttr(b[0], "disabled"); enabled != tt.enabled {
				t.Errorf("promote button enabled = %t, want %t", enabled, tt.enabled)
			}
		})
	}
}

// TestPromoteReject: another approver rejects a request: nothing is
// written, and the request cannot be approved afterwards.
func TestPromoteReject(t *testing.T) {
	rows := promoteRows(testNow.Add(-time.Hour), objrules.HealthHealthy)
	rows[1].Version, rows[1].Image = "1.5.0", "reg.example/acme/api:1.5.0"
	f := promoteServer(t, rows)
	f.as("dee", "deployers")
	code, out, body := f.post(t, paths.APIEnvPromotions("prod"), `{"from": "staging"}`)
	if code != 202 || out.Request == nil {
		t.Fatalf("POST promotions (prod, every App) = %d %s, want 202", code, body)
	}
	f.as("abe", "approvers")
	code, got, body := f.post(t, paths.APIEnvPromotionReject("prod", out.Request.ID), ``)
	if code != 200 || got.Request == nil || got.Request.State != promotion.StateRejected {
		t.Fatalf("reject = %d %s, want 200 and rejected", code, body)
	}
	if code, _, _ := f.post(t, paths.APIEnvPromotionApprove("prod", out.Request.ID), ``); code != 409 {
		t.Errorf("approve after a rejection = %d, want 409", code)
	}
	if len(f.fc.requests()) != 0 {
		t.Errorf("a rejected request reached the write-back")
	}
	want := "promote-request:succeeded:dee promote-reject:succeeded:abe"
	if got := strings.Join(f.audit.verbs(), " "); got != want {
		t.Errorf("audit records = %q, want %q", got, want)
	}
}

// TestMatrixPromoteButtonsFollowRoles: the matrix draws "Promote to X"
// from the decision the POST enforces: none for a viewer, staging only for
// a deployer of dev and staging, both for a deployer everywhere.
func TestMatrixPromoteButtonsFollowRoles(t *testing.T) {
	tests := []struct {
		sub, group string
		want       []string
	}{
		{"vera", "viewers", nil},
		{"stan", "staging-deployers", []string{"staging"}},
		{"dee", "deployers", []string{"prod", "qa", "staging"}},
	}
	for _, tt := range tests {
		t.Run(tt.group, func(t *testing.T) {
			f := promoteServer(t, promoteRows(testNow.Add(-time.Hour), objrules.HealthHealthy))
			f.as(tt.sub, tt.group)
			targets := map[string]bool{}
			for _, a := range byTestID(parseHTML(t, f.ts.get(t, paths.Environments(), nil).Body.String()), "matrix-promote") {
				targets[attr(a, "data-target")] = true
			}
			var got []string
			for _, env := range []string{"prod", "qa", "staging"} {
				if targets[env] {
					got = append(got, env)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("Promote targets drawn = %v, want %v", got, tt.want)
			}
			// Each drawn target is one the POST lets through the route.
			for env := range targets {
				if code, _, body := f.post(t, paths.APIEnvPromotions(env), `{"app": "nothing"}`); code == 403 {
					t.Errorf("Promote to %s is drawn but the POST answers 403: %s", env, body)
				}
			}
		})
	}
}

// TestPromoteOverridesABase: qa's overlay has no images: entry and the
// App's version lives in base/api.yaml, which dev and staging render too:
// the promotion commits an override in overlays/qa alone (gitops's
// stayInEnv), and no other environment's render changes.
func TestPromoteOverridesABase(t *testing.T) {
	f := promoteServer(t, promoteRows(testNow.Add(-time.Hour), objrules.HealthHealthy))
	f.as("dee", "deployers")
	code, _, body := f.post(t, paths.APIEnvPromotions("qa"), `{"from": "dev", "app": "api"}`)
	if code != 200 {
		t.Fatalf("POST promotions (qa) = %d %s, want 200", code, body)
	}
	if got := f.fc.changed["overlays/qa/kustomization.yaml"]; len(f.fc.changed) != 1 || !strings.Contains(got, "value: reg.example/acme/api:1.5.0") || !strings.Contains(got, "path: /spec/image") {
		t.Errorf("changed files = %v, want overlays/qa/kustomization.yaml alone with an override of api's spec.image to 1.5.0", f.fc.changed)
	}
}
