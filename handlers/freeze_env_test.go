package handlers

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
)

// TestFreezeEnvApply: with a ready plan in a frozen environment, the
// superadmin's Apply asks for a break-glass reason and the deployer's is
// disabled with the freeze's words; the deployer's apply is refused (409,
// in the run panel) with the reason and the opening time, with or without
// a break-glass reason; the superadmin's apply with one starts its run,
// which names the break-glass.
func TestFreezeEnvApply(t *testing.T) {
	ts, store, save := planServer(t)
	clock := &freezeClock{now: time.Now()}
	gate := freeze.NewGate(freeze.NewStore(fake.NewClientset().CoreV1(), "deploy-web", signtest.Keys()).WithClock(clock.Now))
	f, err := gate.Store().Add(t.Context(), freeze.Freeze{Scope: scope.Scope{Environments: []string{"dev"}}, Start: clock.now.Add(-time.Minute), End: clock.now.Add(time.Hour),
		Reason: "release week", Author: freeze.Author{Email: "root@example.com", Subject: "root"}})
	if err != nil {
		t.Fatal(err)
	}
	ts.srv.opts.Environments = envrun.New(ts.srv.opts.Environments.Config(), slog.New(slog.DiscardHandler), envrun.Options{Store: store,
		RestConfig: &rest.Config{Host: "https://127.0.0.1:1"}, ReportsDir: t.TempDir(), Freezes: gate})
	ts.srv.opts.Freezes, ts.srv.opts.Roles = gate, walkPolicy(t)
	ts.srv.ops = ts.srv.newWorkflows() // the workflows see the options changed above
	ts.handler = ts.srv.Handler()
	plan := save("ready")
	dee, ada := persona(t, "deployer (scoped)"), persona(t, "superadmin (admin claim)")
	opens := "frozen until " + f.End.UTC().Format("2006-01-02 15:04") + " UTC by root@example.com (sub root): release week"

	ts.auth.id = &ada
	doc := parseHTML(t, ts.get(t, "/environments/dev", nil).Body.String())
	if len(byTestID(doc, "freeze-banner")) != 1 || len(byTestID(doc, "break-glass-reason")) != 1 || !drawsAction(doc, "apply") {
		t.Errorf("superadmin's frozen dev: banner %d, break-glass field %d, apply drawn %v; want 1, 1, true",
			len(byTestID(doc, "freeze-banner")), len(byTestID(doc, "break-glass-reason")), drawsAction(doc, "apply"))
	}
	ts.auth.id = &dee
	doc = parseHTML(t, ts.get(t, "/environments/dev", nil).Body.String())
	buttons := byTestID(doc, "apply-button")
	if len(buttons) != 1 || !hasAttr(buttons[0], "disabled") || !strings.Contains(attr(buttons[0], "title"), opens) || len(byTestID(doc, "break-glass-reason")) != 0 {
		t.Errorf("deployer's frozen dev: want one Apply, disabled with %q, and no break-glass field", opens)
	}

	apply := func(v url.Values) (int, string) {
		t.Helper()
		w := ts.do(t, request{method: http.MethodPost, target: "/environments/dev/apply", admin: true, body: v.Encode(),
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "HX-Request": "true"}})
		return w.Code, w.Body.String()
	}
	ts.auth.id = &dee
	if code, body := apply(url.Values{"confirm": {"dev"}, "plan": {plan}}); code != http.StatusConflict || !strings.Contains(body, "run-refused") || !strings.Contains(body, opens) {
		t.Errorf("deployer's apply in the freeze = %d %.300s, want 409 refused %q", code, body, opens)
	}
	if code, body := apply(url.Values{"confirm": {"dev"}, "plan": {plan}, "breakGlassReason": {"hotfix"}}); code != http.StatusConflict || !strings.Contains(body, "only a superadmin may break the glass") {
		t.Errorf("deployer's break-glass apply = %d %.300s, want 409 only a superadmin", code, body)
	}
	ts.auth.id = &ada
	code, body := apply(url.Values{"confirm": {"dev"}, "plan": {plan}, "breakGlassReason": {"CVE-2026-1 hotfix"}})
	if code != http.StatusOK || !strings.Contains(body, "break-glass by ada@example.com (sub ada): CVE-2026-1 hotfix (overrode freeze "+f.ID) {
		t.Errorf("superadmin's break-glass apply = %d %.500s, want the run started, naming the break-glass", code, body)
	}
}

// TestFreezeRollbackThroughGit: in a freeze of the environment that
// renders the App, a rollback through git is refused before anything is
// committed; a superadmin's break-glass commits it.
func TestFreezeRollbackThroughGit(t *testing.T) {
	fc := &fakeCommit{tree: manifestTree("")}
	ts, _ := gitServer(t, "dev", fc)
	clock := &freezeClock{now: time.Now()}
	gate := freeze.NewGate(freeze.NewStore(fake.NewClientset().CoreV1(), "deploy-web", signtest.Keys()).WithClock(clock.Now))
	if _, err := gate.Store().Add(t.Context(), freeze.Freeze{Scope: scope.Scope{Environments: []string{"dev"}}, Start: clock.now.Add(-time.Minute), End: clock.now.Add(time.Hour),
		Reason: "release week", Author: freeze.Author{Subject: "root"}}); err != nil {
		t.Fatal(err)
	}
	ts.srv.opts.Freezes = gate
	ts.srv.ops = ts.srv.newWorkflows() // the workflows see the options changed above
	ts.handler = ts.srv.Handler()
	w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader, body: `{"version": "1.1.0"}`})
	if w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), `"reason":"frozen"`) || len(fc.requests()) != 0 {
		t.Fatalf("rollback through git in a freeze = %d %s, %d commits; want 409 frozen and none", w.Code, w.Body, len(fc.requests()))
	}
	w = ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader, body: `{"version": "1.1.0", "breakGlass": {"reason": "CVE fix"}}`})
	if w.Code != http.StatusOK || len(fc.requests()) != 1 {
		t.Errorf("superadmin's break-glass rollback through git = %d %s, %d commits; want 200 and one", w.Code, w.Body, len(fc.requests()))
	}
}
