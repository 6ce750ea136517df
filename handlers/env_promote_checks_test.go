package handlers

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/internal/promtest"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/promcheck"
	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/web/paths"
)

// checksEnvConfig is promoteEnvConfig with dev's metrics at url and
// staging's promotion checking dev's error ratio of the App.
func checksEnvConfig(url string) string {
	s := strings.Replace(promoteEnvConfig, "    namespace: dev-ns\n", "    namespace: dev-ns\n    metrics: {url: \""+url+"\"}\n", 1)
	return strings.Replace(s, "    promotion: {after: dev}\n",
		"    promotion: {after: dev, checks: [{name: error-rate, query: 'max(demo_error_ratio{app=\"{{app}}\", namespace=\"{{namespace}}\"})', threshold: {max: 0.05}, for: 1m}]}\n", 1)
}

// TestPromoteChecksAgainstPrometheus: staging's error-rate check runs
// against a real Prometheus scraping dev's error ratio: at 1% the
// promotion goes through; at 8% it is refused (422) naming the check,
// the query as run, the value and the threshold, the dialog shows the
// failed gate and the refusal is recorded; an unreachable Prometheus
// refuses too (fails closed).
func TestPromoteChecksAgainstPrometheus(t *testing.T) {
	x := &promtest.Exporter{}
	x.Set(`demo_error_ratio{app="api",namespace="dev-ns"} 0.01`)
	prom := promtest.Start(t, x, "demo_error_ratio")
	rows := promoteRows(testNow.Add(-time.Hour), objrules.HealthHealthy)
	query := `max(demo_error_ratio{app="api", namespace="dev-ns"})`

	f := promoteServerConfig(t, rows, testNow.Add(-48*time.Hour), checksEnvConfig(prom.URL), promcheck.New(promcheck.Options{}))
	f.as("dee", "deployers")
	if code, _, body := f.post(t, paths.APIEnvPromotions("staging"), `{"from": "dev", "app": "api"}`); code != 200 || !strings.Contains(body, "check error-rate held") {
		t.Fatalf("POST promotions at 1%% errors = %d %s, want 200 with the check held", code, body)
	}

	x.Set(`demo_error_ratio{app="api",namespace="dev-ns"} 0.08`)
	prom.WaitFor(t, "demo_error_ratio", func(v string) bool { return v == "0.08" })
	f = promoteServerConfig(t, rows, testNow.Add(-48*time.Hour), checksEnvConfig(prom.URL), promcheck.New(promcheck.Options{}))
	f.as("dee", "deployers")
	code, _, body := f.post(t, paths.APIEnvPromotions("staging"), `{"from": "dev", "app": "api"}`)
	for _, w := range []string{"check error-rate failed", "0.08", `threshold \u003c= 0.05`, strings.ReplaceAll(query, `"`, `\"`)} {
		if code != 422 || !strings.Contains(body, w) {
			t.Errorf("POST promotions at 8%% errors = %d %s, want 422 containing %q", code, body, w)
		}
	}
	if len(f.fc.changed) != 0 {
		t.Errorf("a promotion refused by its check changed %v", f.fc.changed)
	}
	if got := f.audit.verbs(); len(got) != 1 || got[0] != "promote:refused:dee" {
		t.Errorf("audit records = %v, want one promote:refused", got)
	} else if b := f.audit.recs[0].Blockers; !slices.Contains(b, promotion.GateBlocker(promotion.GateChecks, "api")) {
		// The delivery metrics (insights) count a failed check from it.
		t.Errorf("refused record's blockers = %v, want %q", b, promotion.GateBlocker(promotion.GateChecks, "api"))
	}
	doc := parseHTML(t, f.ts.get(t, paths.EnvPromote("staging", "dev", "api"), nil).Body.String())
	var found bool
	for _, g := range byTestID(doc, "gate") {
		if strings.Contains(text(g), "check error-rate failed") {
			found = attr(g, "data-state") == "failed" && strings.Contains(text(g), query)
		}
	}
	if !found {
		t.Errorf("the dialog shows no failed gate naming check error-rate and its query")
	}

	f = promoteServerConfig(t, rows, testNow.Add(-48*time.Hour), checksEnvConfig("http://"+promtest.FreeAddr(t)), promcheck.New(promcheck.Options{}))
	f.as("dee", "deployers")
	if code, _, body := f.post(t, paths.APIEnvPromotions("staging"), `{"from": "dev", "app": "api"}`); code != 422 || !strings.Contains(body, "check error-rate could not be evaluated") || !strings.Contains(body, "unreachable") {
		t.Errorf("POST promotions with Prometheus unreachable = %d %s, want 422 naming the check unreachable", code, body)
	}
}

// TestPromoteApprovalRerunsChecks: a request into protected prod passes
// its check when asked; the error ratio in staging then rises to 8%, and
// the approval, evaluating the gates again (the checks past their
// per-minute cache), is refused naming the check: nothing is written.
func TestPromoteApprovalRerunsChecks(t *testing.T) {
	x := &promtest.Exporter{}
	x.Set(`demo_error_ratio{app="api",namespace="staging-ns"} 0.01`)
	prom := promtest.Start(t, x, "demo_error_ratio")
	s := strings.Replace(promoteEnvConfig, "    namespace: staging-ns\n", "    namespace: staging-ns\n    metrics: {url: \""+prom.URL+"\"}\n", 1)
	s = strings.Replace(s, "    promotion: {after: staging, soak: 1h}\n",
		"    promotion: {after: staging, soak: 1h, checks: [{name: error-rate, query: 'max(demo_error_ratio{app=\"{{app}}\", namespace=\"{{namespace}}\"})', threshold: {max: 0.05}, for: 1m}]}\n", 1)
	rows := promoteRows(testNow.Add(-time.Hour), objrules.HealthHealthy)
	rows[1].Version, rows[1].Image = "1.5.0", "reg.example/acme/api:1.5.0"
	// One evaluator for the request and the approval: the request's
	// result is cached for the minute, and the approval must not use it.
	f := promoteServerConfig(t, rows, testNow.Add(-48*time.Hour), s, promcheck.New(promcheck.Options{}))
	f.as("dee", "deployers")
	code, out, body := f.post(t, paths.APIEnvPromotions("prod"), `{"from": "staging", "app": "api"}`)
	if code != 202 || out.Request == nil {
		t.Fatalf("POST promotions (prod) at 1%% errors = %d %s, want 202 and a request", code, body)
	}
	x.Set(`demo_error_ratio{app="api",namespace="staging-ns"} 0.08`)
	prom.WaitFor(t, "demo_error_ratio", func(v string) bool { return v == "0.08" })
	f.as("abe", "approvers")
	code, _, body = f.post(t, paths.APIEnvPromotionApprove("prod", out.Request.ID), ``)
	if code != 422 || !strings.Contains(body, "check error-rate failed") || !strings.Contains(body, "0.08") {
		t.Errorf("approval at 8%% errors = %d %s, want 422 naming check error-rate and 0.08", code, body)
	}
	if len(f.fc.requests()) != 0 {
		t.Errorf("an approval refused by its check wrote %+v", f.fc.requests())
	}
}
