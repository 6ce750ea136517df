package envrun

import (
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
)

// ApplyRecord is the audit record of one apply (or restore, or prune:
// verb) of env that started at start and ended with rep and err, the
// engine's answer (or the freezes' refusal). What the report and the error decide is filled here,
// for the console and the CLI alike: the outcome (refused: a gate or a
// check stopped it before any write; failed: it did not finish; an
// applied report succeeded), a message safe to show (a refusal's reason,
// the report's conclusion, or "see the log" for an error without a
// report: the raw error goes to the log, never into a record), the
// commit, the rendered digest and the blockers' ids, and the manifests:
// applied, with Secrets stripped to name and hash (audit.StripSecrets).
// The caller sets the actor and the cluster.
func ApplyRecord(verb audit.Verb, env *envconfig.Environment, start time.Time, rep *deployplan.Report, err error, applied []*unstructured.Unstructured) audit.Record {
	rec := audit.Record{Time: start, Duration: audit.Duration(time.Since(start)), Verb: verb, Environment: env.Name,
		Namespace: env.Namespace, Blockers: []string{}}
	var ref *deployplan.RefusalError
	var lost *deployplan.LockLostError
	var interrupted *deployplan.InterruptedError
	switch {
	case errors.As(err, &interrupted):
		// Its report, once anything was written, names each object's
		// result; the manifests below are those of the apply's scope.
		rec.Outcome, rec.Message = audit.OutcomeInterrupted, interrupted.Error()
		if rep != nil {
			rec.Message = rep.DeployApply.Conclusion.Summary
		}
	case freezeRefusal(err) != "":
		rec.Outcome, rec.Message = audit.OutcomeRefused, freezeRefusal(err)
	case errors.As(err, &ref):
		rec.Outcome, rec.Message = audit.OutcomeRefused, ref.Reason
	case errors.As(err, &lost):
		// Holder ids only: safe to show.
		rec.Outcome, rec.Message = audit.OutcomeFailed, lost.Error()
	case err != nil && rep == nil:
		rec.Outcome, rec.Message = audit.OutcomeFailed, "the "+string(verb)+" could not run: see the server log"
	case rep != nil && rep.Status() == deployplan.StatusApplied && err == nil:
		rec.Outcome, rec.Message = audit.OutcomeSucceeded, rep.DeployApply.Conclusion.Summary
	default:
		rec.Outcome = audit.OutcomeFailed
		if rep != nil {
			rec.Message = rep.DeployApply.Conclusion.Summary
		}
	}
	if rep == nil {
		return rec
	}
	d := &rep.DeployApply
	rec.Commit, rec.RenderedDigest = d.Source.Commit, d.Source.RenderedDigest
	for _, b := range d.RemainingBlockers {
		rec.Blockers = append(rec.Blockers, b.ID)
	}
	if rec.Outcome != audit.OutcomeRefused && len(applied) > 0 {
		stripped, serr := audit.StripSecrets(applied)
		if serr == nil {
			rec.Manifests = stripped
			return rec
		}
	}
	// No manifests (refused, or not known): the objects the report names.
	for _, o := range d.Objects {
		gv, _ := schema.ParseGroupVersion(o.APIVersion)
		rec.Objects = append(rec.Objects, audit.Object{Group: gv.Group, Version: gv.Version, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name})
	}
	return rec
}
