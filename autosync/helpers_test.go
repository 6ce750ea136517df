package autosync

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
)

// world is the fake git and cluster the loops of a test share: the head
// of each environment's branch, the commit live, the drifted objects, and
// the runs deployed, by replica.
type world struct {
	mu       sync.Mutex
	heads    map[string]string
	live     map[string]string
	liveAt   time.Time // when the live commit was applied (t0 unless set)
	drifted  map[string][]DriftedObject
	headErr  error
	blocked  map[string][]string // commit -> blockers: such a plan is not applied
	deploys  []deployCall
	records  []Record
	inDeploy chan struct{} // when set, Deploy waits for it to close
	active   int           // Deploy calls under way
	// healNoChange makes a heal change nothing (Result.NoChange).
	healNoChange bool
}

// deployCall is one call of a replica's Deploy.
type deployCall struct {
	Identity, Env string
	Req           Request
}

func newWorld() *world {
	return &world{heads: map[string]string{}, live: map[string]string{}, drifted: map[string][]DriftedObject{}, blocked: map[string][]string{}}
}

func (w *world) Head(_ context.Context, env string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.heads[env], w.headErr
}

func (w *world) Live(_ context.Context, env string) (string, time.Time, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.liveAt.IsZero() {
		return w.live[env], t0, nil
	}
	return w.live[env], w.liveAt, nil
}

func (w *world) Drifted(_ context.Context, env string) ([]DriftedObject, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.drifted[env], nil
}

func (w *world) Record(_ context.Context, r Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.records = append(w.records, r)
	return nil
}

func (w *world) set(f func(w *world)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f(w)
}

func (w *world) calls() []deployCall {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]deployCall(nil), w.deploys...)
}

// deployer is one replica's Deployer over the world: a blocked commit is
// not applied; any other is, and becomes live (a heal clears the drift).
type deployer struct {
	w        *world
	identity string
}

func (d deployer) Deploy(ctx context.Context, env string, req Request) (Result, error) {
	d.w.mu.Lock()
	d.w.deploys = append(d.w.deploys, deployCall{Identity: d.identity, Env: env, Req: req})
	n := len(d.w.deploys)
	wait := d.w.inDeploy
	d.w.active++
	d.w.mu.Unlock()
	defer d.w.set(func(w *world) { w.active-- })
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
	d.w.mu.Lock()
	defer d.w.mu.Unlock()
	if b, ok := d.w.blocked[req.Commit]; ok {
		return Result{RunID: runID(n), Outcome: OutcomeBlocked, Blockers: b, Commit: req.Commit}, nil
	}
	if req.Commit == "" {
		return Result{}, errors.New("no commit")
	}
	if req.Trigger == TriggerSelfHeal && d.w.healNoChange {
		return Result{RunID: runID(n), Outcome: OutcomeApplied, Commit: req.Commit, NoChange: true}, nil
	}
	d.w.live[env] = req.Commit
	if req.Trigger == TriggerSelfHeal {
		delete(d.w.drifted, env)
	}
	return Result{RunID: runID(n), Outcome: OutcomeApplied, Commit: req.Commit}, nil
}

func runID(n int) string { return "run-" + string(rune('0'+n%10)) }

// startLoop runs a loop over w as replica identity until the returned
// stop is called; stop waits for Run to return.
func startLoop(t *testing.T, kube kubernetes.Interface, w *world, identity string, clock Clock, pauses PauseLister, envs ...Environment) (*Loop, func()) {
	t.Helper()
	o := Options{
		Environments: envs, Heads: w, Live: w, Deployer: deployer{w: w, identity: identity}, Drift: w, Recorder: w,
		Pauses: pauses, Clock: clock, Kube: kube, Namespace: testNS, Identity: identity,
		LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 100 * time.Millisecond,
	}
	l, err := NewLoop(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return l, stop
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checks returns how many checks l made of env.
func checks(l *Loop, env string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.st[env].checks
}

// settled wakes env's check and waits until it ended. The tests' clock
// never fires, so no other check runs meanwhile once the first one ended.
func settled(t *testing.T, l *Loop, env string) {
	t.Helper()
	n := checks(l, env)
	l.Wake(env)
	waitFor(t, "a check of "+env, func() bool { return checks(l, env) > n })
}

// started waits until l leads and checked each env once.
func started(t *testing.T, l *Loop, envs ...string) {
	t.Helper()
	waitFor(t, "the loop to lead", l.Leading)
	for _, env := range envs {
		waitFor(t, "the first check of "+env, func() bool { return checks(l, env) > 0 })
	}
}
