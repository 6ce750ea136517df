package deployplan

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/objrules"
)

// ApplyOptions tune an apply.
type ApplyOptions struct {
	Options
	// Request carries the confirmations and any forbidden flag.
	Request ApplyRequest
	// ReportPath is where the report goes; its folder also receives the
	// pre-apply capture. "" means DefaultReportPath(env).
	ReportPath string
	// Timeout bounds each wait for workload health, between two waves
	// and after the last (default 5 minutes).
	Timeout time.Duration
	// LockDuration is the Lease duration (default DefaultLockDuration).
	LockDuration time.Duration
	// Holder names who applies (default DefaultHolder()); the lock's holder
	// id is this name plus a random suffix unique to the apply.
	Holder string
	// Reviewed, when set, is the plan the user reviewed: the apply renders
	// the source again and is refused unless the source commit and the
	// rendered objects' digest are the same.
	Reviewed *Reviewed
	// Interrupt, when set, stops the apply when it ends (its process is
	// stopping): before the next write, never during one (ctx still
	// bounds every write), or while it waits for health; the reads before
	// the lock stop at once. The apply returns an *InterruptedError, with
	// the report of what was written once anything was.
	Interrupt context.Context
	// BeforeWrite, when set, is called just before each write to the
	// cluster (a Job deletion or an object's apply), before the lock is
	// checked; what names the write. Tests use it to stall an apply. The
	// writes of one kind group of a wave call it concurrently.
	BeforeWrite func(ctx context.Context, what string)
	// Prune deletes, after every object applied, the plan's orphans
	// (objects applied by deploy-web that the render no longer holds),
	// each only if it still has the uid the plan saw and is still applied
	// by deploy-web. They are captured first, like every object touched.
	Prune bool
	// PruneMany lets Prune delete more than MaxPruneObjects orphans, or
	// more than half of the environment's objects (the rendered ones plus
	// the orphans it may delete); without it such a prune is refused.
	PruneMany bool

	// mode is the report's mode when it is not "apply" (a restore).
	mode string
}

// setDefaults fills what an apply (or a restore) left unset: a 5-minute
// timeout, the default lock duration, and a holder unique to this run.
func (opts *ApplyOptions) setDefaults() {
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Minute
	}
	if opts.LockDuration <= 0 {
		opts.LockDuration = DefaultLockDuration
	}
	if opts.Holder == "" {
		opts.Holder = DefaultHolder()
	}
	opts.Holder = uniqueHolder(opts.Holder)
}

// Apply checks the request, plans, and, only if the plan is ready, takes
// the environment's lock, captures the pre-apply state of every object it
// will touch, writes a report that says "failed" until it finishes,
// applies everything server-side (field manager deploy-web, never forced)
// in waves (applyWaves: kind order, then WaveAnnotation; each wave once
// the workloads of the one before are healthy; an allowlisted suspended
// template Job whose image changed is replaced in its turn), waits for
// workload health and runs the health checks. The report ends
// applied or failed and is written to ReportPath.
//
// A refusal (protected environment, forbidden flag, missing confirmation,
// a Reviewed plan whose source moved, blocked plan, lock held by another
// apply) is a *RefusalError and nothing was touched; for a blocked plan the
// plan's report is returned with it.
//
// The lock is held under a holder id unique to this apply and renewed,
// conditionally on its resourceVersion, before every write: an apply whose
// lock was taken over (it stalled past the lease) returns a
// *LockLostError and no report, having written nothing more.
func Apply(ctx context.Context, env *envconfig.Environment, opts ApplyOptions) (*Report, error) {
	if err := CheckApplyRequest(env, opts.Request); err != nil {
		return nil, err
	}
	if opts.ReportPath == "" {
		opts.ReportPath = DefaultReportPath(env.Name)
	}
	opts.Options.ReportPath = opts.ReportPath
	opts.setDefaults()
	opts.progress("render %s", sourceLabel(env))
	if opts.Prune && opts.Only != nil {
		return nil, &RefusalError{Reason: "prune is refused with an apply of " + opts.Only.Name + " only: the objects it leaves out are not orphans; nothing was touched"}
	}
	if err := checkReviewedScope(opts.Reviewed, opts.Only); err != nil {
		return nil, err
	}
	rctx, cancel := withInterrupt(ctx, opts)
	defer cancel()
	r, err := renderFor(rctx, env, opts.Options)
	if err != nil {
		return nil, interruptedOr(opts, err)
	}
	if r, err = opts.Only.only(r); err != nil {
		return nil, err
	}
	if err := CheckReviewed(opts.Reviewed, r); err != nil {
		return nil, err
	}
	ps, err := planRendered(rctx, env, opts.Options, r)
	if err != nil {
		return nil, interruptedOr(opts, err)
	}
	rep := ps.report
	if err := BlockedRefusal(rep); err != nil {
		return rep, err
	}
	if opts.Prune && !opts.PruneMany {
		if err := checkPruneCount(rep.DeployApply.Orphans, len(ps.objs)); err != nil {
			return rep, err
		}
	}
	return ps.lockAndApply(ctx, env, opts)
}

// BlockedRefusal is the refusal of applying a plan that is not ready,
// naming its blockers; nil for a ready plan.
func BlockedRefusal(rep *Report) error {
	if rep.Status() == StatusReady {
		return nil
	}
	var ids []string
	for _, b := range rep.DeployApply.RemainingBlockers {
		ids = append(ids, b.ID)
	}
	return &RefusalError{Reason: fmt.Sprintf("the plan is blocked by %d blocker(s) (%s); nothing was touched", len(ids), strings.Join(ids, ", "))}
}

// lockAndApply takes the environment's lock, keeps it renewed and runs
// the apply of a ready plan under it (Apply, Restore).
func (ps *planState) lockAndApply(ctx context.Context, env *envconfig.Environment, opts ApplyOptions) (*Report, error) {
	if opts.interrupted() {
		return nil, &InterruptedError{}
	}
	opts.progress("take the lock (Lease %s/%s)", env.Namespace, LockName)
	l, err := acquireLock(ctx, ps.cl.kube, env.Namespace, opts.Holder, opts.LockDuration, opts.now())
	if err != nil {
		var held *LockHeldError
		if errors.As(err, &held) {
			return nil, &RefusalError{Reason: held.Error() + "; nothing was touched"}
		}
		return nil, err
	}
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	stopRenew := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(opts.LockDuration / 4)
		defer t.Stop()
		for {
			select {
			case <-stopRenew:
				return
			case <-actx.Done():
				return
			case <-t.C:
				err := l.renew(actx, opts.now())
				var lost *LockLostError
				if errors.As(err, &lost) {
					cancel(lost) // every later step sees the loss and stops
					return
				}
			}
		}
	}()
	defer func() {
		close(stopRenew)
		wg.Wait()
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer rcancel()
		if err := l.release(rctx); err != nil {
			opts.progress("warning: %v", err)
		}
	}()
	ps.lock = l
	rep, err := ps.apply(actx, env, opts)
	if err == nil && ps.interrupted {
		_, written := ps.interruptedSummary("")
		return rep, &InterruptedError{Written: written}
	}
	return rep, err
}

// interruptedOr is err, or an *InterruptedError when opts.Interrupt
// ended (the reads it cut failed because of it).
func interruptedOr(opts ApplyOptions, err error) error {
	if opts.interrupted() {
		return &InterruptedError{}
	}
	return err
}

// guard is called before each write to the cluster: the test seam, then a
// renew of the lock conditional on the resourceVersion this apply last
// wrote. An apply that cannot prove it still holds the lock does not write.
func (ps *planState) guard(ctx context.Context, opts ApplyOptions, what string) error {
	if opts.BeforeWrite != nil {
		opts.BeforeWrite(ctx, what)
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if opts.interrupted() {
		return errInterrupted
	}
	return ps.lock.renewFresh(ctx, opts.now)
}

// apply runs under the lock.
func (ps *planState) apply(ctx context.Context, env *envconfig.Environment, opts ApplyOptions) (*Report, error) {
	d := &ps.report.DeployApply
	d.Mode = "apply"
	if opts.mode != "" {
		d.Mode = opts.mode
	}
	start := opts.now().UTC()
	d.GeneratedAt = start
	d.ManualCommands = commandsAfterWrite(env, opts.Options, opts.ReportPath)
	cl := ps.cl

	// Re-read the live state under the lock: it is what the capture keeps
	// and what the Job decisions must hold for.
	opts.progress("capture the pre-apply state of %d object(s)", len(ps.objs))
	live := map[string]*unstructured.Unstructured{}
	lives, errs := cl.readAll(ctx, ps.objs)
	for i, o := range ps.objs {
		l, err := lives[i], errs[i]
		if err != nil {
			return ps.fail(opts, "nothing was changed: reading %s/%s failed: %v", o.GetKind(), o.GetName(), objErr(o, err))
		}
		if l != nil {
			live[key(o)] = l
		}
		if uid, ok := ps.uids[key(o)]; ok && l != nil && string(l.GetUID()) != uid {
			return ps.fail(opts, "nothing was changed: %s/%s is another object (uid %s) than the one captured (uid %s) since the plan; a restore never writes onto an object it did not capture", o.GetKind(), o.GetName(), l.GetUID(), uid)
		}
		if j, ok := ps.jobs[key(o)]; ok {
			again := JobDecision(o, l, env.Allowlisted(o.GetName()), j.Result == JobPlanned)
			if again.Result != j.Result || again.OldUID != j.OldUID {
				return ps.fail(opts, "nothing was changed: Job %s changed since the plan (%s, now %s); plan again", o.GetName(), j.Result, again.Result)
			}
		}
	}
	captured := ps.objs
	if opts.Prune {
		for _, orphan := range d.Orphans {
			if !orphan.prunable {
				continue // never deleted: not captured
			}
			o := orphanObject(orphan, env.Namespace)
			l, err := cl.get(ctx, o)
			if err != nil {
				return ps.fail(opts, "nothing was changed: reading orphan %s/%s failed: %v", o.GetKind(), o.GetName(), shortErr(err))
			}
			if l != nil {
				live[key(o)] = l
				captured = append(captured[:len(captured):len(captured)], o)
			}
		}
	}
	capDir, err := newCaptureDir(filepath.Join(filepath.Dir(opts.ReportPath), capturePrefix+start.Format("20060102T150405Z")))
	if err != nil {
		return ps.fail(opts, "nothing was changed: %v", err)
	}
	digest, err := writeCapture(capDir, captured, live, captureInfo{Env: env, ConfigPath: opts.ConfigPath, Kubeconfig: opts.Kubeconfig, Time: start, Holder: opts.Holder})
	if err != nil {
		return ps.fail(opts, "nothing was changed: %v", err)
	}
	// The captures beside this one beyond ReportsKeep or ReportsMaxAge go;
	// this one, the newest, stays.
	capParent := filepath.Dir(capDir)
	if _, err := PruneReports(capParent, func(name string) bool { return IsCapture(filepath.Join(capParent, name)) }, start); err != nil {
		d.Warnings = append(d.Warnings, err.Error())
	}
	d.RollbackHint = rollbackHint(env, d, capDir, opts.Options)
	d.RollbackHint.PreApplyCaptureDigest = digest
	d.Conclusion = Conclusion{Status: StatusFailed, Summary: fmt.Sprintf(
		"apply started at %s by %s and has not finished: if this is the final report, it was interrupted; the pre-apply state is in %s",
		start.Format(time.RFC3339), opts.Holder, capDir)}
	if err := ps.report.WriteFile(opts.ReportPath); err != nil {
		return nil, err // nothing changed yet
	}
	// The capture's digest goes to the cluster before any other write: a
	// restore accepts only a capture an apply of this environment recorded.
	if err := ps.guard(ctx, opts, "record the capture "+digest); err != nil {
		return ps.stopped(opts, err)
	}
	absCap, _ := filepath.Abs(capDir)
	if err := recordCapture(ctx, cl.kube, env.Namespace, env.Name, captureRecord{Digest: digest, Time: start.Format(time.RFC3339), Holder: opts.Holder, Capture: absCap}); err != nil {
		return ps.fail(opts, "nothing was changed: %v", err)
	}

	byKey := map[string]*ObjectPlan{}
	for i := range d.Objects {
		o := &d.Objects[i]
		byKey[o.groupKey()] = o
	}
	jobIdx := map[string]int{}
	for i, j := range d.TemplateJobReplacements {
		jobIdx[j.Job] = i
	}

	// Write wave by wave (apply_waves.go); stop at the first failure.
	opts.progress("server-side apply of %d object(s) as %s in %d wave(s)", len(ps.objs), FieldManager, len(wavesOf(ps.objs, ps.deps)))
	failure, err := ps.applyWaves(ctx, opts, applyTargets{live: live, byKey: byKey, jobIdx: jobIdx})
	if err != nil {
		return ps.stopped(opts, err)
	}
	if failure != "" {
		return ps.finish(opts, failure)
	}
	if opts.Prune {
		if msg, err := ps.prune(ctx, env, opts); err != nil {
			return ps.stopped(opts, err)
		} else if msg != "" {
			return ps.finish(opts, msg)
		}
	}

	// Wait for health.
	var waitFor []*unstructured.Unstructured
	for _, o := range ps.objs {
		if waited(o) {
			waitFor = append(waitFor, o)
		}
	}
	opts.progress("waiting for workload health of %d workload(s), up to %s", len(waitFor), opts.Timeout)
	if msg := ps.waitHealthy(ctx, opts, waitFor, byKey); msg != "" {
		if last := len(d.Waves) - 1; last >= 0 && !ps.interrupted {
			d.Waves[last].Result, d.Waves[last].Message = WaveUnhealthy, msg
		}
		return ps.finish(opts, msg)
	}
	if len(env.HealthChecks) > 0 {
		opts.progress("run the health checks")
		d.HealthChecks = runHealthChecks(ctx, env.HealthChecks, opts.HTTPClient, env.Limits.HealthCheckTimeoutOrDefault())
		for _, h := range d.HealthChecks {
			if h.Required && !h.OK {
				return ps.finish(opts, fmt.Sprintf("required health check %s failed after the apply: %s", h.Name, h.Message))
			}
		}
	}
	return ps.finish(opts, "")
}

// maxCaptureDirs bounds the folders newCaptureDir tries for one second.
const maxCaptureDirs = 100

// newCaptureDir creates the capture folder base, or base-2, base-3, ...
// when it exists: two applies within the same second (the name's
// resolution) must not write one capture over the other, which a restore
// then refuses (capture-duplicate).
func newCaptureDir(base string) (string, error) {
	if err := PrepareReportsDir(filepath.Dir(base)); err != nil {
		return "", err
	}
	for i := 1; i <= maxCaptureDirs; i++ {
		dir := base
		if i > 1 {
			dir = fmt.Sprintf("%s-%d", base, i)
		}
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("deployplan: capture: %w", err)
		}
	}
	return "", fmt.Errorf("deployplan: capture: %s and %d more folders of the same second exist; remove old captures", base, maxCaptureDirs-1)
}

func (o *ObjectPlan) groupKey() string {
	g := o.APIVersion
	if i := strings.Index(g, "/"); i >= 0 {
		g = g[:i]
	} else {
		g = ""
	}
	return g + "/" + o.Kind + "/" + o.Namespace + "/" + o.Name
}

func deleteJob(ctx context.Context, cl *clients, o *unstructured.Unstructured, uid types.UID) error {
	ri, _, err := cl.resource(o)
	if err != nil {
		return err
	}
	bg := metav1.DeletePropagationBackground
	err = ri.Delete(ctx, o.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &bg})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for {
		cur, err := ri.Get(ctx, o.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && cur.GetUID() != uid) {
			return nil
		}
		if err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("deployplan: job %s still exists a minute after its deletion", o.GetName())
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitHealthy polls the workloads until each is Healthy or Suspended, or
// the timeout passes; it returns "" on success, else what is unhealthy.
func (ps *planState) waitHealthy(ctx context.Context, opts ApplyOptions, objs []*unstructured.Unstructured, byKey map[string]*ObjectPlan) string {
	msg, _ := ps.waitSettled(ctx, opts, objs, byKey)
	return msg
}

// waitSettled is waitHealthy that also returns the objects not settled
// when it gave up.
func (ps *planState) waitSettled(ctx context.Context, opts ApplyOptions, objs []*unstructured.Unstructured, byKey map[string]*ObjectPlan) (string, []*unstructured.Unstructured) {
	timeout := opts.Timeout
	deadline := time.Now().Add(timeout)
	for {
		healths := make([]objrules.Health, len(objs))
		lives, errs := ps.cl.readAll(ctx, objs)
		for i := range objs {
			switch {
			case errs[i] != nil:
				healths[i] = objrules.Health{Status: objrules.HealthUnknown, Message: shortErr(errs[i])}
			case lives[i] == nil:
				healths[i] = objrules.Health{Status: objrules.HealthMissing, Message: "not found"}
			default:
				healths[i], _ = objrules.HealthOf(lives[i])
			}
		}
		var pending []string
		var left []*unstructured.Unstructured
		for i, o := range objs {
			h := healths[i]
			if op := byKey[key(o)]; op != nil { // nil: an App this apply does not write, waited for
				op.Health = string(h.Status)
			}
			if !Settled(h) {
				msg := fmt.Sprintf("%s/%s is %s", o.GetKind(), o.GetName(), h.Status)
				if h.Message != "" {
					msg += " (" + h.Message + ")"
				}
				pending, left = append(pending, msg), append(left, o)
			}
		}
		if len(pending) == 0 {
			return "", nil
		}
		if time.Now().After(deadline) {
			return "not healthy after " + timeout.String() + ": " + strings.Join(pending, "; "), left
		}
		select {
		case <-ctx.Done():
			return "interrupted while waiting for health (" + context.Cause(ctx).Error() + "): " + strings.Join(pending, "; "), left
		case <-opts.interruptDone():
			ps.interrupted = true
			summary, _ := ps.interruptedSummary("while waiting for health")
			return summary + "; not yet healthy: " + strings.Join(pending, "; "), left
		case <-time.After(time.Second):
		}
	}
}

// fail ends an apply that changed nothing.
func (ps *planState) fail(opts ApplyOptions, format string, a ...any) (*Report, error) {
	return ps.finish(opts, fmt.Sprintf(format, a...))
}

// stopped ends an apply whose guard refused the next write. A lost lock
// is returned as it is and nothing more is written, the report included
// (the apply that holds the lock now may write the same file); any other
// reason (the lock could not be renewed) ends the apply failed.
func (ps *planState) stopped(opts ApplyOptions, err error) (*Report, error) {
	var lost *LockLostError
	if errors.As(err, &lost) {
		opts.progress("stopped: %v", lost)
		return nil, lost
	}
	if errors.Is(err, errInterrupted) {
		ps.interrupted = true
		summary, _ := ps.interruptedSummary("before the next write")
		opts.progress("%s", summary)
		return ps.finish(opts, summary)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ps.finish(opts, fmt.Sprintf("interrupted before the next write (%v); the objects already applied are in the report", err))
	}
	return ps.finish(opts, fmt.Sprintf("stopped before the next write: the lock could not be renewed, so this apply cannot prove it still holds it (%v); the objects already applied are in the report", err))
}

// finish sets the conclusion (applied when failure is empty) and writes the
// report; an apply that lost its lock writes nothing (see stopped).
func (ps *planState) finish(opts ApplyOptions, failure string) (*Report, error) {
	if ps.lock != nil {
		if lost := ps.lock.lostErr(); lost != nil {
			return ps.stopped(opts, lost)
		}
	}
	d := &ps.report.DeployApply
	d.GeneratedAt = opts.now().UTC() // the apply's own time, not its plan's
	if failure == "" {
		counts := map[string]int{}
		for _, o := range d.Objects {
			counts[o.Result]++
		}
		replaced := 0
		for _, j := range d.TemplateJobReplacements {
			if j.Result == JobReplaced {
				replaced++
			}
		}
		d.Conclusion = Conclusion{Status: StatusApplied, Summary: fmt.Sprintf("applied: %d created, %d configured, %d unchanged, %d template Job(s) replaced; workloads healthy",
			counts["created"], counts["configured"], counts["unchanged"], replaced)}
		pruned := 0
		for _, o := range d.Orphans {
			if o.Result == OrphanDeleted {
				pruned++
			}
		}
		if pruned > 0 {
			d.Conclusion.Summary += fmt.Sprintf("; %d orphan(s) pruned", pruned)
		}
	} else {
		summary := "apply failed: " + failure
		if ps.interrupted {
			summary = "apply " + failure // "apply interrupted ..."
		}
		d.Conclusion = Conclusion{Status: StatusFailed, Summary: summary}
	}
	d.normalize()
	if err := ps.report.WriteFile(opts.ReportPath); err != nil {
		return ps.report, err
	}
	return ps.report, nil
}
