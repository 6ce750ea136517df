package handlers

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/deployplan"
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
	cfg, err := deployplan.ParseConfig([]byte(testEnvConfig), t.TempDir())
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
