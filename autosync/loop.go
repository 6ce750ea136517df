package autosync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/internal/lease"
	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// LeaseName is the Lease, in deploy-web's namespace, whose holder is the
// one replica that runs auto-sync and self-heal.
const LeaseName = "deploy-web-autosync"

// Bounds of what the loop keeps of a run.
const (
	maxBlockers     = 20
	maxBlockerBytes = 300
	maxErrorBytes   = 500
	maxHealObjects  = 50
)

// Heads reads the head commit of the branch an environment renders from.
type Heads interface {
	Head(ctx context.Context, env string) (commit string, err error)
}

// Live reads the commit last applied successfully to an environment, and
// when; an environment never applied has commit "". An apply newer than
// a blocked auto-sync is a person acting: the blocked head is tried again.
type Live interface {
	Live(ctx context.Context, env string) (commit string, at time.Time, err error)
}

// Request asks for one guarded run: plan the environment at Commit and
// apply the plan when it is ready.
type Request struct {
	Trigger Trigger
	Commit  string
	// Objects are, for a self-heal, the drifted objects (DriftedObject.Ref)
	// past their grace period: the ones to put back.
	Objects []string
}

// Result is how a run ended: Blockers say why a blocked plan was not
// applied; Commit is the commit planned.
type Result struct {
	RunID    string
	Outcome  Outcome
	Blockers []string
	Commit   string
	// Healed are, for a self-heal, the fields it changed, checked against
	// the live objects after its writes; CannotHeal the ones it could not
	// ("... cannot heal: owned by X"). NoChange says the heal changed
	// nothing and found nothing new it cannot heal: no record is written.
	Healed, CannotHeal []string
	NoChange           bool
}

// ErrNotStarted is a Deployer's answer when its replica is shutting down
// and starts no run: the check ends with nothing recorded (the next
// holder of the Lease checks again).
var ErrNotStarted = errors.New("autosync: no run started: this replica is shutting down")

// Deployer plans and applies an environment in one guarded run (lock,
// gates, capture, report), as envrun's Runner.Deploy does.
type Deployer interface {
	Deploy(ctx context.Context, env string, req Request) (Result, error)
}

// DriftedObject is an object of an environment whose live fields differ
// from what deploy-web applied, since Since (when the drift was first
// seen).
type DriftedObject struct {
	// Ref names the object ("apps/v1 Deployment shop/api").
	Ref   string
	Since time.Time
}

// Drift lists the drifted objects of an environment.
type Drift interface {
	Drifted(ctx context.Context, env string) ([]DriftedObject, error)
}

// Run is one automatic run, as the environment's status shows it.
type Run struct {
	Time     time.Time
	Trigger  Trigger
	Commit   string
	Outcome  Outcome
	Blockers []string
	RunID    string
	// Objects are the drifted objects a self-heal put back.
	Objects []string
	// Healed and CannotHeal are Result's, bounded.
	Healed, CannotHeal []string
	// Error is Deploy's error (OutcomeError).
	Error string
}

// Record is what a Recorder gets for each run.
type Record struct {
	Env string
	// Identity is the replica that ran it.
	Identity string
	Run
}

// Recorder writes an audit record of each automatic run.
type Recorder interface {
	Record(ctx context.Context, r Record) error
}

// PauseLister lists the pauses (Pauses does).
type PauseLister interface {
	List(ctx context.Context) ([]Pause, error)
}

// Clock is the loop's time.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Options configure a Loop; zero durations take the defaults named.
type Options struct {
	// Environments are the environments' auto-sync settings; a protected
	// one with auto-sync on is refused.
	Environments []Environment
	Heads        Heads
	Live         Live
	Deployer     Deployer
	// Drift is required when an environment has SelfHeal.
	Drift Drift
	// Pauses, when set, are honoured (nil: no environment is paused).
	Pauses PauseLister
	// Recorder, when set, gets one record per run.
	Recorder Recorder
	// Clock is the time (the wall clock).
	Clock Clock

	// Kube holds the Lease, in Namespace (deploy-web's own); Identity is
	// this replica's (its pod name). Required.
	Kube      kubernetes.Interface
	Namespace string
	Identity  string
	// Lease timings (15s, 10s, 2s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// ReadTimeout bounds each read of a head, a live commit, the drift and
	// the pauses (30s); DeployTimeout one run (10m).
	ReadTimeout, DeployTimeout time.Duration
	// Log gets a line per run and per failed check.
	Log *slog.Logger
}

// Loop keeps environments at their branch head. Run it on every replica:
// only the one holding the Lease acts.
type Loop struct {
	o       Options
	envs    []Environment
	wake    map[string]chan struct{}
	leading atomic.Bool

	mu sync.Mutex // guards st
	st map[string]*envStatus
}

// envStatus is the loop's memory of one environment.
type envStatus struct {
	state      envState
	last       *Run
	lastErr    string
	next       time.Time
	head, live string
	liveAt     time.Time
	// checks counts the checks done (tests wait on it).
	checks int
}

// NewLoop checks o and returns a loop; Run makes it contend for the Lease.
func NewLoop(o Options) (*Loop, error) {
	envs, err := normaliseAll(o.Environments)
	if err != nil {
		return nil, err
	}
	switch {
	case o.Heads == nil || o.Live == nil || o.Deployer == nil:
		return nil, errors.New("autosync: the loop needs Heads, Live and a Deployer")
	case o.Kube == nil || o.Namespace == "" || o.Identity == "":
		return nil, errors.New("autosync: the loop needs a Kubernetes client, deploy-web's namespace and this replica's identity (its pod name) for the Lease")
	}
	for _, e := range envs {
		if e.SelfHeal && o.Drift == nil {
			return nil, fmt.Errorf("autosync: environment %q has selfHeal but the loop has no Drift source", e.Name)
		}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.LeaseDuration, 15*time.Second)
	def(&o.RenewDeadline, 10*time.Second)
	def(&o.RetryPeriod, 2*time.Second)
	def(&o.ReadTimeout, 30*time.Second)
	def(&o.DeployTimeout, 10*time.Minute)
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	l := &Loop{o: o, envs: envs, wake: map[string]chan struct{}{}, st: map[string]*envStatus{}}
	for _, e := range envs {
		l.wake[e.Name] = make(chan struct{}, 1)
		l.st[e.Name] = &envStatus{}
	}
	return l, nil
}

// Leading reports whether this replica holds the Lease now.
func (l *Loop) Leading() bool { return l.leading.Load() }

// Wake asks for a check of env now (a push was announced); it does
// nothing for an unknown environment. Only the replica holding the Lease
// checks; the others check every environment when they take over.
func (l *Loop) Wake(env string) {
	if c, ok := l.wake[env]; ok {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// Reset forgets env's blocked head and its errors and checks it now: a
// blocked head is tried again. It acts on this replica's memory only; an
// apply (a newer Live time) or a resume seen by the replica holding the
// Lease has the same effect there.
func (l *Loop) Reset(env string) {
	l.mu.Lock()
	if s, ok := l.st[env]; ok {
		s.state.blockedHead, s.state.blockedAt, s.state.failures, s.state.retryAt = "", time.Time{}, 0, time.Time{}
	}
	l.mu.Unlock()
	l.Wake(env)
}

// Run contends for the Lease until ctx ends; while this replica holds it,
// it checks each enabled environment every interval. Losing the Lease
// stops the checks (a run under way is cancelled through its context);
// ending ctx releases the Lease. Run returns once the checks ended.
func (l *Loop) Run(ctx context.Context) error {
	err := lease.Run(ctx, l.o.Kube.CoordinationV1(), lease.Config{
		Namespace: l.o.Namespace, Name: LeaseName, Identity: l.o.Identity,
		LeaseDuration: l.o.LeaseDuration, RenewDeadline: l.o.RenewDeadline, RetryPeriod: l.o.RetryPeriod,
	}, l.lead)
	if err != nil {
		return fmt.Errorf("autosync: %w", err)
	}
	return nil
}

// lead checks the enabled environments until ctx (the term) ends.
func (l *Loop) lead(ctx context.Context) {
	l.leading.Store(true)
	defer l.leading.Store(false)
	var wg sync.WaitGroup
	for _, e := range l.envs {
		if e.Enabled && !e.Protected {
			wg.Go(func() { l.watch(ctx, e) })
		}
	}
	wg.Wait()
}

// watch checks e now, then whenever it is due or woken, until ctx ends.
func (l *Loop) watch(ctx context.Context, e Environment) {
	for {
		next := l.check(ctx, e)
		l.mu.Lock()
		l.st[e.Name].next = next
		l.st[e.Name].checks++
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-l.wake[e.Name]:
		case <-l.o.Clock.After(next.Sub(l.o.Clock.Now())):
		}
	}
}

// check reads e's inputs, decides and acts; it returns when to check
// again.
func (l *Loop) check(ctx context.Context, e Environment) time.Time {
	now := l.o.Clock.Now()
	in := l.read(ctx, e, now)
	l.mu.Lock()
	s := l.st[e.Name]
	if in.err == nil {
		s.head, s.live, s.lastErr = in.head, in.live, ""
	}
	st := s.state
	l.mu.Unlock()
	a := decide(e, st, in, now)
	switch a.kind {
	case actNever:
		return now.Add(e.Interval)
	case actWait:
		return a.next
	case actFail:
		if ctx.Err() != nil {
			return now // the term ended: not a failure of the environment
		}
		l.o.Log.WarnContext(ctx, "autosync: check failed", "env", e.Name, "err", in.err)
		l.mu.Lock()
		s.state = failed(e, s.state, now)
		s.lastErr = textfmt.Cut(in.err.Error(), maxErrorBytes)
		next := s.state.retryAt
		l.mu.Unlock()
		return next
	}
	dctx, cancel := context.WithTimeout(ctx, l.o.DeployTimeout)
	res, err := l.o.Deployer.Deploy(dctx, e.Name, Request{Trigger: a.trigger(), Commit: a.commit, Objects: a.objects})
	cancel()
	if errors.Is(err, ErrNotStarted) {
		return now.Add(e.Interval) // nothing ran: no state, no record
	}
	end := l.o.Clock.Now()
	run := newRun(a, res, err, now)
	l.mu.Lock()
	s.state = settle(e, s.state, a, res, err, end)
	s.last = &run
	s.lastErr = run.Error
	next := s.state.retryAt
	l.mu.Unlock()
	if next.IsZero() {
		next = end.Add(e.Interval)
	}
	l.o.Log.InfoContext(ctx, "autosync: run", "env", e.Name, "trigger", run.Trigger, "commit", run.Commit,
		"outcome", run.Outcome, "run", run.RunID, "blockers", len(run.Blockers), "err", run.Error)
	if l.o.Recorder != nil && !(err == nil && res.NoChange) {
		// The record of a run is written even when the term ends now; a
		// heal that changed nothing writes none.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.o.ReadTimeout)
		if err := l.o.Recorder.Record(rctx, Record{Env: e.Name, Identity: l.o.Identity, Run: run}); err != nil {
			l.o.Log.WarnContext(ctx, "autosync: record run", "env", e.Name, "run", run.RunID, "err", err)
		}
		cancel()
	}
	return next
}

// newRun is the status entry of action a that started at start and ended
// with res or err; its lists are bounded.
func newRun(a action, res Result, err error, start time.Time) Run {
	r := Run{Time: start, Trigger: a.trigger(), Commit: a.commit, Outcome: res.Outcome, RunID: res.RunID}
	if res.Commit != "" {
		r.Commit = res.Commit
	}
	if err != nil {
		r.Outcome, r.Error = OutcomeError, textfmt.Cut(err.Error(), maxErrorBytes)
		if !frozenUntil(err).IsZero() {
			r.Outcome = OutcomeRefused // by a freeze: nothing started
		}
	}
	for i, b := range res.Blockers {
		if i == maxBlockers {
			r.Blockers = append(r.Blockers, fmt.Sprintf("(and %d more)", len(res.Blockers)-i))
			break
		}
		r.Blockers = append(r.Blockers, textfmt.Cut(b, maxBlockerBytes))
	}
	r.Healed, r.CannotHeal = bounded(res.Healed), bounded(res.CannotHeal)
	if len(a.objects) > maxHealObjects {
		r.Objects = append(append(r.Objects, a.objects[:maxHealObjects]...), fmt.Sprintf("(and %d more)", len(a.objects)-maxHealObjects))
	} else {
		r.Objects = append(r.Objects, a.objects...)
	}
	return r
}

// bounded is at most maxHealObjects of list, each cut to
// maxBlockerBytes, with a last line counting the rest.
func bounded(list []string) []string {
	var out []string
	for i, s := range list {
		if i == maxHealObjects {
			return append(out, fmt.Sprintf("(and %d more)", len(list)-i))
		}
		out = append(out, textfmt.Cut(s, maxBlockerBytes))
	}
	return out
}

// read reads what a check of e needs, each read within ReadTimeout.
func (l *Loop) read(ctx context.Context, e Environment, now time.Time) inputs {
	var in inputs
	call := func(what string, f func(ctx context.Context) error) {
		if in.err != nil {
			return
		}
		rctx, cancel := context.WithTimeout(ctx, l.o.ReadTimeout)
		defer cancel()
		if err := f(rctx); err != nil {
			in.err = fmt.Errorf("autosync: environment %q: %s: %w", e.Name, what, err)
		}
	}
	if l.o.Pauses != nil {
		call("read pauses", func(ctx context.Context) error {
			ps, err := l.o.Pauses.List(ctx)
			_, in.paused = activePause(ps, e.Name, now)
			for _, p := range ps {
				if p.Env == e.Name && p.ResumedAt.After(in.actedAt) {
					in.actedAt = p.ResumedAt
				}
			}
			return err
		})
	}
	call("read the branch head", func(ctx context.Context) error {
		h, err := l.o.Heads.Head(ctx, e.Name)
		if err == nil && h == "" {
			err = errors.New("the source has no head commit")
		}
		in.head = h
		return err
	})
	call("read the live commit", func(ctx context.Context) error {
		c, at, err := l.o.Live.Live(ctx, e.Name)
		in.live = c
		if at.After(in.actedAt) {
			in.actedAt = at
		}
		if err == nil {
			l.mu.Lock()
			l.st[e.Name].liveAt = at
			l.mu.Unlock()
		}
		return err
	})
	if e.SelfHeal {
		call("read the drift", func(ctx context.Context) error {
			d, err := l.o.Drift.Drifted(ctx, e.Name)
			in.drifted = d
			return err
		})
	}
	return in
}

// Status is an environment's auto-sync state for the pages and the API.
type Status struct {
	Enabled, SelfHeal bool
	// Paused is set while a pause is active: until PausedUntil, for
	// PauseReason, by PausedBy.
	Paused      bool
	PausedUntil time.Time
	PauseReason string
	PausedBy    string
	// Head, Live and LiveAt are what the last check read (on the replica
	// holding the Lease; empty on the others).
	Head, Live string
	LiveAt     time.Time
	// LastRun is the last automatic run (nil: none this term).
	LastRun *Run
	// LastError is the last failed check or run's error; "" after a
	// check that worked.
	LastError string
	// NextCheck is when the environment is checked next (zero when this
	// replica does not hold the Lease).
	NextCheck time.Time
}

// Status returns env's auto-sync state; the pause comes from the pauses
// store (read now), the rest from this replica's memory. An unknown
// environment is an error; so is a failed read of the pauses, returned
// with the rest of the status.
func (l *Loop) Status(ctx context.Context, env string) (Status, error) {
	var e *Environment
	for i := range l.envs {
		if l.envs[i].Name == env {
			e = &l.envs[i]
		}
	}
	if e == nil {
		return Status{}, fmt.Errorf("autosync: no environment %q has autoSync", env)
	}
	out := Status{Enabled: e.Enabled && !e.Protected, SelfHeal: e.SelfHeal && !e.Protected}
	l.mu.Lock()
	s := l.st[env]
	out.Head, out.Live, out.LiveAt, out.LastError = s.head, s.live, s.liveAt, s.lastErr
	if s.last != nil {
		r := *s.last
		out.LastRun = &r
	}
	if l.leading.Load() {
		out.NextCheck = s.next
	}
	l.mu.Unlock()
	if l.o.Pauses == nil {
		return out, nil
	}
	rctx, cancel := context.WithTimeout(ctx, l.o.ReadTimeout)
	defer cancel()
	ps, err := l.o.Pauses.List(rctx)
	if p, ok := activePause(ps, env, l.o.Clock.Now()); ok {
		out.Paused, out.PausedUntil, out.PauseReason, out.PausedBy = true, p.Until, p.Reason, p.By
	}
	return out, err
}
