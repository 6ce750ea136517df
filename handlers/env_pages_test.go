package handlers

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/planstore"
)

const testEnvConfig = `
environments:
  - name: dev
    cluster: {context: test}
    namespace: staging
    source: {path: manifests/dev}
    catalog: catalog.json
  - name: prod
    cluster: {context: test}
    namespace: production
    protected: true
    source: {path: manifests/prod}
    catalog: catalog.json
`

// envServer is a test server with the environments console over a fake
// cluster's ConfigMaps.
func envServer(t *testing.T, cs *fake.Clientset) *testServer {
	t.Helper()
	cfg, err := envconfig.ParseConfig([]byte(testEnvConfig), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runner := envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{Store: planstore.New(cs.CoreV1(), "deploy-web", 10)})
	return newTestServer(t, newFakeView(nil), func(o *Options) { o.Environments = runner })
}

// TestEnvHistorySurvivesRestart: the history lives in the cluster, so a
// dashboard started afresh (a new server, runner and store) shows it.
func TestEnvHistorySurvivesRestart(t *testing.T) {
	cs := fake.NewClientset()
	first := envServer(t, cs)
	report := `{"deployApply":{"environment":"dev","mode":"dry-run","conclusion":{"status":"ready","summary":"ready: 3 objects"}}}`
	saved, err := first.srv.opts.Environments.Store().Save(context.Background(),
		planstore.Entry{Environment: "dev", Action: "plan", Conclusion: "ready", Summary: "ready: 3 objects", User: "alice@example.com", Time: time.Now()},
		map[string][]byte{"report.json": []byte(report)})
	if err != nil {
		t.Fatal(err)
	}
	restarted := envServer(t, cs)
	for _, path := range []string{"/environments", "/environments/dev", "/environments/dev/reports/" + saved.ID} {
		w := restarted.get(t, path, nil)
		if w.Code != 200 {
			t.Fatalf("GET %s = %d", path, w.Code)
		}
		body := w.Body.String()
		if !strings.Contains(body, "alice@example.com") || !strings.Contains(body, "ready") {
			t.Errorf("GET %s after a restart does not show the stored plan", path)
		}
	}
	if w := restarted.get(t, "/environments/dev/reports/"+saved.ID+"/json", nil); w.Body.String() != report {
		t.Errorf("JSON download = %s, want the stored report", w.Body)
	}
	// A report of another environment is not reachable through this one.
	if w := restarted.get(t, "/environments/prod/reports/"+saved.ID, nil); w.Code != 404 {
		t.Errorf("GET prod's view of dev's report = %d, want 404", w.Code)
	}
}

// TestEnvApplyRefusals: a protected environment and a wrong confirmation
// are refused before anything runs, with the reason in the answer.
func TestEnvApplyRefusals(t *testing.T) {
	ts := envServer(t, fake.NewClientset())
	tests := []struct {
		path, confirm, want string
	}{
		{"/environments/prod/apply", "prod", "protected"},
		{"/environments/dev/apply", "prod", "does not match"},
		{"/environments/dev/apply", "", "confirm"},
		{"/environments/dev/apply", "dev", "no plan was named"},
	}
	for _, tt := range tests {
		w := ts.do(t, request{method: "POST", target: tt.path + "?x=1", admin: true,
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body: "confirm=" + tt.confirm})
		if w.Code != 422 || !strings.Contains(w.Body.String(), tt.want) {
			t.Errorf("POST %s confirm=%q = %d %s, want 422 naming %q", tt.path, tt.confirm, w.Code, w.Body, tt.want)
		}
	}
	if w := ts.do(t, request{method: "POST", target: "/environments/nope/plan", admin: true}); w.Code != 404 {
		t.Errorf("POST plan of an unknown environment = %d, want 404", w.Code)
	}
}

// planServer is a test server whose dev environment renders a local folder
// and whose cluster refuses connections; it returns the server and the
// store, and save, which stores a plan of dev (ready, or made stale).
func planServer(t *testing.T) (*testServer, *planstore.Store, func(conclusion string) string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"m/kustomization.yaml": "resources:\n  - cm.yaml\n",
		"m/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n",
		"catalog.json":         `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`,
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := envconfig.ParseConfig([]byte("environments:\n  - {name: dev, cluster: {context: test}, namespace: staging, source: {path: m}, catalog: catalog.json}\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	refused := &rest.Config{Host: "https://127.0.0.1:1"}
	store := planstore.New(fake.NewClientset().CoreV1(), "deploy-web", 10)
	runner := envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{Store: store, RestConfig: refused, ReportsDir: t.TempDir()})
	ts := newTestServer(t, newFakeView(nil), func(o *Options) { o.Environments = runner })
	env, _ := cfg.Env("dev")
	save := func(conclusion string) string {
		t.Helper()
		rep, err := deployplan.Plan(context.Background(), env, deployplan.Options{RestConfig: refused})
		if err != nil {
			t.Fatal(err)
		}
		if conclusion != deployplan.StatusBlocked {
			rep.DeployApply.RemainingBlockers = nil
			rep.DeployApply.Conclusion = deployplan.Conclusion{Status: deployplan.StatusReady, Summary: "ready"}
		}
		if conclusion == "stale" { // a ready plan of objects the source no longer renders
			rep.DeployApply.Source.RenderedDigest = "sha256:" + strings.Repeat("0", 64)
		}
		js, _ := rep.JSON()
		e, err := store.Save(context.Background(), planstore.Entry{Environment: "dev", Action: "plan", Conclusion: rep.Status(), User: "alice", Time: time.Now()},
			map[string][]byte{"report.json": js})
		if err != nil {
			t.Fatal(err)
		}
		return e.ID
	}
	return ts, store, save
}

// TestEnvApplyOfferedForTheLatestReadyPlan: the page offers Apply only
// with a finished ready plan on it, the form carries that plan's id, and
// the server applies only the latest ready plan.
func TestEnvApplyOfferedForTheLatestReadyPlan(t *testing.T) {
	ts, _, save := planServer(t)
	form := func(t *testing.T, path string) (plans []string, needsPlan bool) {
		t.Helper()
		w := ts.get(t, path, nil)
		if w.Code != 200 {
			t.Fatalf("GET %s = %d", path, w.Code)
		}
		doc := parseHTML(t, w.Body.String())
		for _, f := range byTestID(doc, "apply-form") {
			carried := ""
			for _, in := range byTag(f, "input") {
				if attr(in, "name") == "plan" {
					carried = attr(in, "value")
				}
			}
			if carried != attr(f, "data-plan") {
				t.Errorf("apply form for plan %q posts plan=%q", attr(f, "data-plan"), carried)
			}
			plans = append(plans, carried)
		}
		return plans, len(byTestID(doc, "apply-needs-plan")) == 1
	}
	post := func(plan string) *httptest.ResponseRecorder {
		return ts.do(t, request{method: "POST", target: "/environments/dev/apply", admin: true,
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body: "confirm=dev&plan=" + plan})
	}

	if plans, needs := form(t, "/environments/dev"); len(plans) != 0 || !needs {
		t.Errorf("before any plan: apply forms %q, needs-plan %v; want no form, a 'plan first' note", plans, needs)
	}
	if w := post(""); w.Code != 422 || !strings.Contains(w.Body.String(), "no plan was named") {
		t.Errorf("POST apply without a plan = %d %s, want 422 'no plan was named'", w.Code, w.Body)
	}

	blocked := save(deployplan.StatusBlocked)
	if plans, _ := form(t, "/environments/dev"); len(plans) != 0 {
		t.Errorf("with a blocked plan shown: apply forms %q, want none", plans)
	}
	if w := post(blocked); w.Code != 422 || !strings.Contains(w.Body.String(), "not ready") {
		t.Errorf("POST apply of a blocked plan = %d, want 422 'not ready'", w.Code)
	}

	older := save(deployplan.StatusReady)
	latest := save(deployplan.StatusReady)
	if plans, _ := form(t, "/environments/dev"); len(plans) != 1 || plans[0] != latest {
		t.Errorf("with the latest ready plan shown: apply forms %q, want one for %s", plans, latest)
	}
	if plans, _ := form(t, "/environments/dev/reports/"+older); len(plans) != 0 {
		t.Errorf("an older plan shown: apply forms %q, want none", plans)
	}
	for _, tt := range []struct{ plan, want string }{{older, "not the latest plan"}, {"no-such-plan", "is unknown"}} {
		if w := post(tt.plan); w.Code != 422 || !strings.Contains(w.Body.String(), tt.want) {
			t.Errorf("POST apply of plan %q = %d %s, want 422 naming %q", tt.plan, w.Code, w.Body, tt.want)
		}
	}
	// The latest ready plan is accepted: the run starts.
	w := post(latest)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `data-run="dev-`) {
		t.Errorf("POST apply of the latest ready plan = %d %s, want the run's panel", w.Code, w.Body)
	}
	waitRunDone(t, ts, w.Body.String())

	// A plan whose source moved since is accepted at the POST, then the
	// run refuses it before the cluster, and the panel says so.
	stale := save("stale")
	w = post(stale)
	if w.Code != 200 {
		t.Fatalf("POST apply of the latest (stale) plan = %d %s, want the run's panel", w.Code, w.Body)
	}
	panel := waitRunDone(t, ts, w.Body.String())
	if !strings.Contains(panel, "the source moved since this plan: plan again") || !strings.Contains(panel, `data-testid="run-refused"`) {
		t.Errorf("the stale apply's panel does not refuse it as stale:\n%s", panel)
	}
}

// waitRunDone polls the run whose panel is panel until it is done and
// returns its final panel.
func waitRunDone(t *testing.T, ts *testServer, panel string) string {
	t.Helper()
	_, rest, ok := strings.Cut(panel, `data-run="`)
	id, _, _ := strings.Cut(rest, `"`)
	if !ok || id == "" {
		t.Fatalf("no run id in the panel:\n%s", panel)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		w := ts.get(t, "/environments/dev/runs/"+id, htmxHeader)
		if strings.Contains(w.Body.String(), `data-testid="run-done"`) || strings.Contains(w.Body.String(), `data-testid="run-refused"`) {
			return w.Body.String()
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s not done:\n%s", id, w.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEnvPagesRedactTheRepository: the environment pages show a source
// repository without its credentials, a password holding "@" included.
func TestEnvPagesRedactTheRepository(t *testing.T) {
	cfg, err := envconfig.ParseConfig([]byte(`environments:
  - name: dev
    cluster: {context: test}
    namespace: staging
    source: {repo: "https://deploy:S3p@ss@git.example.com/acme/m.git", ref: main, path: k}
    catalog: catalog.json
`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runner := envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{Store: planstore.New(fake.NewClientset().CoreV1(), "deploy-web", 10)})
	ts := newTestServer(t, newFakeView(nil), func(o *Options) { o.Environments = runner })
	for _, path := range []string{"/environments", "/environments/dev"} {
		w := ts.get(t, path, nil)
		body := w.Body.String()
		if w.Code != 200 || !strings.Contains(body, "https://git.example.com/acme/m.git") {
			t.Errorf("GET %s = %d, want 200 showing https://git.example.com/acme/m.git", path, w.Code)
		}
		if strings.Contains(body, "S3p") || strings.Contains(body, "ss@git") || strings.Contains(body, "deploy:") {
			t.Errorf("GET %s shows the repository's credentials", path)
		}
	}
}

// TestEnvRunPageDrawsEachSectionOnce: the full page of a finished run
// (GET /environments/{env}/runs/{id} without HTMX) draws the plan history
// once, beside the run, with nothing out of band, and the same sections
// as the environment page: its GitOps panel (polling its own address) and
// its audit trail.
func TestEnvRunPageDrawsEachSectionOnce(t *testing.T) {
	ts, _, _ := planServer(t)
	w := ts.do(t, request{method: "POST", target: "/environments/dev/plan", admin: true,
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
	if w.Code != 200 {
		t.Fatalf("POST plan = %d %s, want the run's panel", w.Code, w.Body)
	}
	waitRunDone(t, ts, w.Body.String())
	_, rest, _ := strings.Cut(w.Body.String(), `data-run="`)
	id, _, _ := strings.Cut(rest, `"`)

	page := ts.get(t, "/environments/dev/runs/"+id, nil)
	if page.Code != 200 {
		t.Fatalf("GET the run's page = %d", page.Code)
	}
	doc := parseHTML(t, page.Body.String())
	count := func(match func(*html.Node) bool) int { return len(findAll(doc, match)) }
	for _, tt := range []struct {
		what string
		got  int
		want int
	}{
		{"elements with id env-history", count(func(n *html.Node) bool { return attr(n, "id") == "env-history" }), 1},
		{"elements with id env-report", count(func(n *html.Node) bool { return attr(n, "id") == "env-report" }), 1},
		{"plan history sections", len(byTestID(doc, "plan-history")), 1},
		{"out-of-band elements", count(func(n *html.Node) bool { return attr(n, "hx-swap-oob") != "" }), 0},
		{"finished runs", len(byTestID(doc, "run-done")), 1},
		{"audit trails", len(byTestID(doc, "audit-history")), 1},
		{"GitOps panels polling /environments/dev/gitops", count(func(n *html.Node) bool {
			return attr(n, "data-testid") == "gitops-panel" && attr(n, "hx-get") == "/environments/dev/gitops"
		}), 1},
	} {
		if tt.got != tt.want {
			t.Errorf("run page: %s = %d, want %d", tt.what, tt.got, tt.want)
		}
	}
}
