package main

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
	"github.com/hanzoai/deploy-web/planstore"
)

// autoSyncCM is a ConfigMap of App api with data.v = value.
func autoSyncCM(value string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api-config\n  labels: {app.kubernetes.io/instance: api}\ndata:\n  v: \"" + value + "\"\n"
}

// countingRunner is one replica's runner that notes each Deploy it is
// asked for (replica, trigger, commit).
type countingRunner struct {
	*envrun.Runner
	identity string
	calls    *deployCalls
}

type deployCall struct{ identity, trigger, commit string }

type deployCalls struct {
	mu    sync.Mutex
	calls []deployCall
}

func (c *countingRunner) Deploy(env string, d envrun.DeployRequest) (*envrun.Run, error) {
	c.calls.mu.Lock()
	c.calls.calls = append(c.calls.calls, deployCall{c.identity, d.Trigger, d.Commit})
	c.calls.mu.Unlock()
	return c.Runner.Deploy(env, d)
}

func (c *deployCalls) of(trigger, commit string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, d := range c.calls {
		if d.trigger == trigger && d.commit == commit {
			out = append(out, d.identity)
		}
	}
	return out
}

// auditRecords keeps the records both replicas write.
type auditRecords struct {
	mu   sync.Mutex
	recs []audit.Record
}

func (a *auditRecords) add(_ context.Context, r audit.Record) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, r)
}

func (a *auditRecords) find(verb audit.Verb, commit string) []audit.Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []audit.Record
	for _, r := range a.recs {
		if r.Verb == verb && (commit == "" || r.Commit == commit) {
			out = append(out, r)
		}
	}
	return out
}

// autoSyncDevConfig is environment dev (namespace dev) rendered from m/
// of the repository at repo, auto-synced with self-heal (interval 10s,
// grace 1s).
func autoSyncDevConfig(t *testing.T, repo string) *envconfig.Config {
	t.Helper()
	cfg, err := envconfig.ParseConfig([]byte(`environments:
  - name: dev
    cluster: {context: test}
    namespace: dev
    source: {repo: "`+repo+`", ref: main, path: m}
    catalog: catalog.json
    registry: {skip: true}
    autoSync: {enabled: true, selfHeal: true, interval: 10s, grace: 1s}
`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// runAutoSyncReplica runs replica id of serve's auto-sync for cfg on p's
// cluster until the stop it returns is called (at the test's end too):
// its own index and runner (wrap, when set, wraps the runner), the plan
// history store, records keeping the audit records, a Lease of 2 s.
func runAutoSyncReplica(ctx context.Context, t *testing.T, p *platformtest.Env, cfg *envconfig.Config, store *planstore.Store, records *auditRecords,
	id string, wrap func(*envrun.Runner) autoSyncRunner) (*autoSync, func()) {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	index := envsource.New(cfg, log, time.Hour)
	if err := index.Refresh(ctx, "dev"); err != nil {
		t.Fatal(err)
	}
	runner := envrun.New(cfg, log, envrun.Options{RestConfig: p.Cluster.Config, Events: p.Kube.CoreV1(),
		ReportsDir: t.TempDir(), Store: store, ApplyTimeout: 2 * time.Minute, Index: index, Record: records.add})
	var r autoSyncRunner = runner
	if wrap != nil {
		r = wrap(runner)
	}
	as, err := newAutoSync(autoSyncDeps{cfg: cfg, index: index, runner: r, store: store,
		envConfig: func(*envconfig.Environment) (*rest.Config, error) { return p.Cluster.Config, nil },
		kube:      kubernetes.NewForConfigOrDie(platformtest.AdminConfig(p.Cluster.Config)), namespace: "deploy-web", identity: id,
		keys: signtest.Keys(), appendRecord: records.add, log: log,
		leaseDuration: 2 * time.Second, renewDeadline: time.Second, retryPeriod: 100 * time.Millisecond})
	if err != nil || as == nil {
		t.Fatalf("newAutoSync(%s) = %v, %v; want a loop for dev", id, as, err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); as.run(rctx, log) }()
	end := func() { stop(); <-done } // twice is fine: done stays closed
	t.Cleanup(end)
	return as, end
}

// TestAutoSyncOnControlPlane: serve's auto-sync wiring on the real control
// plane, with the manifests on a git smart-HTTP server on loopback and two
// replicas (two runners, two loops, one Lease): a new commit is applied
// (actor auto-sync); a blocked plan is recorded with its blockers and not
// tried again for the same head; a pause stops auto-sync and a resume
// starts it again; self-heal puts a drifted field back and records what
// it healed; when the leader stops, the other replica applies the next
// commit; no commit is ever deployed by both replicas.
func TestAutoSyncOnControlPlane(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{"dev", "deploy-web"}})
	srv := gitservertest.New(t, map[string]string{
		"m/kustomization.yaml": "resources: [api.yaml]\n",
		"m/api.yaml":           autoSyncCM("1"),
		"catalog.json":         `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`,
	}, gitservertest.Options{})
	cfg := autoSyncDevConfig(t, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls, records := &deployCalls{}, &auditRecords{}
	store := planstore.New(p.Kube.CoreV1(), "deploy-web", 50)
	replicas := map[string]*autoSync{}
	stops := map[string]func(){}
	for _, id := range []string{"replica-a", "replica-b"} {
		replicas[id], stops[id] = runAutoSyncReplica(ctx, t, p, cfg, store, records, id,
			func(r *envrun.Runner) autoSyncRunner { return &countingRunner{r, id, calls} })
	}
	wakeAll := func() {
		for _, as := range replicas {
			as.loop.Wake("dev")
		}
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; deploys %+v", what, calls.calls)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	leader := func() *autoSync {
		for _, as := range replicas {
			if as.loop.Leading() {
				return as
			}
		}
		return nil
	}
	// checked wakes the leader and waits for one more check of dev (its
	// next check time moves): counts, not a wall-clock window.
	checked := func() {
		t.Helper()
		l := leader()
		if l == nil {
			t.Fatal("no replica leads")
		}
		st, _, _ := l.Status(ctx, "dev")
		before := st.NextCheck
		time.Sleep(5 * time.Millisecond) // NextCheck has the clock's resolution
		l.loop.Wake("dev")
		waitFor("a check of dev", func() bool {
			st, _, _ := l.Status(ctx, "dev")
			return !st.NextCheck.Equal(before) && !st.NextCheck.IsZero()
		})
	}
	value := func() string {
		cm, err := p.Kube.CoreV1().ConfigMaps("dev").Get(ctx, "api-config", metav1.GetOptions{})
		if err != nil {
			return "(" + err.Error() + ")"
		}
		return cm.Data["v"]
	}
	applied := func(commit string) {
		t.Helper()
		waitFor("auto-sync of "+commit[:7], func() bool {
			for _, r := range records.find(audit.VerbAutoSync, commit) {
				if r.Outcome == audit.OutcomeSucceeded {
					return true
				}
			}
			return false
		})
	}
	onlyOne := func(trigger, commit string) {
		t.Helper()
		if got := calls.of(trigger, commit); len(got) != 1 {
			t.Errorf("%s deploys of %s = %v, want exactly one, by one replica", trigger, commit[:7], got)
		}
	}

	// The first head: live is nothing, so it is applied.
	h1 := srv.Head("main")
	applied(h1)
	if value() != "1" {
		t.Errorf("api-config v = %q after the first auto-sync, want 1", value())
	}

	// A new commit goes live.
	h2 := srv.RemoteCommit("m/api.yaml", autoSyncCM("2"))
	wakeAll()
	applied(h2)
	if value() != "2" {
		t.Errorf("api-config v = %q after the auto-sync of %s, want 2", value(), h2[:7])
	}
	rec := records.find(audit.VerbAutoSync, h2)[0]
	if rec.Actor.Subject != audit.EngineSubject || !strings.Contains(rec.Message, "applied") {
		t.Errorf("auto-sync record = %+v, want actor auto-sync and the outcome", rec)
	}
	var applies int
	entries, _ := store.List(ctx, "dev")
	for _, e := range entries {
		if e.Action == envrun.ActionApply && e.Commit == h2 && e.User == audit.EngineSubject {
			applies++
		}
	}
	if applies != 1 {
		t.Errorf("apply entries of %s by auto-sync = %d, want 1", h2[:7], applies)
	}

	// A blocked plan: recorded with its blockers, nothing applied, not
	// tried again for the same head.
	h3 := srv.RemoteCommit("m/api.yaml", strings.Replace(autoSyncCM("3"), "metadata:\n", "metadata:\n  namespace: kube-system\n", 1))
	wakeAll()
	waitFor("the blocked auto-sync of "+h3[:7], func() bool { return len(records.find(audit.VerbAutoSync, h3)) > 0 })
	blocked := records.find(audit.VerbAutoSync, h3)[0]
	if blocked.Outcome != audit.OutcomeRefused || len(blocked.Blockers) == 0 || !strings.Contains(blocked.Message, "blockers") {
		t.Errorf("blocked auto-sync record = %+v, want refused with the blockers", blocked)
	}
	st, _, _ := leader().Status(ctx, "dev")
	if st.LastRun == nil || st.LastRun.Outcome != autosync.OutcomeBlocked || len(st.LastRun.Blockers) == 0 {
		t.Errorf("Status().LastRun = %+v, want the blocked run with its blockers", st.LastRun)
	}
	checked()
	checked()
	onlyOne(envrun.TriggerAutoSync, h3)
	if value() != "2" {
		t.Errorf("api-config v = %q after a blocked auto-sync, want 2 (nothing applied)", value())
	}

	// Paused: a new good commit waits; resumed: it goes live.
	if _, err := replicas["replica-b"].Pause(ctx, "dev", "incident 7", time.Now().Add(time.Hour), "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	h4 := srv.RemoteCommit("m/api.yaml", autoSyncCM("4"))
	checked()
	checked()
	if got := calls.of(envrun.TriggerAutoSync, h4); len(got) != 0 || value() != "2" {
		t.Fatalf("deploys of %s while paused = %v (v = %q), want none", h4[:7], got, value())
	}
	st, _, _ = leader().Status(ctx, "dev")
	if !st.Paused || st.PauseReason != "incident 7" {
		t.Errorf("Status() while paused = %+v, want paused for incident 7", st)
	}
	if _, err := replicas["replica-a"].Resume(ctx, "dev", "bob@example.com"); err != nil {
		t.Fatal(err)
	}
	wakeAll()
	applied(h4)
	if value() != "4" {
		t.Errorf("api-config v = %q after the resume, want 4", value())
	}

	// Self-heal: another manager's edit of data.v is put back, and
	// recorded with what was healed.
	cm, err := p.Kube.CoreV1().ConfigMaps("dev").Get(ctx, "api-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["v"] = "by hand"
	if _, err := p.Kube.CoreV1().ConfigMaps("dev").Update(ctx, cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	wakeAll()
	waitFor("a self-heal", func() bool {
		for _, r := range records.find(audit.VerbSelfHeal, "") {
			if r.Outcome == audit.OutcomeSucceeded {
				return true
			}
		}
		return false
	})
	if value() != "4" {
		t.Errorf("api-config v = %q after the self-heal, want 4 (put back)", value())
	}
	heals := records.find(audit.VerbSelfHeal, "")
	heal := heals[len(heals)-1]
	if heal.Commit != h4 || !strings.Contains(heal.Message, "ConfigMap/api-config") || !strings.Contains(heal.Message, "data.v") ||
		!slices.ContainsFunc(heal.Objects, func(o audit.Object) bool { return o.Kind == "ConfigMap" && o.Name == "api-config" }) {
		t.Errorf("self-heal record = %+v, want commit %s naming ConfigMap/api-config's data.v", heal, h4[:7])
	}
	// Put back, the drift is gone: no second heal.
	checked()
	if n := len(calls.of(envrun.TriggerSelfHeal, h4)); n != 1 {
		t.Errorf("self-heal deploys = %d, want 1", n)
	}

	// The leader stops (a rolling update): the other replica takes the
	// Lease and applies the next commit.
	var first string
	for id, as := range replicas {
		if as.loop.Leading() {
			first = id
		}
	}
	stops[first]()
	h5 := srv.RemoteCommit("m/api.yaml", autoSyncCM("5"))
	waitFor("the other replica to lead", func() bool { return leader() != nil && !replicas[first].loop.Leading() })
	wakeAll()
	applied(h5)
	if got := calls.of(envrun.TriggerAutoSync, h5); len(got) != 1 || got[0] == first {
		t.Errorf("deploys of %s after %s stopped = %v, want one by the other replica", h5[:7], first, got)
	}

	// Two replicas never both deployed a commit.
	for _, h := range []string{h1, h2, h4, h5} {
		onlyOne(envrun.TriggerAutoSync, h)
	}
}
