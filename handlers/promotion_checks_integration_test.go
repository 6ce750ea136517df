package handlers

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/internal/promtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/promcheck"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/why"
)

// appsView is nsView whose rows are also Apps the app page and "why"
// resolve (each a tree of the App alone).
type appsView struct{ *nsView }

func (v appsView) Row(ns, name string) (kubeview.AppRow, bool) {
	for _, r := range v.rows {
		if r.Namespace == ns && r.Name == name {
			return r, true
		}
	}
	return kubeview.AppRow{}, false
}

func (v appsView) LookupApp(ns, name string) (*unstructured.Unstructured, error) {
	for _, r := range v.rows {
		if r.Name == name && (ns == "" || r.Namespace == ns) {
			u := &unstructured.Unstructured{}
			u.SetNamespace(r.Namespace)
			u.SetName(name)
			return u, nil
		}
	}
	return nil, kubeview.ErrAppNotFound
}

func (v appsView) Tree(ns, name string) (kubeview.Tree, error) {
	if _, ok := v.Row(ns, name); !ok {
		return kubeview.Tree{}, kubeview.ErrAppNotFound
	}
	return kubeview.Tree{Nodes: []kubeview.TreeNode{{Ref: "hanzo.ai:App:" + ns + ":" + name, Kind: "App", Namespace: ns, Name: name, UID: "u-" + ns,
		Health: &objrules.Health{Status: objrules.HealthHealthy}}}}, nil
}

func (v appsView) DriftOf(string) []objrules.DriftField { return nil }

func (v appsView) History(string, string) ([]kubeview.Release, error) { return nil, nil }

// checksServer is the promotion fixture with staging's error-rate check
// against dev's metrics at metricsURL, the environments mapped to the
// one cluster, and the Apps resolvable.
func checksServer(t *testing.T, metricsURL string) *promoteFixture {
	t.Helper()
	rows := promoteRows(testNow.Add(-time.Hour), objrules.HealthHealthy)
	f := promoteServerWith(t, rows, testNow.Add(-48*time.Hour), checksEnvConfig(metricsURL), promcheck.New(promcheck.Options{}), func(o *Options) {
		o.EnvClusters = map[string]string{"dev": "in-cluster", "staging": "in-cluster", "prod": "in-cluster", "qa": "in-cluster"}
		o.Clusters[0].View = appsView{o.Clusters[0].View.(*nsView)}
	})
	f.as("dee", "deployers")
	return f
}

// whyOf is GET /v1/deploy/api/why of the App in namespace ns.
func whyOf(t *testing.T, f *promoteFixture, ns string) why.Answer {
	t.Helper()
	w := f.ts.get(t, paths.APIWhy("api", url.Values{"namespace": {ns}}), nil)
	var ans why.Answer
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &ans) != nil {
		t.Fatalf("GET why of %s/api = %d %s", ns, w.Code, w.Body.String())
	}
	return ans
}

// promotionReason is ans's promotion reason ("" when none).
func promotionReason(ans why.Answer) string {
	for _, r := range ans.Reasons {
		if r.Kind == why.Promotion {
			return r.Message
		}
	}
	return ""
}

// TestChecksShownAgainstPrometheus: with a real Prometheus scraping dev's
// error ratio of api at 8% (staging's check: at most 5%), the matrix's
// dev cell loads its checks fragment, which shows error-rate failing with
// 0.08 against <= 0.05 beside the soak state; staging's api answers
// "why" with a promotion reason naming the check, the value and the
// threshold (its page paints the why panel without the checks, which
// loads again at once and then has it); dev's api page loads its Metrics panel, which shows the
// current value breaking the threshold and a chart (staging's page, whose
// environment has no metrics, has none). With Prometheus unreachable the
// same three fail closed and say so: the check is not evaluated
// (unreachable), "why" names it, the panel says it in words, no chart.
func TestChecksShownAgainstPrometheus(t *testing.T) {
	x := &promtest.Exporter{}
	x.Set(`demo_error_ratio{app="api",namespace="dev-ns"} 0.08`)
	prom := promtest.Start(t, x, "demo_error_ratio")
	f := checksServer(t, prom.URL)

	// The matrix: a loading placeholder in dev's cell, for staging only
	// (qa, also after dev, has no checks).
	doc := parseHTML(t, f.ts.get(t, paths.Environments(), nil).Body.String())
	var loads []string
	for _, n := range byTestID(doc, "matrix-checks-loading") {
		loads = append(loads, attr(n, "hx-get"))
	}
	want := paths.EnvPromoteChecks("staging", "dev", "api")
	if len(loads) != 1 || loads[0] != want {
		t.Fatalf("matrix checks placeholders = %v, want one loading %s", loads, want)
	}
	frag := parseHTML(t, f.ts.get(t, want, htmxHeader).Body.String())
	checks := byTestID(frag, "matrix-check")
	if len(checks) != 1 || attr(checks[0], "data-check") != "error-rate" || attr(checks[0], "data-state") != "failing" ||
		!strings.Contains(text(checks[0]), "0.08") || !strings.Contains(text(checks[0]), "<= 0.05") {
		t.Errorf("matrix checks fragment = %q, want error-rate failing with 0.08 against <= 0.05", text(frag))
	}
	if soak := byTestID(frag, "matrix-soak"); len(soak) != 1 || attr(soak[0], "data-state") == "" {
		t.Errorf("matrix checks fragment has no soak state: %q", text(frag))
	}

	// Why: staging's api, which dev's 1.5.0 waits to replace.
	msg := promotionReason(whyOf(t, f, "staging-ns"))
	for _, w := range []string{"1.5.0 of dev is not promoted to staging", "check error-rate failed", "0.08", "<= 0.05"} {
		if !strings.Contains(msg, w) {
			t.Errorf("why of staging's api: promotion reason %q lacks %q", msg, w)
		}
	}

	// Staging's api page paints its why panel without the checks (the
	// page never waits for Prometheus) and loads it again at once; the
	// panel's refresh has the reason.
	staging := parseHTML(t, f.ts.get(t, paths.App("in-cluster", "staging-ns", "api"), nil).Body.String())
	wp := byTestID(staging, "why-panel")
	if len(wp) != 1 || !strings.HasPrefix(attr(wp[0], "hx-trigger"), "load") || strings.Contains(text(wp[0]), "error-rate") {
		t.Errorf("staging's api page: why panel %q, want one without the checks that loads again at once", text(staging))
	}
	refresh := parseHTML(t, f.ts.get(t, paths.AppWhy("in-cluster", "staging-ns", "api"), htmxHeader).Body.String())
	var kinds []string
	for _, r := range byTestID(refresh, "why-reason") {
		kinds = append(kinds, attr(r, "data-kind"))
	}
	if !strings.Contains(text(refresh), "check error-rate failed") || !strings.Contains(strings.Join(kinds, ","), "promotion") {
		t.Errorf("staging's api why panel refresh = %q (kinds %v), want the promotion reason naming error-rate", text(refresh), kinds)
	}

	// The app page: a placeholder on dev's api, none on staging's.
	page := parseHTML(t, f.ts.get(t, paths.App("in-cluster", "dev-ns", "api"), nil).Body.String())
	panel := byTestID(page, "app-metrics")
	if len(panel) != 1 || attr(panel[0], "hx-get") != paths.AppMetrics("in-cluster", "dev-ns", "api") || attr(panel[0], "data-loaded") != "no" {
		t.Fatalf("dev's api page: metrics placeholder = %d, want one loading %s", len(panel), paths.AppMetrics("in-cluster", "dev-ns", "api"))
	}
	if n := len(byTestID(parseHTML(t, f.ts.get(t, paths.App("in-cluster", "staging-ns", "api"), nil).Body.String()), "app-metrics")); n != 0 {
		t.Errorf("staging's api page (no metrics) has %d metrics panels, want none", n)
	}
	metrics := parseHTML(t, f.ts.get(t, paths.AppMetrics("in-cluster", "dev-ns", "api"), htmxHeader).Body.String())
	ms := byTestID(metrics, "metric")
	if len(ms) != 1 || attr(ms[0], "data-check") != "error-rate" || attr(ms[0], "data-state") != "breaks" ||
		!strings.Contains(text(ms[0]), "0.08") || len(byTestID(ms[0], "metric-chart")) != 1 || len(byTestID(ms[0], "metric-line")) == 0 {
		t.Errorf("dev's api metrics panel = %q, want error-rate breaking at 0.08 with a chart", text(metrics))
	}

	// Unreachable: fail closed, in words.
	down := checksServer(t, "http://"+promtest.FreeAddr(t))
	frag = parseHTML(t, down.ts.get(t, want, htmxHeader).Body.String())
	checks = byTestID(frag, "matrix-check")
	if len(checks) != 1 || attr(checks[0], "data-state") != "unevaluated" || !strings.Contains(text(checks[0]), "unreachable") {
		t.Errorf("matrix checks with Prometheus unreachable = %q, want error-rate unevaluated, naming it unreachable", text(frag))
	}
	if gs := byTestID(frag, "matrix-checks"); len(gs) != 1 || attr(gs[0], "data-state") != "failed" {
		t.Errorf("matrix checks gate with Prometheus unreachable is not failed: %q", text(frag))
	}
	msg = promotionReason(whyOf(t, down, "staging-ns"))
	if !strings.Contains(msg, "check error-rate could not be evaluated") || !strings.Contains(msg, "unreachable") {
		t.Errorf("why with Prometheus unreachable: promotion reason %q, want the check not evaluated, unreachable", msg)
	}
	metrics = parseHTML(t, down.ts.get(t, paths.AppMetrics("in-cluster", "dev-ns", "api"), htmxHeader).Body.String())
	if p := byTestID(metrics, "metric-problem"); len(p) != 1 || !strings.Contains(text(p[0]), "unreachable") || len(byTestID(metrics, "metric-chart")) != 0 {
		t.Errorf("metrics panel with Prometheus unreachable = %q, want a message naming it unreachable and no chart", text(metrics))
	}
}
