package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/planstore"
)

// pageView is a fakeView that shows the App apps/web's page: its row and
// an empty tree.
type pageView struct{ appView }

func (v pageView) Row(ns, name string) (kubeview.AppRow, bool) {
	if ns == "apps" && name == "web" {
		return kubeview.AppRow{Name: "web", Namespace: "apps"}, true
	}
	return kubeview.AppRow{}, false
}

func (v pageView) Tree(ns, name string) (kubeview.Tree, error) { return kubeview.Tree{}, nil }

func (v pageView) History(ns, name string) ([]kubeview.Release, error) { return nil, nil }

func (v pageView) DriftOf(uid string) []objrules.DriftField { return nil }

func historyIDs(t *testing.T, body string) []string {
	t.Helper()
	doc := parseHTML(t, body)
	section := oneByTestID(t, doc, "audit-history")
	var ids []string
	for _, r := range byTestID(section, "audit-row") {
		ids = append(ids, attr(r, "data-id"))
	}
	return ids
}

// TestHistorySections: the App's page lists the App's records (its
// rollbacks and syncs, not another App's), the environment's page the
// environment's; each links to the rest on /audit.
func TestHistorySections(t *testing.T) {
	store, _ := newTestAudit(t)
	cfg, err := envconfig.ParseConfig([]byte(testEnvConfig), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runner := envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{Store: planstore.New(fake.NewClientset().CoreV1(), "deploy-web", 10)})
	ts := newTestServer(t, newFakeView(nil), withAudit(store), func(o *Options) { o.Environments = runner })
	ts.srv.clusters[0].View = pageView{appView{ts.view}}
	web := appendTest(t, store, audit.Record{Verb: audit.VerbRollback, Cluster: "in-cluster", Namespace: "apps", App: "web"})
	appendTest(t, store, audit.Record{Verb: audit.VerbSync, Cluster: "in-cluster", Namespace: "shop", App: "web"})
	dev := appendTest(t, store, audit.Record{Verb: audit.VerbApply, Cluster: "in-cluster", Environment: "dev", Outcome: audit.OutcomeRefused})

	w := ts.get(t, "/clusters/in-cluster/apps/apps/web", nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET the app page: status = %d, body %.300s", w.Code, w.Body)
	}
	if got := historyIDs(t, w.Body.String()); len(got) != 1 || got[0] != web.ID {
		t.Errorf("app page history = %v, want apps/web's rollback %s only", got, web.ID)
	}
	all, _ := url.Parse(attr(oneByTestID(t, parseHTML(t, w.Body.String()), "audit-history-all"), "href"))
	if all.Path != "/audit" || all.Query().Get("app") != "web" || all.Query().Get("namespace") != "apps" || all.Query().Get("cluster") != "in-cluster" {
		t.Errorf("app page's link to its records = %s, want /audit filtered to in-cluster apps/web", all)
	}
	w = ts.get(t, "/environments/dev", nil)
	if got := historyIDs(t, w.Body.String()); len(got) != 1 || got[0] != dev.ID {
		t.Errorf("environment page history = %v, want dev's apply %s", got, dev.ID)
	}
	if got := historyIDs(t, ts.get(t, "/environments/prod", nil).Body.String()); len(got) != 0 {
		t.Errorf("prod's page history = %v, want none", got)
	}
	if !strings.Contains(ts.get(t, "/environments/prod", nil).Body.String(), `data-testid="audit-history-empty"`) {
		t.Errorf("prod's page: no empty-history note")
	}

	// Hostile text in a record comes back escaped in the sections too.
	for _, p := range injectionPayloads {
		appendTest(t, store, audit.Record{Actor: audit.Actor{Email: p, Subject: p}, Verb: audit.VerbSync, Cluster: "in-cluster", Namespace: "apps", App: "web",
			Outcome: audit.OutcomeRefused, Message: p, Blockers: []string{p}})
		appendTest(t, store, audit.Record{Actor: audit.Actor{Email: p}, Verb: audit.VerbApply, Cluster: "in-cluster", Environment: "dev", Commit: p, Message: p})
		assertInert(t, "the app page", ts.get(t, "/clusters/in-cluster/apps/apps/web", nil).Body.String(), p)
		assertInert(t, "the environment page", ts.get(t, "/environments/dev", nil).Body.String(), p)
	}
}

// TestConsoleApplyRefusalRecordsTheUser: a refused console apply (the
// confirmation names another environment) is answered 422 and leaves one
// record naming the signed-in user (email and subject), through the
// runner's Record hook.
func TestConsoleApplyRefusalRecordsTheUser(t *testing.T) {
	store, _ := newTestAudit(t)
	cfg, err := envconfig.ParseConfig([]byte(testEnvConfig), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runner := envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{Store: planstore.New(fake.NewClientset().CoreV1(), "deploy-web", 10),
		Record: func(ctx context.Context, rec audit.Record) {
			rec.Cluster = "in-cluster"
			if _, err := store.Append(ctx, rec); err != nil {
				t.Errorf("Append() error = %v", err)
			}
		}})
	ts := newTestServer(t, newFakeView(nil), withAudit(store), func(o *Options) { o.Environments = runner })
	w := ts.do(t, request{method: "POST", target: "/environments/dev/apply", admin: true,
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body: "confirm=prod&plan=p1"})
	if w.Code != http.StatusUnprocessableEntity {
		t.Fatalf("POST apply with a wrong confirmation: status = %d, want 422", w.Code)
	}
	recs := records(t, store)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	r := recs[0]
	if r.Verb != audit.VerbApply || r.Outcome != audit.OutcomeRefused || r.Environment != "dev" || r.Actor.Email != testIdentity.Email || r.Actor.Subject != testIdentity.Subject {
		t.Errorf("record = %s %s of %s by %+v, want a refused apply of dev by %s (sub %s)", r.Verb, r.Outcome, r.Environment, r.Actor, testIdentity.Email, testIdentity.Subject)
	}
}
