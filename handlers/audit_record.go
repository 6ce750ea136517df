package handlers

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/release"
)

// AuditLog keeps the audit trail, one record per write or refused
// attempt (implemented by audit.Store).
type AuditLog interface {
	Append(ctx context.Context, r audit.Record) (audit.Record, error)
	List(ctx context.Context, f audit.Filter) (audit.Page, error)
}

// auditWriteTimeout bounds the write of one record; it runs after the
// request's own work, detached from the request's cancellation (a client
// that hangs up does not erase the record of what it did).
const auditWriteTimeout = 10 * time.Second

// auditActor is the request's user as records name them: email,
// subject and the groups the session (or bearer token) carries, which
// are the ID token's groups that the roles file names (none without a
// roles file), already bounded by auth (roles.MaxGroups, 1 KiB in all)
// and again by audit.Store.Append (MaxGroups, MaxFieldBytes each).
func auditActor(ctx context.Context) audit.Actor {
	id, ok := auth.FromContext(ctx)
	if !ok {
		return audit.Actor{Subject: "unknown"}
	}
	return id.Actor()
}

// appendRecord stores rec; a failure is logged by the store, with the
// record, and does not change the answer (the write it records is done).
func appendRecord(ctx context.Context, log AuditLog, rec audit.Record) {
	if log == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditWriteTimeout)
	defer cancel()
	_, _ = log.Append(ctx, rec)
}

// auditingReleaser records every rollback and sync that reaches a
// cluster's release seam (succeeded, refused or failed) in the audit
// trail; the attempts refused before it are recorded by recordRefusal.
type auditingReleaser struct {
	Releaser
	cluster           string
	appGroup, appKind string
	log               AuditLog
}

func (rr auditingReleaser) Rollback(ctx context.Context, namespace, name, version, user string) (release.Result, error) {
	start := time.Now()
	res, err := rr.Releaser.Rollback(ctx, namespace, name, version, user)
	rec := rr.record(ctx, audit.VerbRollback, namespace, name, start, err)
	switch {
	case err == nil && res.Changed:
		rec.Message = "rolled back from " + res.From + " to " + res.To
	case err == nil:
		rec.Message = "already declares " + version + ": nothing changed"
	}
	appendRecord(ctx, rr.log, withOverride(ctx, rec))
	return res, err
}

func (rr auditingReleaser) Sync(ctx context.Context, namespace, name, user string) (release.SyncResult, error) {
	start := time.Now()
	res, err := rr.Releaser.Sync(ctx, namespace, name, user)
	rec := rr.record(ctx, audit.VerbSync, namespace, name, start, err)
	if err == nil {
		rec.Message = "sync requested at " + res.RequestedAt
	}
	appendRecord(ctx, rr.log, withOverride(ctx, rec))
	return res, err
}

// record is the record of a release call that ended with err: refused
// (a release.RefusalError: its public text), failed (any other error:
// the text says where to look, the error itself is in the log) or
// succeeded.
func (rr auditingReleaser) record(ctx context.Context, verb audit.Verb, namespace, name string, start time.Time, err error) audit.Record {
	rec := audit.Record{Time: start, Duration: audit.Duration(time.Since(start)), Actor: auditActor(ctx), Verb: verb,
		Cluster: rr.cluster, Namespace: namespace, App: name, Outcome: audit.OutcomeSucceeded, Blockers: []string{},
		Objects: []audit.Object{{Group: rr.appGroup, Kind: rr.appKind, Namespace: namespace, Name: name}}}
	var ref *release.RefusalError
	var he *httpError
	switch {
	case errors.As(err, &ref):
		rec.Outcome, rec.Message = audit.OutcomeRefused, ref.Public
	case errors.As(freezeError(err), &he):
		// Refused by a freeze (or freezes that could not be read).
		rec.Outcome, rec.Message = audit.OutcomeRefused, he.Public
	case err != nil:
		rec.Outcome, rec.Message = audit.OutcomeFailed, "the "+string(verb)+" failed: see the server log"
	}
	return rec
}

// auditingOperator records every day-2 action that reaches a cluster's
// write seam (succeeded, refused or failed): VerbOperate, the App it
// belongs to (Operation.App), the object, the action, before, after and the
// reason.
type auditingOperator struct {
	Operator
	cluster string
	log     AuditLog
}

func (ao auditingOperator) Operate(ctx context.Context, o release.Operation, user string) (release.OperationResult, error) {
	start := time.Now()
	res, err := ao.Operator.Operate(ctx, o, user)
	t := o.Target
	rr := auditingReleaser{cluster: ao.cluster, appGroup: t.Group, appKind: t.Kind}
	rec := rr.record(ctx, audit.VerbOperate, t.Namespace, o.App, start, err)
	rec.Objects = []audit.Object{{Group: t.Group, Version: t.Version, Kind: t.Kind, Namespace: t.Namespace, Name: t.Name}}
	rec.Action, rec.Before, rec.After = string(o.Op), res.Before, res.After
	rec.Reason, _ = release.CleanReason(o.Reason)
	if err == nil {
		rec.Message = operationText(o, res)
	}
	appendRecord(ctx, ao.log, withOverride(ctx, rec))
	return res, err
}

// operationText says what a day-2 action did, for its record and its
// result line: "scale of Deployment web: 1 replica → 3 replicas".
func operationText(o release.Operation, res release.OperationResult) string {
	msg := string(o.Op) + " of " + o.Target.Kind + " " + o.Target.Name
	switch {
	case !res.Changed:
		msg += ": already " + res.After + ", nothing changed"
	default:
		msg += ": " + res.Before + " → " + res.After
	}
	return msg
}

// withOverride records the break-glass that let a write through a freeze
// (the request's, breakGlassOf) as every write records one
// (envrun.WithBreakGlass): first in the message, its reason in breakGlass.
func withOverride(ctx context.Context, rec audit.Record) audit.Record {
	return envrun.WithBreakGlass(rec, breakGlassOf(ctx).override)
}

// withAuditTrail makes c's release seam record every call in log.
func withAuditTrail(c *Cluster, log AuditLog) {
	if log != nil && c.Release != nil {
		c.Release = auditingReleaser{Releaser: c.Release, cluster: c.Name, appGroup: c.AppGroup, appKind: c.AppKind, log: log}
	}
}

// recordRefusal records a rollback or sync refused before it reached the
// release seam (an App that does not resolve, an unreadable body): the
// App and cluster as the request named them (a hostile name is stored
// as text, never as a name), and the refusal's public text.
func (s *Server) recordRefusal(r *http.Request, action string, err error) {
	if s.opts.Audit == nil || err == nil {
		return
	}
	// A cluster that is not configured is not a stream of its own (the
	// refusal's message names what was asked).
	cluster := cmp.Or(r.PathValue("cluster"), r.URL.Query().Get("cluster"))
	if cluster == "" && len(s.clusters) == 1 {
		cluster = s.clusters[0].Name
	}
	if s.cluster(cluster) == nil {
		cluster = unresolvedCluster
	}
	msg := "refused"
	var he *httpError
	if errors.As(err, &he) {
		msg = he.Public
	}
	appendRecord(r.Context(), s.opts.Audit, audit.Record{Time: time.Now(), Actor: auditActor(r.Context()), Verb: audit.Verb(action),
		Cluster: cmp.Or(cluster, unresolvedCluster), Namespace: cmp.Or(r.PathValue("namespace"), r.URL.Query().Get("namespace")),
		App: r.PathValue("name"), Outcome: audit.OutcomeRefused, Message: msg, Blockers: []string{}})
}

// unresolvedCluster names the cluster of a refused request that named
// none among several, or one that is not configured.
const unresolvedCluster = "(unresolved)"
