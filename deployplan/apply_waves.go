package deployplan

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// applyTargets are what applyWaves records its results in.
type applyTargets struct {
	live   map[string]*unstructured.Unstructured // before the apply, by key
	byKey  map[string]*ObjectPlan                // the report's objects, by groupKey
	jobIdx map[string]int                        // the report's Job replacements, by Job name
}

// writeResult is one object's write in a step.
type writeResult struct {
	kept    bool // not written: it is as the plan saw it (unchangedSincePlan)
	got     *unstructured.Unstructured
	err     error // the write failed
	stopErr error // the guard refused it: not written
}

// applyWaves writes ps.objs wave by wave (waves.go): before a wave, the
// workloads of the wave before it must be healthy (waitHealthy, bounded
// by opts.Timeout and ctx), and before the first wave of Apps that
// depend on others, first the objects of those others (depends.go);
// inside a wave, kind group by kind group, the
// objects of a group written in parallel (at most writeParallelism), each
// after its guard; a planned template Job is deleted just before its
// group. It returns "" when every wave was written, else the failure
// (naming the wave and the object) with nothing of the later waves
// written; a non-nil error is a guard's refusal, for stopped.
func (ps *planState) applyWaves(ctx context.Context, opts ApplyOptions, t applyTargets) (string, error) {
	d := &ps.report.DeployApply
	ws := wavesOf(ps.objs, ps.deps)
	d.Waves = wavePlans(ws)
	notStarted := func(from int, why string) {
		for i := from; i < len(ws); i++ {
			d.Waves[i].Result, d.Waves[i].Message = WaveNotStarted, why
			for _, o := range ws[i].objects() {
				if op := t.byKey[key(o)]; op.Result == "" {
					op.Result, op.Message = "skipped", "not applied: "+why
				}
			}
		}
	}
	var gate []*unstructured.Unstructured // the workloads of the wave before
	for wi, w := range ws {
		wp := &d.Waves[wi]
		if len(w.waitObjs) > 0 {
			// The Apps of this stage wait for the Apps they depend on,
			// first: a failure names the App waited for.
			opts.progress("before %s: waiting for %s to be healthy, up to %s", waveName(*wp), affectedList(wp.WaitsFor, 10), opts.Timeout)
			if msg, pending := ps.waitSettled(ctx, opts, w.waitObjs, t.byKey); msg != "" {
				if ps.interrupted {
					return msg, nil
				}
				var apps []string
				for _, o := range pending {
					if a := appRefPrefix + ps.deps.appOf(o); !slices.Contains(apps, a) {
						apps = append(apps, a)
					}
				}
				why := fmt.Sprintf("%s waits for %s, which did not get healthy", affectedList(wp.Apps, 10), affectedList(apps, 10))
				notStarted(wi, why)
				return fmt.Sprintf("%s not started: %s: %s", waveName(*wp), why, msg), nil
			}
		}
		if len(gate) > 0 {
			prev := &d.Waves[wi-1]
			opts.progress("before %s: waiting for workload health of %d workload(s) of %s, up to %s", waveName(*wp), len(gate), waveName(*prev), opts.Timeout)
			if msg := ps.waitHealthy(ctx, opts, gate, t.byKey); msg != "" {
				if ps.interrupted {
					return msg, nil // interruptedSummary marks the rest skipped
				}
				prev.Result, prev.Message = WaveUnhealthy, msg
				why := waveName(*prev) + " did not get healthy"
				notStarted(wi, why)
				return fmt.Sprintf("%s not started: %s: %s", waveName(*wp), why, msg), nil
			}
		}
		opts.progress("%s: server-side apply of %d object(s) as %s", waveName(*wp), len(w.objects()), FieldManager)
		for _, step := range w.steps {
			if msg, err := ps.replaceJobs(ctx, opts, step, t); err != nil || msg != "" {
				if err == nil {
					wp.Result, wp.Message = WaveFailed, msg
					notStarted(wi+1, waveName(*wp)+" failed")
					ps.skipRest(waveName(*wp) + " failed")
				}
				return msg, err
			}
			results := make([]writeResult, len(step))
			forEachBounded(len(step), writeParallelism, func(i int) {
				o := step[i]
				if ps.unchangedSincePlan(o, t) {
					results[i].kept = true
					return
				}
				if err := ps.guard(ctx, opts, "apply "+o.GetKind()+"/"+o.GetName()); err != nil {
					results[i].stopErr = err
					return
				}
				results[i].got, results[i].err = ps.cl.apply(ctx, o, false)
			})
			failure, stopErr := ps.recordStep(step, results, t)
			if err := ps.report.WriteFile(opts.ReportPath); err != nil {
				opts.progress("warning: %v", err)
			}
			if stopErr != nil {
				return "", stopErr
			}
			if failure != "" {
				wp.Result, wp.Message = WaveFailed, failure
				notStarted(wi+1, waveName(*wp)+" failed")
				ps.skipRest(waveName(*wp) + " failed")
				return waveName(*wp) + ": " + failure, nil
			}
		}
		wp.Result = WaveApplied
		gate = nil
		for _, o := range w.objects() {
			if waited(o) {
				gate = append(gate, o)
			}
		}
	}
	return "", nil
}

// unchangedSincePlan says whether o needs no write: the plan's dry-run
// found its apply would change nothing, and the object read under the
// lock is still the one the dry-run ran against (same resourceVersion),
// so the apply would change nothing now either. A no-op apply then
// writes nothing at all (as kapp applies only changes).
func (ps *planState) unchangedSincePlan(o *unstructured.Unstructured, t applyTargets) bool {
	k := key(o)
	if op := t.byKey[k]; op == nil || op.Action != ActionUnchanged {
		return false
	}
	if j, ok := ps.jobs[k]; ok && j.Result == JobPlanned {
		return false
	}
	planned, now := ps.live[k], t.live[k]
	return planned != nil && now != nil && planned.GetResourceVersion() != "" && planned.GetResourceVersion() == now.GetResourceVersion()
}

// skipRest marks every object not yet written skipped.
func (ps *planState) skipRest(why string) {
	for i := range ps.report.DeployApply.Objects {
		if o := &ps.report.DeployApply.Objects[i]; o.Result == "" && o.Action != ActionBlocked {
			o.Result, o.Message = "skipped", "not applied: "+why
		}
	}
}

// replaceJobs deletes, one by one, the template Jobs of step the plan
// replaces (uid precondition, then waits until gone): their re-creation
// is the step's write. It returns the failure, or a guard's refusal.
func (ps *planState) replaceJobs(ctx context.Context, opts ApplyOptions, step []*unstructured.Unstructured, t applyTargets) (string, error) {
	d := &ps.report.DeployApply
	for _, o := range step {
		j, ok := ps.jobs[key(o)]
		if !ok || j.Result != JobPlanned {
			continue
		}
		if err := ps.guard(ctx, opts, "delete Job/"+j.Job); err != nil {
			return "", err
		}
		opts.progress("delete template Job %s (image %s -> %s)", j.Job, j.OldImage, j.NewImage)
		if err := deleteJob(ctx, ps.cl, o, types.UID(j.OldUID)); err != nil {
			d.TemplateJobReplacements[t.jobIdx[j.Job]].Result = JobFailed
			d.TemplateJobReplacements[t.jobIdx[j.Job]].Reason = "delete failed: " + objErr(o, err)
			t.byKey[key(o)].Result, t.byKey[key(o)].Message = "failed", objErr(o, err)
			return fmt.Sprintf("deleting template Job %s failed: %v", j.Job, objErr(o, err)), nil
		}
	}
	return "", nil
}

// recordStep puts a step's write results in the report; it returns the
// first failure ("applying Kind/name failed: ...") and the first guard
// refusal. An object its guard refused stays without a result.
func (ps *planState) recordStep(step []*unstructured.Unstructured, results []writeResult, t applyTargets) (string, error) {
	d := &ps.report.DeployApply
	var failure string
	var stopErr error
	for i, o := range step {
		r := results[i]
		op := t.byKey[key(o)]
		j, isJob := ps.jobs[key(o)]
		switch {
		case r.kept:
			op.Result = "unchanged"
		case r.stopErr != nil:
			if stopErr == nil {
				stopErr = r.stopErr
			}
		case r.err != nil:
			op.Result, op.Message = "failed", objErr(o, r.err)
			if failure == "" {
				failure = fmt.Sprintf("applying %s/%s failed: %v", o.GetKind(), o.GetName(), objErr(o, r.err))
			}
			if isJob && j.Result == JobPlanned {
				d.TemplateJobReplacements[t.jobIdx[j.Job]].Result = JobFailed
				d.TemplateJobReplacements[t.jobIdx[j.Job]].Reason = "deleted, but re-creating failed: " + objErr(o, r.err)
			}
		case isJob && j.Result == JobPlanned:
			op.Result = "replaced"
			jr := &d.TemplateJobReplacements[t.jobIdx[j.Job]]
			jr.Result, jr.NewUID = JobReplaced, string(r.got.GetUID())
			jr.Reason = fmt.Sprintf("deleted uid %s, re-created as uid %s", j.OldUID, r.got.GetUID())
		case t.live[key(o)] == nil:
			op.Result = "created"
		case ObjectAction(t.live[key(o)], r.got) == ActionUnchanged:
			// The plan's comparison, on what the apply did.
			op.Result = "unchanged"
		default:
			op.Result = "configured"
		}
	}
	return failure, stopErr
}
