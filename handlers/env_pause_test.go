package handlers

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/planstore"
)

// fakeAutoSync is the loop's state over a real pauses store (a fake
// cluster's ConfigMap): dev has auto-sync, prod (protected) none.
type fakeAutoSync struct {
	pauses *autosync.Pauses
	last   *autosync.Run
}

func (f *fakeAutoSync) Status(ctx context.Context, env string) (autosync.Status, bool, error) {
	if env != "dev" {
		return autosync.Status{}, false, nil
	}
	st := autosync.Status{Enabled: true, SelfHeal: true, LastRun: f.last}
	ps, err := f.pauses.List(ctx)
	for _, p := range ps {
		if p.Env == env && p.Active(testNow) {
			st.Paused, st.PausedUntil, st.PauseReason, st.PausedBy = true, p.Until, p.Reason, p.By
		}
	}
	return st, true, err
}

func (f *fakeAutoSync) Pause(ctx context.Context, env, reason string, until time.Time, by string) (autosync.Pause, error) {
	return f.pauses.Pause(ctx, env, reason, until, by)
}

func (f *fakeAutoSync) Resume(ctx context.Context, env, by string) (autosync.Pause, error) {
	return f.pauses.Resume(ctx, env, by)
}

const gitOpsEnvConfig = `
environments:
  - name: dev
    cluster: {context: test}
    namespace: staging
    source: {repo: "https://git.example.com/shop/manifests.git", ref: main, path: overlays/dev}
    catalog: catalog.json
    writeBack: {mode: push, author: {name: "deploy-web", email: "deploy-web@example.com"}}
    autoSync: {enabled: true, selfHeal: true, interval: 15s}
  - name: prod
    cluster: {context: test}
    namespace: production
    protected: true
    source: {path: manifests/prod}
    catalog: catalog.json
`

// gitOpsServer is a test server with the environments above, a pauses
// store and an audit trail over fake clusters.
func gitOpsServer(t *testing.T) (*testServer, *fakeAutoSync, *audit.Store, *planstore.Store) {
	t.Helper()
	cfg, err := envconfig.ParseConfig([]byte(gitOpsEnvConfig), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cs := fake.NewClientset()
	store := planstore.New(cs.CoreV1(), "deploy-web", 10)
	runner := envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{Store: store})
	as := &fakeAutoSync{pauses: autosync.NewPauses(cs.CoreV1(), "deploy-web", signtest.Keys(), func() time.Time { return testNow })}
	trail, _ := newTestAudit(t)
	ts := newTestServer(t, newFakeView(nil), withAudit(trail), func(o *Options) { o.Environments, o.AutoSync = runner, as })
	return ts, as, trail, store
}

// TestPauseAndResume: a superadmin pauses dev's auto-sync with a reason
// for at most 7 days, through the API and the page's form, and resumes
// it; each attempt (refused ones too) is one audit record; an environment
// without auto-sync and a bad pause are refused with the reason.
func TestPauseAndResume(t *testing.T) {
	ts, _, trail, _ := gitOpsServer(t)
	json := map[string]string{"Accept": "application/json", "Content-Type": "application/json"}
	for _, tc := range []struct {
		name         string
		method, path string
		body         string
		want         int
		wantText     string
		verb         audit.Verb
		outcome      audit.Outcome
	}{
		{"pause for 8h", "POST", "/v1/deploy/environments/dev/pause", `{"reason":"incident 42","for":"8h"}`, 200, `"reason":"incident 42"`, audit.VerbPause, audit.OutcomeSucceeded},
		{"paused twice replaces", "POST", "/v1/deploy/environments/dev/pause", `{"reason":"incident 43","until":"` + testNow.Add(48*time.Hour).UTC().Format(time.RFC3339) + `"}`, 200, `"reason":"incident 43"`, audit.VerbPause, audit.OutcomeSucceeded},
		{"resume", "DELETE", "/v1/deploy/environments/dev/pause", "", 200, `"resumedBy"`, audit.VerbResume, audit.OutcomeSucceeded},
		{"resume when not paused", "DELETE", "/v1/deploy/environments/dev/pause", "", 409, "not paused", audit.VerbResume, audit.OutcomeRefused},
		{"more than 7 days", "POST", "/v1/deploy/environments/dev/pause", `{"reason":"long","for":"169h"}`, 422, "at most 7 days", audit.VerbPause, audit.OutcomeRefused},
		{"no reason", "POST", "/v1/deploy/environments/dev/pause", `{"reason":" ","for":"1h"}`, 422, "reason is empty", audit.VerbPause, audit.OutcomeRefused},
		{"a reason on two lines", "POST", "/v1/deploy/environments/dev/pause", `{"reason":"a\nb","for":"1h"}`, 422, "one line", audit.VerbPause, audit.OutcomeRefused},
		{"no end", "POST", "/v1/deploy/environments/dev/pause", `{"reason":"x"}`, 400, "give the pause", audit.VerbPause, audit.OutcomeRefused},
		{"no auto-sync", "POST", "/v1/deploy/environments/prod/pause", `{"reason":"x","for":"1h"}`, 409, "has no auto-sync", "", ""},
		{"unknown environment", "POST", "/v1/deploy/environments/nope/pause", `{"reason":"x","for":"1h"}`, 404, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(records(t, trail))
			w := ts.do(t, request{method: tc.method, target: tc.path, admin: true, header: json, body: tc.body})
			if w.Code != tc.want || !strings.Contains(w.Body.String(), tc.wantText) {
				t.Fatalf("%s %s = %d %s, want %d with %q", tc.method, tc.path, w.Code, w.Body, tc.want, tc.wantText)
			}
			recs := records(t, trail)
			if tc.verb == "" {
				if len(recs) != before {
					t.Errorf("records after %s = %d, want %d (nothing to record)", tc.name, len(recs), before)
				}
				return
			}
			if len(recs) != before+1 {
				t.Fatalf("records after %s = %d, want %d (one per attempt); log:\n%s", tc.name, len(recs), before+1, ts.log.String())
			}
			got := recs[0]
			for _, r := range recs {
				if r.Time.After(got.Time) || r.Time.Equal(got.Time) && r.ID > got.ID {
					got = r
				}
			}
			if got.Verb != tc.verb || got.Outcome != tc.outcome || got.Environment != "dev" {
				t.Errorf("record of %s = %s %s in %q, want %s %s in dev", tc.name, got.Verb, got.Outcome, got.Environment, tc.verb, tc.outcome)
			}
		})
	}

	// The page's form pauses and answers with the panel, showing it.
	w := ts.do(t, request{method: "POST", target: "/environments/dev/pause", admin: true,
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "HX-Request": "true"}, body: "reason=<script>alert(1)</script>&for=24h"})
	if w.Code != 200 || !strings.Contains(w.Body.String(), `data-testid="autosync-paused"`) || !strings.Contains(w.Body.String(), "&lt;script&gt;") || strings.Contains(w.Body.String(), "<script>alert") {
		t.Fatalf("POST the pause form = %d %s, want the panel showing the pause, its reason escaped", w.Code, w.Body)
	}
	if !strings.Contains(w.Body.String(), `data-testid="autosync-resume"`) {
		t.Errorf("the panel of a paused environment has no Resume button:\n%s", w.Body)
	}
	w = ts.do(t, request{method: "POST", target: "/environments/dev/resume", admin: true, header: map[string]string{"HX-Request": "true"}})
	if w.Code != 200 || strings.Contains(w.Body.String(), `data-testid="autosync-paused"`) || !strings.Contains(w.Body.String(), `data-testid="autosync-pause"`) {
		t.Errorf("POST resume = %d, want the panel unpaused with the Pause form:\n%s", w.Code, w.Body)
	}
}

// TestEnvironmentsJSON: GET /v1/deploy/environments and
// /v1/deploy/environments/{env} carry source, live, writeBack and
// autoSync; a blocked auto-sync reads as failed with its blockers.
func TestEnvironmentsJSON(t *testing.T) {
	ts, as, trail, store := gitOpsServer(t)
	applied := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	if _, err := store.Save(context.Background(), planstore.Entry{Environment: "dev", Action: "apply", Conclusion: "applied", User: "auto-sync", Time: applied,
		Commit: "1111111111111111111111111111111111111111"}, nil); err != nil {
		t.Fatal(err)
	}
	// The apply's audit record, which the commit live is read from.
	appendTest(t, trail, audit.Record{Time: applied, Actor: audit.EngineActor(), Verb: audit.VerbApply, Outcome: audit.OutcomeSucceeded, Cluster: "test",
		Environment: "dev", Namespace: "staging", Commit: "1111111111111111111111111111111111111111", Blockers: []string{}})
	as.last = &autosync.Run{Time: applied.Add(time.Hour), Trigger: autosync.TriggerAutoSync, Commit: "2222222222222222222222222222222222222222",
		Outcome: autosync.OutcomeBlocked, Blockers: []string{"unpublished-image: api:9.9.9 is not in the registry"}, RunID: "dev-1"}
	if _, err := as.pauses.Pause(context.Background(), "dev", "freeze for the launch", testNow.Add(time.Hour), "admin@example.com"); err != nil {
		t.Fatal(err)
	}
	w := ts.get(t, "/v1/deploy/environments/dev", map[string]string{"Accept": "application/json"})
	if w.Code != 200 {
		t.Fatalf("GET /v1/deploy/environments/dev = %d %s", w.Code, w.Body)
	}
	var got gitOpsJSON
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Source.Repo != "https://git.example.com/shop/manifests.git" || got.Source.Ref != "main" || got.Source.Path != "overlays/dev" {
		t.Errorf("source = %+v, want the repository, main, overlays/dev", got.Source)
	}
	if got.Live == nil || got.Live.Commit != "1111111111111111111111111111111111111111" || !got.Live.AppliedAt.Equal(applied) || got.Live.Actor != "sub auto-sync" {
		t.Errorf("live = %+v, want commit 1111… applied at %s by sub auto-sync (actor.Actor.String)", got.Live, applied)
	}
	if got.WriteBack == nil || got.WriteBack.Mode != "push" || got.WriteBack.Branch != "main" {
		t.Errorf("writeBack = %+v, want push to main", got.WriteBack)
	}
	a := got.AutoSync
	if !a.Enabled || !a.SelfHeal || !a.Paused || a.Reason != "freeze for the launch" || a.PausedUntil == nil || a.Interval != "15s" {
		t.Errorf("autoSync = %+v, want enabled, self-heal, paused for the launch, every 15s", a)
	}
	if a.LastRun == nil || a.LastRun.Outcome != "failed" || a.LastRun.Result != "blocked" || len(a.LastRun.Blockers) != 1 || a.LastRun.Run == nil || a.LastRun.Run.ID != "dev-1" {
		t.Errorf("autoSync.lastRun = %+v, want a failed (blocked) run with its blocker and run", a.LastRun)
	}

	w = ts.get(t, "/v1/deploy/environments", map[string]string{"Accept": "application/json"})
	var list struct {
		Environments []gitOpsJSON `json:"environments"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || w.Code != http.StatusOK {
		t.Fatalf("GET /v1/deploy/environments = %d %s (%v)", w.Code, w.Body, err)
	}
	if len(list.Environments) != 2 || list.Environments[1].Name != "prod" || list.Environments[1].AutoSync.Enabled || list.Environments[1].WriteBack != nil || list.Environments[1].Live != nil {
		t.Errorf("environments = %+v, want dev and prod, prod without write-back, auto-sync or apply", list.Environments)
	}
	if w := ts.get(t, "/v1/deploy/environments/nope", map[string]string{"Accept": "application/json"}); w.Code != 404 {
		t.Errorf("GET an unknown environment = %d, want 404", w.Code)
	}

	// The page shows the same state, the blocked run as failed.
	w = ts.get(t, "/environments/dev/gitops", htmxHeader)
	body := w.Body.String()
	for _, want := range []string{`data-testid="gitops-panel"`, "111111111111"[:7], `data-outcome="failed"`, "unpublished-image", "freeze for the launch", "push"} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /environments/dev/gitops lacks %q:\n%s", want, body)
		}
	}
}

// TestAppPageShowsGitSource: the page of an App an environment renders
// says where its desired state lives, with write-back; one its live CR
// is the only source of says nothing of git.
func TestAppPageShowsGitSource(t *testing.T) {
	for _, tc := range []struct {
		env, want string
	}{
		{"dev", "git, environment dev"},
		{"", ""},
	} {
		base, rel := gitServer(t, tc.env, &fakeCommit{tree: manifestTree("")})
		ts := newTestServer(t, newFakeView(nil), func(o *Options) {
			*o = base.srv.opts
			o.Clusters = []Cluster{{Name: "in-cluster", View: treeView{gitView{newFakeView(nil)}}, Release: rel}}
		})
		w := ts.get(t, "/clusters/in-cluster/apps/apps/api", nil)
		if w.Code != http.StatusOK {
			t.Fatalf("GET the app page (env %q) = %d %s", tc.env, w.Code, w.Body)
		}
		nodes := byTestID(parseHTML(t, w.Body.String()), "app-git-source")
		if tc.want == "" {
			if len(nodes) != 0 {
				t.Errorf("the page of an App no environment renders shows a git source: %s", text(nodes[0]))
			}
			continue
		}
		if len(nodes) != 1 || !strings.Contains(strings.Join(strings.Fields(text(nodes[0])), " "), tc.want) {
			t.Errorf("app-git-source = %d nodes, want one saying %q:\n%s", len(nodes), tc.want, w.Body)
		}
		if !strings.Contains(w.Body.String(), "write-back:") {
			t.Errorf("the app page does not say the write-back mode")
		}
	}
}

// treeView is gitView with a (empty) tree for apps/api, so its page draws.
type treeView struct{ gitView }

func (v treeView) Tree(namespace, name string) (kubeview.Tree, error) {
	if _, ok := v.Row(namespace, name); ok {
		return kubeview.Tree{}, nil
	}
	return v.gitView.Tree(namespace, name)
}

// TestRecentAutoRuns: a replica that does not hold the Lease (the loop's
// memory empty) shows the environment's automatic runs from the audit
// trail, newest first, a refused one as failed with its blockers, in the
// panel and as the JSON's lastRun.
func TestRecentAutoRuns(t *testing.T) {
	ts, _, trail, _ := gitOpsServer(t)
	base := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i, r := range []audit.Record{
		{Verb: audit.VerbAutoSync, Outcome: audit.OutcomeSucceeded, Commit: "1111111111111111111111111111111111111111"},
		{Verb: audit.VerbSelfHeal, Outcome: audit.OutcomeSucceeded, Commit: "1111111111111111111111111111111111111111"},
		{Verb: audit.VerbAutoSync, Outcome: audit.OutcomeRefused, Commit: "2222222222222222222222222222222222222222", Blockers: []string{"boundary: ConfigMap/x"}},
		{Verb: audit.VerbApply, Outcome: audit.OutcomeSucceeded, Commit: "3333333333333333333333333333333333333333"}, // a person's: not listed
	} {
		r.Time, r.Actor, r.Cluster, r.Environment, r.Namespace = base.Add(time.Duration(i)*time.Minute), audit.EngineActor(), "test", "dev", "staging"
		if r.Blockers == nil {
			r.Blockers = []string{}
		}
		appendTest(t, trail, r)
	}
	w := ts.get(t, "/v1/deploy/environments/dev", map[string]string{"Accept": "application/json"})
	var got gitOpsJSON
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("GET /v1/deploy/environments/dev = %d %s: %v", w.Code, w.Body, err)
	}
	lr := got.AutoSync.LastRun
	if lr == nil || lr.Trigger != "auto-sync" || lr.Outcome != "failed" || lr.Result != "refused" || !strings.HasPrefix(lr.Commit, "2222") || len(lr.Blockers) != 1 {
		t.Errorf("lastRun = %+v, want the refused auto-sync of 2222… as failed with its blocker", lr)
	}
	doc := parseHTML(t, ts.get(t, "/environments/dev/gitops", htmxHeader).Body.String())
	var outcomes []string
	for _, n := range byTestID(doc, "autosync-recent-run") {
		outcomes = append(outcomes, attr(n, "data-outcome"))
	}
	if want := []string{"failed", "applied", "applied"}; strings.Join(outcomes, ",") != strings.Join(want, ",") {
		t.Errorf("recent automatic runs = %v, want %v (newest first, the person's apply left out)", outcomes, want)
	}
}

// TestCommitLiveFromAnyApply: the commit live is the newest successful
// apply record, whoever made it: a command-line apply (actor local:alice,
// nothing in the plan history) shows as live; a refused one after it
// does not.
func TestCommitLiveFromAnyApply(t *testing.T) {
	ts, _, trail, _ := gitOpsServer(t)
	base := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i, r := range []audit.Record{
		{Verb: audit.VerbApply, Outcome: audit.OutcomeSucceeded, Commit: "4444444444444444444444444444444444444444", Actor: audit.Actor{Subject: "local:alice"}},
		{Verb: audit.VerbApply, Outcome: audit.OutcomeRefused, Commit: "5555555555555555555555555555555555555555", Actor: audit.Actor{Subject: "local:bob"}},
	} {
		r.Time, r.Cluster, r.Environment, r.Namespace, r.Blockers = base.Add(time.Duration(i)*time.Minute), "test", "dev", "staging", []string{}
		appendTest(t, trail, r)
	}
	w := ts.get(t, "/v1/deploy/environments/dev", map[string]string{"Accept": "application/json"})
	var got gitOpsJSON
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("GET /v1/deploy/environments/dev = %d %s: %v", w.Code, w.Body, err)
	}
	if got.Live == nil || !strings.HasPrefix(got.Live.Commit, "4444") || got.Live.Actor != "sub local:alice" {
		t.Errorf("live = %+v, want the CLI's apply of 4444… by sub local:alice", got.Live)
	}
}
