package envrun

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// Triggers of a Deploy: what asked for it.
const (
	TriggerRollback = "rollback"
	TriggerSync     = "sync"
	TriggerAutoSync = "auto-sync"
	TriggerSelfHeal = "self-heal"
)

// DeployRequest is a Deploy: who and what asked for it, and what to apply.
type DeployRequest struct {
	// User is the actor, as audit records name them ("auto-sync" for the
	// automatic triggers).
	User string
	// Trigger is one of the Trigger constants.
	Trigger string
	// Only, when set, is the name of an App: the plan and the apply cover
	// that App and the objects the render labels as its own
	// (deployplan.AppObjects), nothing else; orphans are not touched.
	Only string
	// OnlyGroup and OnlyKind name the App resource of Only (default
	// appcr's hanzo.ai App).
	OnlyGroup, OnlyKind string
	// Commit, when set, is the commit the trigger is about (a write-back's
	// commit): the run says when the branch head it plans is another one.
	Commit string
	// Actor is who the apply's audit record names (default: Subject
	// User).
	Actor audit.Actor
	// Force, with TriggerSelfHeal only, names the drifted objects
	// (deployplan.ObjectRef) whose plan and apply take over the fields
	// other managers set (deployplan.ForceObjects): what puts them back.
	// Every other object, and every other trigger, is never forced.
	Force []string
	// BreakGlass asks to run through a freeze (Options.Freezes): let
	// through only for a superadmin with a reason, and recorded.
	BreakGlass *freeze.BreakGlass
}

// ErrBadTrigger is a DeployRequest whose trigger is not one of the
// Trigger constants.
var ErrBadTrigger = errors.New("envrun: unknown deploy trigger")

// Deploy starts one run that plans the environment at its source's head
// and, when the plan is ready and the environment is not protected,
// applies exactly that plan (deployplan.ReviewedPlan over the plan's own
// report: the apply still refuses if the source moved in between),
// through the guarded engine: the lock, the gates, the capture, the
// report, the history entries (a plan entry, then an apply entry, their
// summaries starting with the trigger) and the audit Events. A plan that
// is not ready ends the run refused with its blockers; nothing is applied.
// A protected environment is planned only. The run's Action is
// ActionApply, or ActionPlan for a protected environment.
//
// A run that would apply first asks the freezes (Options.Freezes, as the
// trigger's action: rollback, sync, or auto-sync for auto-sync and
// self-heal; the target is the environment, and the App of Only): a frozen
// target refuses it with a *freeze.FrozenError before anything starts,
// and the refusal is an audit record (refused) of its actor; a
// superadmin's BreakGlass lets it through, recorded with the apply.
func (r *Runner) Deploy(envName string, d DeployRequest) (*Run, error) {
	env, err := r.cfg.Env(envName)
	if err != nil {
		return nil, ErrUnknownEnv
	}
	switch d.Trigger {
	case TriggerRollback, TriggerSync, TriggerAutoSync, TriggerSelfHeal:
	default:
		return nil, fmt.Errorf("%w %q", ErrBadTrigger, d.Trigger)
	}
	action := ActionApply
	if env.Protected {
		action = ActionPlan
	}
	if d.Actor.Email == "" && d.Actor.Subject == "" {
		d.Actor = audit.Actor{Subject: d.User}
	}
	start := time.Now()
	override, err := r.checkFreeze(env, action, d.Trigger, d.Only, d.BreakGlass)
	if err != nil {
		r.log.Info(ActionApply, "user", d.User, "trigger", d.Trigger, "environment", envName, "outcome", "refused", "reason", err.Error())
		if r.opts.Count != nil {
			r.opts.Count(ActionApply, "refused")
		}
		r.record(r.baseContext(), d.Actor, env, start, nil, &deployplan.RefusalError{Reason: d.Trigger + ": " + freezeRefusal(err)}, nil, nil)
		return nil, err
	}
	run, err := r.begin(envName, action, d.User, d.Actor)
	if err != nil {
		return nil, err
	}
	run.override = override
	if override != nil {
		run.step("break-glass: " + override.Note())
	}
	// A plan, then an apply: the apply's bound and one more plan's.
	r.background(run, r.opts.ApplyTimeout+10*time.Minute, func(ctx context.Context) { r.deploy(ctx, env, run, d) })
	return run, nil
}

// only is the object filter of a request ("" Only: none).
func (d DeployRequest) only() *deployplan.ObjectFilter {
	if d.Only == "" {
		return nil
	}
	group, kind := d.OnlyGroup, d.OnlyKind
	if kind == "" {
		group, kind = appcr.GroupVersion.Group, appcr.Kind.Kind
	}
	return deployplan.AppObjects(group, kind, d.Only)
}

func (r *Runner) deploy(ctx context.Context, env *envconfig.Environment, run *Run, d DeployRequest) {
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
	release := func() {
		r.mu.Lock()
		delete(r.busy, env.Name)
		r.mu.Unlock()
	}
	opts := deployplan.Options{RestConfig: rc, ConfigPath: r.cfg.Path, Progress: run.step, Only: d.only()}
	if d.Trigger == TriggerSelfHeal && len(d.Force) > 0 {
		opts.Force = deployplan.ForceObjects(d.Force)
		run.step("self-heal: " + opts.Force.Name + " (their drifted fields are taken over)")
	}
	what := "environment " + env.Name
	if opts.Only != nil {
		what += ": " + opts.Only.Name + " only"
	}
	run.step(d.Trigger + " requested by " + d.User + ": plan " + what + " at the head of its source")

	opts.ReportPath = filepath.Join(r.opts.ReportsDir, env.Name, run.ID, "plan", "deploy-report.json")
	pctx, cancelPlan := r.readCtx(ctx)
	rep, err := deployplan.Plan(pctx, env, opts)
	cancelPlan()
	err = r.interruptedOr(err)
	planEntry, outcome, _ := r.keep(rec, rc, env, run, ActionPlan, run.Started, rep, err, d.Trigger)
	r.log.Info(ActionPlan, "user", d.User, "trigger", d.Trigger, "environment", env.Name, "run", run.ID, "outcome", outcome, "err", errString(err))
	if r.opts.Count != nil {
		r.opts.Count(ActionPlan, outcome)
	}
	if err == nil && d.Commit != "" && rep.DeployApply.Source.Commit != d.Commit {
		run.step(fmt.Sprintf("the branch head is %s, not %s: the plan covers the head (which holds %s unless it was reverted)",
			textfmt.ShortSHA(rep.DeployApply.Source.Commit), textfmt.ShortSHA(d.Commit), textfmt.ShortSHA(d.Commit)))
	}
	if err == nil {
		err = deployplan.BlockedRefusal(rep)
	}
	if err != nil || env.Protected {
		if err == nil {
			run.step("environment " + env.Name + " is protected: planned only, nothing applied")
		}
		r.pruneReports(env)
		r.refreshIndex(rec, env)
		run.finish(rep, planEntry, err, release)
		return
	}

	reviewed, err := r.reviewedReport(rep, env.Name, planEntry.ID, run.ID)
	if err != nil {
		r.pruneReports(env)
		run.finish(rep, planEntry, err, release)
		return
	}
	run.step("apply of plan " + reviewed.PlanID + " (" + d.Trigger + ") requested by " + d.User)
	r.audit(ctx, events, env, "ApplyStarted", fmt.Sprintf("%s started an apply of %s (plan %s, %s)", d.User, what, reviewed.PlanID, d.Trigger))
	opts.ReportPath = filepath.Join(r.opts.ReportsDir, env.Name, run.ID, "deploy-report.json")
	applyStarted := time.Now()
	rep, err = deployplan.Apply(ctx, env, deployplan.ApplyOptions{Options: opts, Request: r.applyRequest(env, env.Name), ReportPath: opts.ReportPath,
		Timeout: r.opts.ApplyTimeout, Holder: "deploy-web console (" + d.User + ", " + d.Trigger + ")", Reviewed: reviewed,
		Interrupt: r.interrupt, BeforeWrite: r.opts.BeforeWrite})
	entry, outcome, rendered := r.keep(rec, rc, env, run, ActionApply, applyStarted, rep, err, d.Trigger)
	r.log.Info(ActionApply, "user", d.User, "trigger", d.Trigger, "environment", env.Name, "run", run.ID, "outcome", outcome, "err", errString(err))
	if r.opts.Count != nil {
		r.opts.Count(ActionApply, outcome)
	}
	r.audit(rec, events, env, "ApplyFinished", fmt.Sprintf("%s's apply of %s (%s) ended: %s", d.User, what, d.Trigger, outcome))
	r.record(rec, run.Actor, env, applyStarted, rep, err, rendered, run.override)
	r.pruneReports(env)
	r.refreshIndex(rec, env)
	run.finish(rep, entry, err, release)
}

// reviewedReport is what the apply of a deploy run must find unchanged:
// the plan's own report, read back as the history keeps it. id names the
// plan (its history entry, else the run).
func (r *Runner) reviewedReport(rep *deployplan.Report, env, id, runID string) (*deployplan.Reviewed, error) {
	if id == "" {
		id = runID + " (plan)"
	}
	js, err := rep.JSON()
	if err != nil {
		return nil, fmt.Errorf("envrun: plan %s: %w", id, err)
	}
	return deployplan.ReviewedPlan(js, env, id)
}
