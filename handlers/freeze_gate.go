package handlers

import (
	"context"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/gitops"
	"github.com/hanzoai/deploy-web/release"
	"github.com/hanzoai/deploy-web/roles"
)

// Deploy freezes (package freeze) on the handlers' write paths. Each path
// has one check:
//
//   - an apply from the environment page, and every rollback or sync
//     through git: envrun asks Options.Freezes before its run starts
//     (a rollback through git is also checked before its commit, so a
//     refused one commits nothing);
//   - a rollback or sync of an App CR (the release seam): freezingReleaser,
//     which wraps every cluster's Release in New, so no handler reaches a
//     cluster's release seam around it;
//   - a day-2 action (restart, scale, ...): freezingOperator, which wraps
//     every cluster's Operations the same way, with the same check
//     (freeze.Operate, refused as a rollback is, break-glass as there).
//
// A break-glass (a superadmin's typed reason, JSON breakGlass: {reason},
// form field breakGlassReason) travels in the request's context
// (withBreakGlass) to whichever check decides, and the Override it grants
// comes back the same way for the action's audit record.

// breakGlassField is the form field of a break-glass reason.
const breakGlassField = "breakGlassReason"

// breakGlassJSON is the break-glass part of a JSON write request.
type breakGlassJSON struct {
	Reason string `json:"reason"`
}

// breakGlassSlot carries one request's break-glass to the check that
// decides it, and the Override back.
type breakGlassSlot struct {
	bg       *freeze.BreakGlass
	override *freeze.Override
}

type breakGlassKey struct{}

// withBreakGlass returns ctx carrying the person's request to break the
// glass at t with reason ("" is no request): the role decision
// (roles.BreakGlass at t) is taken here, from the same Grants as every
// route, and freeze.List.BreakGlass decides with it.
func (s *Server) withBreakGlass(ctx context.Context, t roles.Target, reason string) context.Context {
	slot := &breakGlassSlot{}
	if reason = strings.TrimSpace(reason); reason != "" {
		by := freeze.Author{Subject: "unknown"}
		if id, ok := auth.FromContext(ctx); ok {
			by = freeze.Author{Email: id.Email, Subject: id.Subject}
		}
		slot.bg = &freeze.BreakGlass{Reason: reason, Superadmin: s.allowed(ctx, roles.BreakGlass, t), By: by}
	}
	return context.WithValue(ctx, breakGlassKey{}, slot)
}

// breakGlassOf returns ctx's break-glass slot (an empty one when none).
func breakGlassOf(ctx context.Context) *breakGlassSlot {
	if slot, ok := ctx.Value(breakGlassKey{}).(*breakGlassSlot); ok {
		return slot
	}
	return &breakGlassSlot{}
}

// freezeError maps a freeze refusal to its answer (gitops.FreezeError:
// 409 with reason "frozen" and the freeze's words; freezes that cannot be
// read are a 503). Any other error is returned as it is.
func freezeError(err error) error {
	if fe := gitops.FreezeError(err); fe != err {
		return workflowError(fe)
	}
	return err
}

// freezeTarget is where the freezes see an action at roles target t: the
// same target, except that an App no environment deploys is in
// freeze.NoEnvironment (an empty environment would put it under every
// environment's freeze; an App several environments deploy keeps the
// empty one, held by any of their freezes).
func (s *Server) freezeTarget(t roles.Target) freeze.Target {
	if t.Environment == "" && t.App != "" && len(s.appEnvironments(t.Cluster, t.Namespace)) == 0 {
		t.Environment = freeze.NoEnvironment
	}
	return t
}

// freezingReleaser asks the freezes before every rollback and sync that
// reaches a cluster's release seam.
type freezingReleaser struct {
	Releaser
	gate   Freezes
	target func(namespace, name string) roles.Target
}

func (fr freezingReleaser) check(ctx context.Context, a freeze.Action, namespace, name string) error {
	return checkFreeze(ctx, fr.gate, a, fr.target(namespace, name))
}

// checkFreeze asks gate about a at t with the request's break-glass, and
// keeps the Override it grants for the action's record: the one freeze
// check of the release seam's writes.
func checkFreeze(ctx context.Context, gate Freezes, a freeze.Action, t roles.Target) error {
	slot := breakGlassOf(ctx)
	o, err := gate.Check(ctx, a, t, slot.bg)
	if err != nil {
		return err
	}
	slot.override = o
	return nil
}

// freezingOperator asks the freezes before every day-2 action that
// reaches a cluster's write seam, at the App the action's object belongs
// to (Operation.App).
type freezingOperator struct {
	Operator
	gate   Freezes
	target func(namespace, name string) roles.Target
}

func (fo freezingOperator) Operate(ctx context.Context, o release.Operation, user string) (release.OperationResult, error) {
	if err := checkFreeze(ctx, fo.gate, freeze.Operate, fo.target(o.Target.Namespace, o.App)); err != nil {
		return release.OperationResult{Op: o.Op, Kind: o.Target.Kind, Namespace: o.Target.Namespace, Name: o.Target.Name}, err
	}
	return fo.Operator.Operate(ctx, o, user)
}

func (fr freezingReleaser) Rollback(ctx context.Context, namespace, name, version, user string) (release.Result, error) {
	if err := fr.check(ctx, freeze.Rollback, namespace, name); err != nil {
		return release.Result{App: name, Namespace: namespace, To: version}, err
	}
	return fr.Releaser.Rollback(ctx, namespace, name, version, user)
}

func (fr freezingReleaser) Sync(ctx context.Context, namespace, name, user string) (release.SyncResult, error) {
	if err := fr.check(ctx, freeze.Sync, namespace, name); err != nil {
		return release.SyncResult{App: name, Namespace: namespace}, err
	}
	return fr.Releaser.Sync(ctx, namespace, name, user)
}

// withFreezes makes c's release seam ask the freezes first (before the
// audit trail wraps it, so the trail records the refusal).
func (s *Server) withFreezes(c *Cluster) {
	if s.opts.Freezes == nil || c.Release == nil {
		return
	}
	name := c.Name
	c.Release = freezingReleaser{Releaser: c.Release, gate: s.opts.Freezes, target: func(namespace, app string) roles.Target {
		return s.freezeTarget(roles.Target{Cluster: name, Environment: s.appEnv(name, namespace), Namespace: namespace, App: app})
	}}
}

// withOperationGuards makes c's day-2 actions ask the freezes first,
// then records each in the audit trail (as withFreezes and
// withAuditTrail do for rollback and sync).
func (s *Server) withOperationGuards(c *Cluster) {
	if c.Operations == nil {
		return
	}
	if s.opts.Freezes != nil {
		name := c.Name
		c.Operations = freezingOperator{Operator: c.Operations, gate: s.opts.Freezes, target: func(namespace, app string) roles.Target {
			return s.freezeTarget(roles.Target{Cluster: name, Environment: s.appEnv(name, namespace), Namespace: namespace, App: app})
		}}
	}
	if s.opts.Audit != nil {
		c.Operations = auditingOperator{Operator: c.Operations, cluster: c.Name, log: s.opts.Audit}
	}
}

// Freezes is the freeze gate the handlers ask and show (implemented by
// freeze.Gate).
type Freezes interface {
	Check(ctx context.Context, a freeze.Action, t freeze.Target, bg *freeze.BreakGlass) (*freeze.Override, error)
	// Status is "is t frozen now, why, until when" (nil when open), read
	// fresh: the promotion gate's question.
	Status(ctx context.Context, t freeze.Target) (*freeze.FrozenError, error)
	Snapshot(ctx context.Context) (freeze.List, time.Time, error)
	Forget()
	Store() *freeze.Store
	// Now is the clock the freezes are decided at.
	Now() time.Time
}
