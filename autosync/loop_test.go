package autosync

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/internal/sign/signtest"
)

func dev(selfHeal bool) Environment {
	return Environment{Name: "dev", Enabled: true, SelfHeal: selfHeal, Interval: time.Minute, Grace: 2 * time.Minute}
}

func TestLoopAutoSync(t *testing.T) {
	w := newWorld()
	w.heads["dev"], w.heads["qa"], w.heads["prod"] = "a", "q1", "p1"
	clock := newClock(t0)
	l, _ := startLoop(t, fake.NewClientset(), w, "replica-a", clock, nil,
		dev(false), Environment{Name: "qa"}, Environment{Name: "prod", Protected: true})
	started(t, l, "dev")
	want := []deployCall{{"replica-a", "dev", Request{Trigger: TriggerAutoSync, Commit: "a"}}}
	check := func(step string) {
		t.Helper()
		if diff := cmp.Diff(want, w.calls()); diff != "" {
			t.Fatalf("%s: Deploy calls (-want +got):\n%s", step, diff)
		}
	}
	check("first check")
	settled(t, l, "dev")
	check("in sync")

	// A blocked plan is not applied, shows as the last run, and is not
	// tried again for the same head.
	w.set(func(w *world) { w.heads["dev"], w.blocked["b"] = "b", []string{"gate: image not signed"} })
	settled(t, l, "dev")
	want = append(want, deployCall{"replica-a", "dev", Request{Trigger: TriggerAutoSync, Commit: "b"}})
	check("head b")
	st, err := l.Status(context.Background(), "dev")
	if err != nil {
		t.Fatal(err)
	}
	wantRun := &Run{Time: t0, Trigger: TriggerAutoSync, Commit: "b", Outcome: OutcomeBlocked, Blockers: []string{"gate: image not signed"}, RunID: "run-2"}
	if diff := cmp.Diff(wantRun, st.LastRun); diff != "" {
		t.Errorf("Status().LastRun after a blocked plan (-want +got):\n%s", diff)
	}
	if st.Head != "b" || st.Live != "a" || !st.NextCheck.Equal(t0.Add(time.Minute)) {
		t.Errorf("Status() = head %q, live %q, next %s; want b, a, t0+1m", st.Head, st.Live, st.NextCheck)
	}
	for range 3 {
		settled(t, l, "dev")
	}
	check("same head after blocked")

	// A person acted: the blocked head is tried once more.
	l.Reset("dev")
	waitFor(t, "the retry", func() bool { return len(w.calls()) == len(want)+1 })
	settled(t, l, "dev")
	want = append(want, deployCall{"replica-a", "dev", Request{Trigger: TriggerAutoSync, Commit: "b"}})
	check("after Reset")

	// The head moves past the blocked one.
	w.set(func(w *world) { w.heads["dev"] = "c" })
	settled(t, l, "dev")
	want = append(want, deployCall{"replica-a", "dev", Request{Trigger: TriggerAutoSync, Commit: "c"}})
	check("head c")
	if st, _ := l.Status(context.Background(), "dev"); st.LastRun == nil || st.LastRun.Outcome != OutcomeApplied || st.Live != "a" && st.LastRun.Commit != "c" {
		t.Errorf("Status().LastRun after head c = %+v, want c applied", st.LastRun)
	}
	w.mu.Lock()
	records := len(w.records)
	w.mu.Unlock()
	if records != len(want) {
		t.Errorf("%d records, want one per run (%d)", records, len(want))
	}
	// qa (auto-sync off) and prod (protected) were never deployed, though
	// their heads are not live.
	for _, c := range w.calls() {
		if c.Env != "dev" {
			t.Errorf("Deploy(%s) called, want only dev", c.Env)
		}
	}
	if st, _ := l.Status(context.Background(), "prod"); st.Enabled || st.SelfHeal {
		t.Errorf("Status(prod) = %+v, want auto-sync off", st)
	}
	if _, err := l.Status(context.Background(), "nope"); err == nil {
		t.Error("Status(unknown) = nil error, want one")
	}
}

func TestLoopPause(t *testing.T) {
	w := newWorld()
	w.heads["dev"], w.live["dev"] = "a", "a"
	kube := fake.NewClientset()
	clock := newClock(t0)
	pauses := NewPauses(kube.CoreV1(), testNS, signtest.Keys(), clock.Now)
	ctx := context.Background()
	if _, err := pauses.Pause(ctx, "dev", "db migration", t0.Add(time.Hour), "ada"); err != nil {
		t.Fatal(err)
	}
	l, _ := startLoop(t, kube, w, "replica-a", clock, pauses, dev(false))
	started(t, l, "dev")
	w.set(func(w *world) { w.heads["dev"] = "b" })
	settled(t, l, "dev")
	if c := w.calls(); len(c) != 0 {
		t.Fatalf("Deploy calls while paused: %+v, want none", c)
	}
	st, err := l.Status(ctx, "dev")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Paused || !st.PausedUntil.Equal(t0.Add(time.Hour)) || st.PauseReason != "db migration" || st.PausedBy != "ada" {
		t.Errorf("Status() = %+v, want paused until t0+1h by ada for the db migration", st)
	}
	if _, err := pauses.Resume(ctx, "dev", "bob"); err != nil {
		t.Fatal(err)
	}
	settled(t, l, "dev")
	if diff := cmp.Diff([]deployCall{{"replica-a", "dev", Request{Trigger: TriggerAutoSync, Commit: "b"}}}, w.calls()); diff != "" {
		t.Errorf("Deploy calls after Resume (-want +got):\n%s", diff)
	}

	// A pause lapses by itself.
	if _, err := pauses.Pause(ctx, "dev", "again", t0.Add(time.Minute), "ada"); err != nil {
		t.Fatal(err)
	}
	w.set(func(w *world) { w.heads["dev"] = "c" })
	settled(t, l, "dev")
	if n := len(w.calls()); n != 1 {
		t.Fatalf("%d Deploy calls while paused again, want 1", n)
	}
	clock.Set(t0.Add(time.Minute))
	settled(t, l, "dev")
	if n := len(w.calls()); n != 2 {
		t.Errorf("%d Deploy calls after the pause lapsed, want 2", n)
	}
	if st, _ := l.Status(ctx, "dev"); st.Paused {
		t.Errorf("Status() after the pause lapsed = %+v, want not paused", st)
	}
}

func TestLoopSelfHeal(t *testing.T) {
	w := newWorld()
	w.heads["dev"], w.live["dev"] = "a", "a"
	w.drifted["dev"] = []DriftedObject{{Ref: "apps/v1 Deployment shop/api", Since: t0.Add(-90 * time.Second)}}
	clock := newClock(t0)
	l, _ := startLoop(t, fake.NewClientset(), w, "replica-a", clock, nil, dev(true))
	started(t, l, "dev")
	if c := w.calls(); len(c) != 0 {
		t.Fatalf("Deploy calls with drift below grace: %+v, want none", c)
	}
	if st, _ := l.Status(context.Background(), "dev"); !st.NextCheck.Equal(t0.Add(30 * time.Second)) {
		t.Errorf("Status().NextCheck = %s, want when the drift is due (t0+30s), before the interval", st.NextCheck)
	}
	clock.Set(t0.Add(30 * time.Second))
	settled(t, l, "dev")
	heal := deployCall{"replica-a", "dev", Request{Trigger: TriggerSelfHeal, Commit: "a", Objects: []string{"apps/v1 Deployment shop/api"}}}
	if diff := cmp.Diff([]deployCall{heal}, w.calls()); diff != "" {
		t.Fatalf("Deploy calls with drift past grace (-want +got):\n%s", diff)
	}
	w.mu.Lock()
	rec := w.records[len(w.records)-1]
	w.mu.Unlock()
	if rec.Trigger != TriggerSelfHeal || rec.Env != "dev" || rec.Identity != "replica-a" || !slicesEqual(rec.Objects, []string{"apps/v1 Deployment shop/api"}) {
		t.Errorf("heal record = %+v, want a self-heal of dev by replica-a naming the Deployment", rec)
	}

	// Someone scales it again: an old drift, but within the heal window.
	w.set(func(w *world) {
		w.drifted["dev"] = []DriftedObject{{Ref: "apps/v1 Deployment shop/api", Since: t0}}
	})
	clock.Set(t0.Add(150*time.Second - time.Second))
	settled(t, l, "dev")
	if n := len(w.calls()); n != 1 {
		t.Fatalf("%d Deploy calls within the heal window, want 1", n)
	}
	clock.Set(t0.Add(150 * time.Second))
	settled(t, l, "dev")
	if diff := cmp.Diff([]deployCall{heal, heal}, w.calls()); diff != "" {
		t.Errorf("Deploy calls after the heal window (-want +got):\n%s", diff)
	}
}

// TestLoopHealNoChangeNoRecord: a heal that changed nothing (and found
// nothing new it cannot heal) writes no record.
func TestLoopHealNoChangeNoRecord(t *testing.T) {
	w := newWorld()
	w.heads["dev"], w.live["dev"], w.healNoChange = "a", "a", true
	w.drifted["dev"] = []DriftedObject{{Ref: "apps/v1 Deployment shop/api", Since: t0.Add(-time.Hour)}}
	l, _ := startLoop(t, fake.NewClientset(), w, "replica-a", newClock(t0), nil, dev(true))
	started(t, l, "dev")
	settled(t, l, "dev")
	if n := len(w.calls()); n != 1 {
		t.Fatalf("%d Deploy calls, want the one heal", n)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.records) != 0 {
		t.Errorf("records = %+v, want none for a heal that changed nothing", w.records)
	}
}

func TestLoopBackoff(t *testing.T) {
	w := newWorld()
	w.heads["dev"], w.live["dev"] = "a", "a"
	w.headErr = errors.New("git: connection refused")
	clock := newClock(t0)
	l, _ := startLoop(t, fake.NewClientset(), w, "replica-a", clock, nil, dev(false))
	started(t, l, "dev")
	st, _ := l.Status(context.Background(), "dev")
	if !strings.Contains(st.LastError, "connection refused") || !st.NextCheck.Equal(t0.Add(time.Minute)) {
		t.Errorf("after 1 error: LastError %q, NextCheck %s; want the error and t0+1m", st.LastError, st.NextCheck)
	}
	clock.Set(t0.Add(time.Minute))
	settled(t, l, "dev")
	if st, _ := l.Status(context.Background(), "dev"); !st.NextCheck.Equal(t0.Add(3 * time.Minute)) {
		t.Errorf("after 2 errors: NextCheck %s, want t0+3m (2 intervals later)", st.NextCheck)
	}
	// Git is back and the head moved, but a wake-up during the backoff
	// does not deploy.
	w.set(func(w *world) { w.headErr, w.heads["dev"] = nil, "b" })
	settled(t, l, "dev")
	if c := w.calls(); len(c) != 0 {
		t.Fatalf("Deploy calls during the backoff: %+v, want none", c)
	}
	clock.Set(t0.Add(3 * time.Minute))
	settled(t, l, "dev")
	if n := len(w.calls()); n != 1 {
		st, _ := l.Status(context.Background(), "dev")
		t.Fatalf("%d Deploy calls after the backoff, want 1 (status %+v)", n, st)
	}
	if st, _ := l.Status(context.Background(), "dev"); st.LastError != "" || !st.NextCheck.Equal(t0.Add(4*time.Minute)) {
		t.Errorf("after recovery: LastError %q, NextCheck %s; want none and t0+4m", st.LastError, st.NextCheck)
	}
}

func TestNewLoopRefuses(t *testing.T) {
	w := newWorld()
	base := Options{Heads: w, Live: w, Deployer: deployer{w: w}, Drift: w, Kube: fake.NewClientset(), Namespace: testNS, Identity: "r"}
	tests := []struct {
		name    string
		change  func(o *Options)
		wantErr string
	}{
		{"protected with auto-sync", func(o *Options) {
			o.Environments = []Environment{{Name: "prod", Enabled: true, Protected: true}}
		}, "protected"},
		{"self-heal without drift", func(o *Options) { o.Environments, o.Drift = []Environment{dev(true)}, nil }, "no Drift source"},
		{"no identity", func(o *Options) { o.Environments, o.Identity = []Environment{dev(false)}, "" }, "identity"},
		{"no deployer", func(o *Options) { o.Environments, o.Deployer = []Environment{dev(false)}, nil }, "Deployer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			tt.change(&o)
			if _, err := NewLoop(o); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("NewLoop() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func slicesEqual(a, b []string) bool { return cmp.Equal(a, b) }

// TestLoopStopWaitsForRun: Run returns only once the run under way
// ended, and the Lease is released for the next replica.
func TestLoopStopWaitsForRun(t *testing.T) {
	w := newWorld()
	w.heads["dev"] = "a"
	w.inDeploy = make(chan struct{}) // never closed: the run ends with its context
	kube := fake.NewClientset()
	l, stop := startLoop(t, kube, w, "replica-a", newClock(t0), nil, dev(false))
	waitFor(t, "the run to start", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.active == 1
	})
	stop()
	w.mu.Lock()
	active := w.active
	w.mu.Unlock()
	if active != 0 || l.Leading() {
		t.Fatalf("after Run returned: %d runs under way, leading %v; want none, false", active, l.Leading())
	}
	lease, err := kube.CoordinationV1().Leases(testNS).Get(context.Background(), LeaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := lease.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("Lease holder after stop = %q, want released", *h)
	}
	st, _ := l.Status(context.Background(), "dev")
	if st.LastRun == nil || st.LastRun.Outcome != OutcomeError || !st.NextCheck.IsZero() {
		t.Errorf("Status() after a run cut by stop = %+v, want an error run and no next check (not leading)", st)
	}
}

// TestLoopBlockedRetriedWhenAPersonActs: a blocked head is tried once
// more after a person applies the environment or resumes it, from any
// replica (what the replica holding the Lease reads), and then waits
// again: no hot loop.
func TestLoopBlockedRetriedWhenAPersonActs(t *testing.T) {
	w := newWorld()
	w.heads["dev"], w.live["dev"], w.blocked["b"] = "b", "a", []string{"gate: smoke test failed"}
	kube := fake.NewClientset()
	clock := newClock(t0.Add(time.Minute))
	pauses := NewPauses(kube.CoreV1(), testNS, signtest.Keys(), clock.Now)
	l, _ := startLoop(t, kube, w, "replica-a", clock, pauses, dev(false))
	started(t, l, "dev")
	calls := func(want int, step string) {
		t.Helper()
		settled(t, l, "dev")
		settled(t, l, "dev")
		if n := len(w.calls()); n != want {
			t.Fatalf("%s: %d Deploy calls of the blocked head, want %d", step, n, want)
		}
	}
	calls(1, "blocked")
	// A person applied the environment (another replica, or kubectl of
	// the engine): Live's time moves past the block.
	clock.Set(t0.Add(2 * time.Minute))
	w.set(func(w *world) { w.liveAt = t0.Add(90 * time.Second) })
	calls(2, "after a person's apply")
	// A pause and a resume through the store.
	ctx := context.Background()
	if _, err := pauses.Pause(ctx, "dev", "look at the smoke test", t0.Add(time.Hour), "ada"); err != nil {
		t.Fatal(err)
	}
	calls(2, "paused")
	clock.Set(t0.Add(3 * time.Minute))
	if _, err := pauses.Resume(ctx, "dev", "ada"); err != nil {
		t.Fatal(err)
	}
	calls(3, "after the resume")
}
