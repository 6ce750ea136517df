package handlers

import (
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/web/paths"
)

// matrixEnvConfig is three environments in promotion order, declared out
// of it: dev (namespace apps) -> staging (infra) -> prod (production, not
// a platform namespace of the fake view).
const matrixEnvConfig = `
environments:
  - name: prod
    cluster: {context: test}
    namespace: production
    protected: true
    source: {path: manifests/prod}
    catalog: catalog.json
    promotion: {after: staging, soak: 1h}
  - name: dev
    cluster: {context: test}
    namespace: apps
    source: {path: manifests/dev}
    catalog: catalog.json
  - name: staging
    cluster: {context: test}
    namespace: infra
    source: {path: manifests/staging}
    catalog: catalog.json
    promotion: {after: dev}
`

// nsView is a fakeView whose Applications answer the query's namespace
// only, as kubeview does.
type nsView struct {
	*fakeView
	rows []kubeview.AppRow
}

func (v *nsView) Applications(q kubeview.Query) (kubeview.Page, error) {
	var p kubeview.Page
	for _, r := range v.rows {
		if q.Namespace == "" || r.Namespace == q.Namespace {
			p.Rows = append(p.Rows, r)
		}
	}
	p.Matched = len(p.Rows)
	return p, nil
}

func matrixRow(ns, name, version string, h objrules.HealthStatus) kubeview.AppRow {
	return kubeview.AppRow{Name: name, Namespace: ns, Image: "reg.example/" + name + ":" + version, Version: version,
		Health: objrules.Health{Status: h}, LastDeployed: testNow.Add(-time.Hour)}
}

// matrixServer serves the three environments over rows.
func matrixServer(t *testing.T, rows []kubeview.AppRow) *testServer {
	t.Helper()
	cfg, err := envconfig.ParseConfig([]byte(matrixEnvConfig), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runner := envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{Store: planstore.New(fake.NewClientset().CoreV1(), "deploy-web", 10)})
	view := newFakeView(nil)
	return newTestServer(t, view, func(o *Options) {
		o.Environments = runner
		o.Clusters = []Cluster{{Name: "in-cluster", View: &nsView{fakeView: view, rows: rows}}}
	})
}

func TestEnvMatrixPage(t *testing.T) {
	ts := matrixServer(t, []kubeview.AppRow{
		matrixRow("apps", "api", "1.5.0", objrules.HealthHealthy),
		matrixRow("apps", "worker", "1.5.0", objrules.HealthHealthy),
		matrixRow("infra", "api", "1.4.2", objrules.HealthHealthy),
		matrixRow("infra", "worker", "1.5.0", objrules.HealthDegraded),
	})
	w := ts.get(t, paths.Environments(), nil)
	if w.Code != 200 {
		t.Fatalf("GET /environments = %d: %s", w.Code, w.Body)
	}
	doc := parseHTML(t, w.Body.String())
	var cols []string
	for _, c := range byTestID(doc, "matrix-col") {
		cols = append(cols, attr(c, "data-env"))
	}
	if diff := cmp.Diff([]string{"dev", "staging", "prod"}, cols); diff != "" {
		t.Errorf("matrix columns (-want +got):\n%s", diff)
	}
	// Each row as "app: version(marked) ..." with "?" for prod, whose
	// namespace is not read.
	var got []string
	for _, r := range byTestID(doc, "matrix-row") {
		s := attr(r, "data-app") + ":"
		for _, c := range byTestID(r, "matrix-cell") {
			v := attr(c, "data-version")
			if v == "" {
				v = "?"
			}
			if attr(c, "data-differs") == "yes" {
				v += "*"
			}
			s += " " + v
		}
		got = append(got, s)
	}
	if diff := cmp.Diff([]string{"api: 1.5.0 1.4.2* ?", "worker: 1.5.0 1.5.0 ?"}, got); diff != "" {
		t.Errorf("matrix rows (-want +got):\n%s", diff)
	}
	if u := byTestID(doc, "matrix-unavailable"); len(u) != 1 || !strings.Contains(text(u[0]), "production is not a platform namespace") {
		t.Errorf("prod's column does not say why its Apps are not shown")
	}
	// The admin may promote: dev's cells offer staging; prod, whose Apps
	// are not read, is offered nowhere.
	var promote []string
	for _, a := range byTestID(doc, "matrix-promote") {
		promote = append(promote, attr(a, "href"))
	}
	want := []string{paths.EnvPromote("staging", "dev", "api"), paths.EnvPromote("staging", "dev", "worker")}
	if diff := cmp.Diff(want, promote); diff != "" {
		t.Errorf("Promote links (-want +got):\n%s", diff)
	}
	var all []string
	for _, a := range byTestID(doc, "matrix-promote-all") {
		all = append(all, attr(a, "href"))
	}
	if diff := cmp.Diff([]string{paths.EnvPromote("staging", "dev", "")}, all); diff != "" {
		t.Errorf("Promote all links (-want +got):\n%s", diff)
	}
	if d := byTestID(doc, "matrix-diff"); len(d) == 0 || attr(d[0], "href") != paths.EnvCompare("staging", "api", "dev") {
		t.Errorf("staging's api cell does not link its diff with dev")
	}
	// The old list stays below the matrix.
	if len(byTestID(doc, "env-row")) != 3 {
		t.Errorf("the environments list has %d rows, want 3", len(byTestID(doc, "env-row")))
	}
}

func TestEnvMatrixFilters(t *testing.T) {
	ts := matrixServer(t, []kubeview.AppRow{
		matrixRow("apps", "api", "1.5.0", objrules.HealthHealthy),
		matrixRow("apps", "worker", "1.5.0", objrules.HealthHealthy),
		matrixRow("infra", "api", "1.4.2", objrules.HealthHealthy),
		matrixRow("infra", "worker", "1.5.0", objrules.HealthDegraded),
	})
	tests := []struct {
		q    url.Values
		want []string
	}{
		{nil, []string{"api", "worker"}},
		{url.Values{"differs": {"1"}}, []string{"api"}},
		{url.Values{"health": {"Degraded"}}, []string{"worker"}},
		{url.Values{"q": {"WORK"}}, []string{"worker"}},
	}
	for _, tt := range tests {
		// The page's fragment (HTMX) and the JSON agree.
		w := ts.get(t, paths.EnvMatrix(tt.q), htmxHeader)
		if w.Code != 200 || strings.Contains(w.Body.String(), "<html") {
			t.Fatalf("GET %s (HTMX) = %d, want the fragment alone", paths.EnvMatrix(tt.q), w.Code)
		}
		var page []string
		for _, r := range byTestID(parseHTML(t, w.Body.String()), "matrix-row") {
			page = append(page, attr(r, "data-app"))
		}
		if diff := cmp.Diff(tt.want, page); diff != "" {
			t.Errorf("GET %s rows (-want +got):\n%s", paths.EnvMatrix(tt.q), diff)
		}
		jq := url.Values{"view": {"matrix"}}
		for k, v := range tt.q {
			jq[k] = v
		}
		w = ts.get(t, paths.APIEnvironments(jq), nil)
		var m promotion.Matrix
		if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil || w.Code != 200 {
			t.Fatalf("GET %s = %d %s", paths.APIEnvironments(jq), w.Code, w.Body)
		}
		var api []string
		for _, r := range m.Rows {
			api = append(api, r.App)
		}
		if diff := cmp.Diff(tt.want, api); diff != "" {
			t.Errorf("GET %s rows (-want +got):\n%s", paths.APIEnvironments(jq), diff)
		}
	}
	for _, bad := range []url.Values{{"view": {"matrix"}, "health": {"Fine"}}, {"view": {"matrix"}, "differs": {"maybe"}}, {"view": {"grid"}}} {
		if w := ts.get(t, paths.APIEnvironments(bad), nil); w.Code != 400 {
			t.Errorf("GET %s = %d, want 400", paths.APIEnvironments(bad), w.Code)
		}
	}
}

// TestEnvMatrixInjection: an App name and a version from the cluster come
// back escaped.
func TestEnvMatrixInjection(t *testing.T) {
	const evil = `<script>alert(1)</script>`
	ts := matrixServer(t, []kubeview.AppRow{matrixRow("apps", evil, evil, objrules.HealthHealthy), matrixRow("infra", evil, "1", objrules.HealthHealthy)})
	body := ts.get(t, paths.Environments(), nil).Body.String()
	if strings.Contains(body, evil) {
		t.Errorf("GET /environments shows %s unescaped", evil)
	}
	if !strings.Contains(body, "&lt;script&gt;") {
		t.Errorf("GET /environments does not show the App at all")
	}
}
