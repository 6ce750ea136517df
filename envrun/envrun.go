// Package envrun runs the deploy engine (deployplan) for the console: one
// plan or apply at a time per environment, in the background, with its
// progress kept for streaming, its report saved to the plan history
// (planstore) and, for an apply, an audit Event and a log line naming the
// user.
package envrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/planstore"
)

// Actions.
const (
	ActionPlan  = "plan"
	ActionApply = "apply"
)

// ConclusionInterrupted is the history entry's conclusion (and the
// metrics' outcome) of a run its replica interrupted as it shut down
// (Drain): the entry's report says what was written.
const ConclusionInterrupted = "interrupted"

// Errors of Start.
var (
	ErrBusy = errors.New("envrun: a plan or apply is already running for this environment")
	// ErrStopping refuses a run asked of a replica that is shutting down
	// (Drain): nothing starts; another replica takes the next request.
	ErrStopping   = errors.New("envrun: this replica is shutting down: no new plan or apply starts here; try again")
	ErrUnknownEnv = errors.New("envrun: no such environment")
)

// Refresher re-reads an environment's desired state after an apply (the
// git desired-source index).
type Refresher interface {
	Refresh(ctx context.Context, env string) error
}

// Options configures a Runner.
type Options struct {
	// ClusterConfig returns the rest config of an environment's own
	// cluster: every read and write of its plan, apply, object diffs and
	// audit Events goes there. An error ends the run with an error (never
	// a fallback to another cluster). When set, RestConfig and Events are
	// not used.
	ClusterConfig func(env *envconfig.Environment) (*rest.Config, error)
	// RestConfig reaches the cluster of every environment when
	// ClusterConfig is nil (one cluster, tests).
	RestConfig *rest.Config
	// ReportsDir receives each run's report and pre-apply capture.
	ReportsDir string
	// Store keeps the history.
	Store *planstore.Store
	// Events records the audit Events.
	Events typedcorev1.EventsGetter
	// Index is refreshed after each run (optional).
	Index Refresher
	// ApplyTimeout bounds the wait for workload health (default 5m).
	ApplyTimeout time.Duration
	// Count, when set, is told the outcome of each apply (metrics).
	Count func(action, outcome string)
	// BaseContext is the server's context: once it ends no new run
	// starts (ErrStopping), and the runs under way are interrupted (as
	// Drain's grace ending does): a plan stops, an apply stops before its
	// next write, recorded as interrupted, its lock released. Default:
	// never ends. A server that drains passes a context that outlives
	// its grace and calls Drain.
	BaseContext context.Context
	// Record, when set, receives the audit record of every apply,
	// refused and failed ones included (plans write nothing: no record),
	// built by ApplyRecord with the run's actor; its Cluster is left for
	// Record to name. It is called once per apply, at its end.
	Record func(ctx context.Context, rec audit.Record)
	// Freezes, when set, is asked before every apply and every Deploy
	// that applies (freeze.Gate): a frozen target refuses the run before
	// anything starts, recorded as refused; a superadmin's break-glass
	// lets one through, its Override in the apply's audit record.
	Freezes Freezes
	// Cluster names the cluster an environment deploys to, for the
	// freezes' cluster selectors (nil or "": none).
	Cluster func(env string) string
	// BeforeWrite is deployplan.ApplyOptions.BeforeWrite of every apply
	// (tests stall an apply with it).
	BeforeWrite func(ctx context.Context, what string)
}

// Runner starts and tracks runs.
type Runner struct {
	cfg  *envconfig.Config
	opts Options
	log  *slog.Logger

	mu   sync.Mutex
	runs map[string]*Run // by id; the newest few per environment are kept
	busy map[string]string
	// stopping is set by Drain (or BaseContext's end): no run starts.
	stopping bool
	// going counts the runs in their goroutine, until their records are
	// kept.
	going sync.WaitGroup
	// interrupt ends when the runs under way must stop (Drain's grace
	// over, or BaseContext ended).
	interrupt     context.Context
	interruptRuns context.CancelFunc
}

// New returns a Runner over the environments of cfg.
func New(cfg *envconfig.Config, log *slog.Logger, opts Options) *Runner {
	if opts.ApplyTimeout <= 0 {
		opts.ApplyTimeout = 5 * time.Minute
	}
	r := &Runner{cfg: cfg, opts: opts, log: log.With("component", "envrun"), runs: map[string]*Run{}, busy: map[string]string{}}
	r.interrupt, r.interruptRuns = context.WithCancel(context.Background())
	if opts.BaseContext != nil {
		context.AfterFunc(opts.BaseContext, func() {
			r.mu.Lock()
			r.stopping = true
			r.mu.Unlock()
			r.interruptRuns()
		})
	}
	return r
}

// drainRecordTimeout bounds, after the runs were interrupted, the wait
// for them to keep their records (each write is bounded by
// recordTimeout).
const drainRecordTimeout = 15 * time.Second

// recordTimeout bounds each write of a run's records (history entry,
// audit record, Event) once the run ended, even interrupted.
const recordTimeout = 10 * time.Second

// Drain stops taking runs (Start and Deploy return ErrStopping) and
// waits for the runs under way to end, each with its records kept. When
// ctx ends first (the grace period), it interrupts them: a plan stops,
// an apply stops before its next write (never during one) and is
// recorded as interrupted with what it wrote, its lock released; Drain
// then waits up to drainRecordTimeout more for those records. It returns
// how many runs it interrupted, and an error when some had still not
// ended.
func (r *Runner) Drain(ctx context.Context) (int, error) {
	r.mu.Lock()
	r.stopping = true
	going := len(r.busy)
	r.mu.Unlock()
	done := make(chan struct{})
	go func() {
		r.going.Wait()
		close(done)
	}()
	select {
	case <-done:
		return 0, nil
	case <-ctx.Done():
	}
	r.log.Warn("grace period over: interrupting the runs under way before their next write", "runs", going)
	r.interruptRuns()
	select {
	case <-done:
		return going, nil
	case <-time.After(drainRecordTimeout):
		return going, fmt.Errorf("envrun: runs still going %s after they were interrupted", drainRecordTimeout)
	}
}

// Idle reports whether no run is under way.
func (r *Runner) Idle() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.busy) == 0
}

// Config returns the environments.
func (r *Runner) Config() *envconfig.Config { return r.cfg }

// Store returns the history store.
func (r *Runner) Store() *planstore.Store { return r.opts.Store }

// Run is one plan or apply.
type Run struct {
	ID, Env, Action, User string
	// Actor is who started the run, for its audit record.
	Actor   audit.Actor
	Started time.Time

	mu       sync.Mutex
	diffs    []ObjectDiff
	diffErr  error
	steps    []string
	changed  chan struct{}
	done     bool
	report   *deployplan.Report
	entry    planstore.Entry
	err      error
	refusal  string
	finished time.Time
	// override is the break-glass that let the run through a freeze.
	override *freeze.Override
}

// Snapshot is a consistent view of a run.
type Snapshot struct {
	Diffs    []ObjectDiff
	DiffErr  error
	Steps    []string
	Done     bool
	Report   *deployplan.Report
	Entry    planstore.Entry
	Err      error
	Refusal  string
	Finished time.Time
	// Changed is closed at the run's next change.
	Changed <-chan struct{}
}

// Snapshot returns the run's state now.
func (run *Run) Snapshot() Snapshot {
	run.mu.Lock()
	defer run.mu.Unlock()
	return Snapshot{Diffs: run.diffs, DiffErr: run.diffErr, Steps: append([]string(nil), run.steps...), Done: run.done, Report: run.report, Entry: run.entry,
		Err: run.err, Refusal: run.refusal, Finished: run.finished, Changed: run.changed}
}

func (run *Run) step(s string) {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.steps = append(run.steps, s)
	close(run.changed)
	run.changed = make(chan struct{})
}

func (run *Run) setDiffs(d []ObjectDiff, err error) {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.diffs, run.diffErr = d, err
}

func (run *Run) finish(rep *deployplan.Report, entry planstore.Entry, err error, release func()) {
	// The environment is free before anyone sees the run done, so a Plan
	// pressed right after cannot be refused as busy.
	release()
	run.mu.Lock()
	defer run.mu.Unlock()
	run.report, run.entry, run.err, run.done, run.finished = rep, entry, err, true, time.Now()
	var ref *deployplan.RefusalError
	if errors.As(err, &ref) {
		run.refusal = ref.Reason
	}
	close(run.changed)
	run.changed = make(chan struct{})
}

// Get returns a run by id.
func (r *Runner) Get(id string) (*Run, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	run, ok := r.runs[id]
	return run, ok
}

// Start begins a plan or an apply of env for user. An apply is checked
// first: a protected environment, a confirmation that does not name the
// environment, or a plan id that is not the environment's latest ready plan
// (LatestPlan) is refused at once, with nothing started. The apply then
// applies that plan only if the source has not moved since
// (deployplan.CheckReviewed). The run continues in the background with its
// own context, bounded by the apply timeout.
func (r *Runner) Start(envName, action, user, confirm, planID string) (*Run, error) {
	return r.StartAs(audit.Actor{Subject: user}, envName, action, user, confirm, planID)
}

// StartAs is Start with the actor its audit record names (user is the
// name the run's steps show).
func (r *Runner) StartAs(who audit.Actor, envName, action, user, confirm, planID string) (*Run, error) {
	return r.StartWith(StartRequest{Who: who, Env: envName, Action: action, User: user, Confirm: confirm, PlanID: planID})
}

// StartRequest is a plan or an apply from the console.
type StartRequest struct {
	// Who is the actor the apply's audit record names; User the name the
	// run's steps show.
	Who                                audit.Actor
	Env, Action, User, Confirm, PlanID string
	// BreakGlass asks to apply through a freeze (Options.Freezes): let
	// through only for a superadmin with a reason, and recorded.
	BreakGlass *freeze.BreakGlass
}

// StartWith is Start from a StartRequest. After the protection and the
// confirmation, and before the plan is looked up, an apply asks the
// freezes (Options.Freezes): a frozen environment refuses it (a
// *freeze.FrozenError, recorded as refused) unless the request breaks the
// glass.
func (r *Runner) StartWith(req StartRequest) (*Run, error) {
	start := time.Now()
	who, envName, action, user, confirm, planID := req.Who, req.Env, req.Action, req.User, req.Confirm, req.PlanID
	env, err := r.cfg.Env(envName)
	if err != nil {
		return nil, ErrUnknownEnv
	}
	var reviewed *deployplan.Reviewed
	var override *freeze.Override
	if action == ActionApply {
		// A frozen environment refuses any apply, whatever the plan.
		err := deployplan.CheckApplyRequest(env, r.applyRequest(env, confirm))
		if err == nil {
			override, err = r.checkFreeze(env, action, "", "", req.BreakGlass)
		}
		if err == nil {
			reviewed, err = r.reviewedPlan(envName, planID)
		}
		if err != nil {
			r.log.Info("apply", "user", user, "environment", envName, "plan", planID, "outcome", "refused", "reason", err.Error())
			if r.opts.Count != nil {
				r.opts.Count(ActionApply, "refused")
			}
			r.record(r.baseContext(), who, env, start, nil, err, nil, nil)
			return nil, err
		}
	}
	run, err := r.begin(envName, action, user, who)
	if errors.Is(err, ErrBusy) && action == ActionApply {
		r.record(r.baseContext(), who, env, start, nil, &deployplan.RefusalError{Reason: "a plan or apply of " + envName + " is already running (" + err.Error() + "); nothing was touched"}, nil, override)
	}
	if err != nil {
		return nil, err
	}
	run.override = override
	if override != nil {
		run.step("break-glass: " + override.Note())
	}
	r.background(run, r.opts.ApplyTimeout+5*time.Minute, func(ctx context.Context) { r.execute(ctx, env, run, confirm, reviewed) })
	return run, nil
}

// begin registers a new run of env, refused with ErrBusy while another
// run of env is going.
func (r *Runner) begin(envName, action, user string, who audit.Actor) (*Run, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping {
		return nil, ErrStopping
	}
	if id, ok := r.busy[envName]; ok {
		return nil, fmt.Errorf("%w (run %s)", ErrBusy, id)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	run := &Run{ID: envName + "-" + time.Now().UTC().Format("150405") + "-" + hex.EncodeToString(b), Env: envName, Action: action, User: user,
		Actor: who, Started: time.Now(), changed: make(chan struct{})}
	r.runs[run.ID] = run
	r.busy[envName] = run.ID
	r.going.Add(1)
	r.pruneLocked()
	return run, nil
}

// background runs f for run in its own goroutine, with a deadline of
// timeout; ctx is not cancelled by a shutdown (a write under way
// finishes), interrupt ends when the run must stop (runCtx). An
// interruption is told to the run as a step.
func (r *Runner) background(run *Run, timeout time.Duration, f func(ctx context.Context)) {
	go func() {
		defer r.going.Done()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		stop := context.AfterFunc(r.interrupt, func() { run.step("interrupted: this replica is shutting down; the run stops before its next write") })
		defer stop()
		f(ctx)
	}()
}

// readCtx is ctx, also cancelled when the runs are interrupted: for a
// run's reads (a plan), which an interruption cuts at once.
func (r *Runner) readCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	rctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(r.interrupt, cancel)
	return rctx, func() { stop(); cancel() }
}

// interruptedOr is err, or an *deployplan.InterruptedError when the runs
// were interrupted (the reads it cut failed because of it).
func (r *Runner) interruptedOr(err error) error {
	if err != nil && r.interrupt.Err() != nil {
		return &deployplan.InterruptedError{}
	}
	return err
}

// recordCtx bounds the writes of a run's records, which are made even
// when the run was interrupted.
func recordCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
}

func (r *Runner) applyRequest(env *envconfig.Environment, confirm string) deployplan.ApplyRequest {
	return deployplan.ApplyRequest{Env: env.Name, ConfirmEnv: confirm, ConfirmedNonProduction: !env.Protected}
}

// ErrNoCluster is the error of a run whose environment's cluster could not
// be resolved (the details are in the server log).
var ErrNoCluster = errors.New("envrun: the environment's cluster could not be resolved")

// cluster returns the rest config and the audit Events client of env's
// cluster.
func (r *Runner) cluster(env *envconfig.Environment) (*rest.Config, typedcorev1.EventsGetter, error) {
	if r.opts.ClusterConfig == nil {
		return r.opts.RestConfig, r.opts.Events, nil
	}
	rc, err := r.opts.ClusterConfig(env)
	if err == nil && rc == nil {
		err = errors.New("no rest config")
	}
	if err != nil {
		return nil, nil, err
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, nil, err
	}
	return rc, cs.CoreV1(), nil
}

func (r *Runner) execute(ctx context.Context, env *envconfig.Environment, run *Run, confirm string, reviewed *deployplan.Reviewed) {
	// The records are kept even when the run was interrupted.
	rec, cancelRec := recordCtx(ctx)
	defer cancelRec()
	rc, events, cerr := r.cluster(env)
	if cerr != nil {
		r.log.Error("environment's cluster not resolved: nothing planned or applied", "environment", env.Name, "run", run.ID, "err", cerr)
		run.step("the cluster of environment " + env.Name + " could not be resolved: see the server log")
		r.fail(rec, env, run, fmt.Errorf("%w (environment %s): %v", ErrNoCluster, env.Name, cerr))
		return
	}
	opts := deployplan.Options{
		RestConfig: rc, ConfigPath: r.cfg.Path,
		ReportPath: filepath.Join(r.opts.ReportsDir, env.Name, run.ID, "deploy-report.json"),
		Progress:   run.step,
	}
	var rep *deployplan.Report
	var err error
	if run.Action == ActionApply {
		run.step("apply of plan " + reviewed.PlanID + " requested by " + run.User)
		r.audit(ctx, events, env, "ApplyStarted", fmt.Sprintf("%s started an apply of environment %s (plan %s)", run.User, env.Name, reviewed.PlanID))
		rep, err = deployplan.Apply(ctx, env, deployplan.ApplyOptions{Options: opts, Request: r.applyRequest(env, confirm), ReportPath: opts.ReportPath,
			Timeout: r.opts.ApplyTimeout, Holder: "deploy-web console (" + run.User + ")", Reviewed: reviewed, Interrupt: r.interrupt,
			BeforeWrite: r.opts.BeforeWrite})
	} else {
		pctx, cancel := r.readCtx(ctx)
		rep, err = deployplan.Plan(pctx, env, opts)
		cancel()
		err = r.interruptedOr(err)
	}
	entry, outcome, rendered := r.keep(rec, rc, env, run, run.Action, run.Started, rep, err, "")
	r.log.Info(run.Action, "user", run.User, "environment", env.Name, "run", run.ID, "outcome", outcome, "err", errString(err))
	r.pruneReports(env)
	if r.opts.Count != nil {
		r.opts.Count(run.Action, outcome)
	}
	if run.Action == ActionApply {
		r.audit(rec, events, env, "ApplyFinished", fmt.Sprintf("%s's apply of environment %s ended: %s", run.User, env.Name, outcome))
		r.record(rec, run.Actor, env, run.Started, rep, err, rendered, run.override)
	}
	r.refreshIndex(rec, env)
	run.finish(rep, entry, err, func() {
		r.mu.Lock()
		delete(r.busy, env.Name)
		r.mu.Unlock()
	})
}

// pruneReports bounds the run folders of env: each run leaves one (report,
// capture), and the environment keeps the newest deployplan.ReportsKeep,
// none older than ReportsMaxAge, and the latest capture. Run folders are
// named by their id, env-<time>-<hex>.
func (r *Runner) pruneReports(env *envconfig.Environment) {
	envDir := filepath.Join(r.opts.ReportsDir, env.Name)
	isRun := func(name string) bool { return strings.HasPrefix(name, env.Name+"-") }
	if removed, perr := deployplan.PruneReports(envDir, isRun, time.Now()); perr != nil {
		r.log.Warn("old reports not pruned", "environment", env.Name, "err", perr)
	} else if len(removed) > 0 {
		r.log.Info("old reports pruned", "environment", env.Name, "removed", len(removed))
	}
}

// keep keeps a plan's or an apply's outcome: the object diffs of its
// report (shown by the run), and an entry in the history with the report,
// or, without a report, the failure with a summary safe to show; started
// is the entry's time (a deploy run's apply starts after its plan). trigger,
// when set, starts the summary (a deploy run's "rollback: ..."). It
// returns the saved entry, the outcome for the log and the metrics, and
// the rendered objects in the apply's scope (for the audit record).
func (r *Runner) keep(ctx context.Context, rc *rest.Config, env *envconfig.Environment, run *Run, action string, started time.Time, rep *deployplan.Report, err error, trigger string) (planstore.Entry, string, []*unstructured.Unstructured) {
	entry := planstore.Entry{Environment: env.Name, Action: action, User: run.User, Time: started}
	outcome := "error"
	var files map[string][]byte
	var rendered []*unstructured.Unstructured
	var interrupted *deployplan.InterruptedError
	switch {
	case rep != nil:
		entry.Conclusion, entry.Summary = rep.Status(), rep.Summary()
		if errors.As(err, &interrupted) {
			entry.Conclusion, outcome = ConclusionInterrupted, ConclusionInterrupted
		}
		entry.Commit = rep.DeployApply.Source.Commit
		outcome = rep.Status()
		run.step("diffing the rendered objects against the cluster")
		diffs, inScope, derr := r.objectDiffs(ctx, rc, env, rep)
		rendered = inScope
		if derr != nil {
			r.log.Warn("object diffs not computed", "environment", env.Name, "err", derr)
		}
		run.setDiffs(diffs, derr)
		files = map[string][]byte{}
		if js, jerr := rep.JSON(); jerr == nil {
			files["report.json"] = js
		}
		if dj, jerr := json.Marshal(diffs); jerr == nil && derr == nil {
			files["diffs.json"] = dj
		}
	case err != nil:
		// No report: keep the failure in the history all the same, with a
		// summary safe to show (the whole error goes to the log).
		entry.Conclusion, entry.Summary = "error", "the "+action+" could not run (run "+run.ID+"): see the server log"
		var ref *deployplan.RefusalError
		var lost *deployplan.LockLostError
		switch {
		case errors.As(err, &ref):
			entry.Conclusion, entry.Summary = "refused", ref.Reason
		case errors.As(err, &lost):
			// Holder ids only: safe to show.
			entry.Conclusion, entry.Summary = deployplan.StatusFailed, lost.Error()
		case errors.As(err, &interrupted):
			entry.Conclusion, entry.Summary = ConclusionInterrupted, "the "+action+" was interrupted (this replica was shutting down) before it wrote anything (run "+run.ID+")"
			outcome = ConclusionInterrupted
		}
	default:
		return entry, outcome, nil
	}
	if trigger != "" {
		entry.Summary = trigger + ": " + entry.Summary
	}
	if r.opts.Store != nil {
		if saved, serr := r.opts.Store.Save(ctx, entry, files); serr != nil {
			r.log.Error("plan history not saved", "environment", env.Name, "err", serr)
		} else {
			entry = saved
		}
	}
	var ref *deployplan.RefusalError
	if errors.As(err, &ref) {
		outcome = "refused"
	}
	return entry, outcome, rendered
}

// refreshIndex re-reads env's desired state after a run.
func (r *Runner) refreshIndex(ctx context.Context, env *envconfig.Environment) {
	if r.opts.Index == nil {
		return
	}
	if err := r.opts.Index.Refresh(ctx, env.Name); err != nil {
		r.log.Warn("desired-state index not refreshed", "environment", env.Name, "err", err)
	}
}

// fail ends a run that could not start on its cluster: the history keeps
// the failure (with a summary safe to show), the environment is freed.
func (r *Runner) fail(ctx context.Context, env *envconfig.Environment, run *Run, err error) {
	entry := planstore.Entry{Environment: env.Name, Action: run.Action, User: run.User, Time: run.Started,
		Conclusion: "error", Summary: "the " + run.Action + " did not run (run " + run.ID + "): the cluster of environment " + env.Name + " could not be resolved; see the server log"}
	if r.opts.Store != nil {
		if saved, serr := r.opts.Store.Save(ctx, entry, nil); serr != nil {
			r.log.Error("plan history not saved", "environment", env.Name, "err", serr)
		} else {
			entry = saved
		}
	}
	if r.opts.Count != nil {
		r.opts.Count(run.Action, "error")
	}
	if run.Action == ActionApply {
		r.record(ctx, run.Actor, env, run.Started, nil, err, nil, run.override)
	}
	run.finish(nil, entry, err, func() {
		r.mu.Lock()
		delete(r.busy, env.Name)
		r.mu.Unlock()
	})
}

// record hands an apply's audit record to Options.Record, with the
// break-glass that let it through a freeze, if one did.
func (r *Runner) record(ctx context.Context, who audit.Actor, env *envconfig.Environment, start time.Time, rep *deployplan.Report, err error, applied []*unstructured.Unstructured, o *freeze.Override) {
	if r.opts.Record == nil {
		return
	}
	rec := WithBreakGlass(ApplyRecord(audit.VerbApply, env, start, rep, err, applied), o)
	rec.Actor = who
	r.opts.Record(ctx, rec)
}

func (r *Runner) baseContext() context.Context {
	if r.opts.BaseContext == nil {
		return context.Background()
	}
	return r.opts.BaseContext
}

// audit records an Event on the environment's Namespace object.
func (r *Runner) audit(ctx context.Context, events typedcorev1.EventsGetter, env *envconfig.Environment, reason, message string) {
	if events == nil {
		return
	}
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "deploy-web-apply.", Namespace: env.Namespace},
		// The apiserver requires involvedObject.namespace to be the
		// Event's own, even for the (cluster-scoped) Namespace object.
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: env.Namespace, Namespace: env.Namespace},
		Reason:         reason, Message: message, Type: corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: "deploy-web"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
		ReportingController: "hanzo.ai/deploy-web", ReportingInstance: "deploy-web",
	}
	if _, err := events.Events(env.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		r.log.Error("audit event not recorded", "environment", env.Name, "reason", reason, "err", err)
	}
}

// pruneLocked keeps the 50 newest runs in memory (their reports are in the
// store); r.mu must be held.
func (r *Runner) pruneLocked() {
	if len(r.runs) <= 50 {
		return
	}
	var oldest *Run
	for _, run := range r.runs {
		if r.busy[run.Env] == run.ID {
			continue
		}
		if oldest == nil || run.Started.Before(oldest.Started) {
			oldest = run
		}
	}
	if oldest != nil {
		delete(r.runs, oldest.ID)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
