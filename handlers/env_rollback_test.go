package handlers

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/writeback"
)

// TestEnvRollbackRoutes: the API rolls dev back to an apply record (the
// repository already holds its tree: noChange), refuses a record without a
// commit, an unknown one and an environment without writeBack; the
// environment page offers "Roll back to this" on the apply record with a
// commit only, and its confirmation carries the CSRF token and the record.
func TestEnvRollbackRoutes(t *testing.T) {
	cfg, err := envconfig.ParseConfig([]byte(gitOpsEnvConfig), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cs := fake.NewClientset()
	runner := envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{Store: planstore.New(cs.CoreV1(), "deploy-web", 10)})
	trail, _ := newTestAudit(t)
	const commit = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
	var asked []writeback.Request
	gitCommit := func(_ context.Context, req writeback.Request) (writeback.Result, error) {
		asked = append(asked, req)
		return writeback.Result{SHA: commit, Branch: req.Branch, NoChange: true}, nil
	}
	ts := newTestServer(t, newFakeView(nil), withAudit(trail), func(o *Options) {
		o.Environments, o.RecordReader, o.GitCommit = runner, trail, gitCommit
	})
	good := appendTest(t, trail, audit.Record{Actor: audit.Actor{Email: "bob@example.com", Subject: "bob"}, Verb: audit.VerbApply, Cluster: "in-cluster", Environment: "dev",
		Namespace: "staging", Commit: commit, Outcome: audit.OutcomeSucceeded, Blockers: []string{}})
	local := appendTest(t, trail, audit.Record{Actor: audit.Actor{Subject: "bob"}, Verb: audit.VerbApply, Cluster: "in-cluster", Environment: "dev",
		Namespace: "staging", Outcome: audit.OutcomeSucceeded, Blockers: []string{}})

	json := map[string]string{"Accept": "application/json", "Content-Type": "application/json"}
	for _, tc := range []struct {
		name, env, body string
		want            int
		text            string
	}{
		{"back to the apply of A", "dev", `{"to":"` + good.ID + `","reason":"bad"}`, 200, `"noChange":true`},
		{"a record without a commit", "dev", `{"to":"` + local.ID + `"}`, 422, "applied from a local folder"},
		{"an unknown record", "dev", `{"to":"0000000000000000-0000000042"}`, 404, "not found"},
		{"no record named", "dev", `{"reason":"x"}`, 400, "to: missing"},
		{"no writeBack", "prod", `{"to":"` + good.ID + `"}`, 409, "has no writeBack"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := ts.do(t, request{method: "POST", target: paths.APIEnvRollback(tc.env), admin: true, header: json, body: tc.body})
			if w.Code != tc.want || !strings.Contains(w.Body.String(), tc.text) {
				t.Fatalf("POST %s %s = %d %s, want %d with %q", paths.APIEnvRollback(tc.env), tc.body, w.Code, w.Body, tc.want, tc.text)
			}
		})
	}
	if len(asked) != 1 || len(asked[0].Restore) != 2 || asked[0].Restore[0] != (writeback.Restore{Path: "overlays/dev", Commit: commit}) ||
		asked[0].Restore[1].Path != "catalog.json" {
		t.Errorf("write-backs = %+v, want one restoring overlays/dev and catalog.json at %s", asked, commit)
	}

	page := ts.get(t, paths.Env("dev"), nil).Body.String()
	if n := strings.Count(page, `data-testid="env-rollback-button"`); n != 1 || !strings.Contains(page, paths.EnvRollbackTo("dev", good.ID)) {
		t.Errorf("environment page: %d rollback buttons, want 1 (the apply with a commit, %s)", n, good.ID)
	}
	confirm := ts.get(t, paths.EnvRollbackTo("dev", good.ID), htmxHeader).Body.String()
	for _, want := range []string{`data-testid="confirm-env-rollback"`, `name="csrf_token"`, `name="to" value="` + good.ID + `"`, "then plans and applies it"} {
		if !strings.Contains(confirm, want) {
			t.Errorf("confirmation lacks %q:\n%s", want, confirm)
		}
	}
	if c := ts.get(t, paths.EnvRollbackTo("dev", local.ID), htmxHeader).Body.String(); !strings.Contains(c, `data-testid="env-rollback-error"`) {
		t.Errorf("confirmation of a record without a commit = %s, want the refusal", c)
	}
}
