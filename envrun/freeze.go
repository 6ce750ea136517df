package envrun

import (
	"context"
	"errors"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/freeze"
)

// Freezes is the freeze check of every run that writes (implemented by
// freeze.Gate): an apply from the console (StartWith) and every Deploy
// (rollback and sync through git, auto-sync, self-heal) ask it before
// anything starts; a plan does not.
type Freezes interface {
	Check(ctx context.Context, a freeze.Action, t freeze.Target, bg *freeze.BreakGlass) (*freeze.Override, error)
}

// freezeReadTimeout bounds the read of the freezes before a run.
const freezeReadTimeout = 10 * time.Second

// freezeAction is what a run of action with trigger ("" for an apply from
// the console) asks of the freezes.
func freezeAction(action, trigger string) freeze.Action {
	switch {
	case action == ActionPlan:
		return freeze.Plan
	case trigger == TriggerRollback:
		return freeze.Rollback
	case trigger == TriggerSync:
		return freeze.Sync
	case trigger == TriggerAutoSync, trigger == TriggerSelfHeal:
		return freeze.AutoSync
	}
	return freeze.Apply
}

// freezeTarget is where a run of env writes: its cluster (Options.Cluster),
// environment and namespace, and the App of a run confined to one (only).
func (r *Runner) freezeTarget(env *envconfig.Environment, only string) freeze.Target {
	t := freeze.Target{Environment: env.Name, Namespace: env.Namespace, App: only}
	if r.opts.Cluster != nil {
		t.Cluster = r.opts.Cluster(env.Name)
	}
	return t
}

// checkFreeze is the freeze decision of a run before it starts: nil (no
// Freezes, a plan, nothing frozen), an Override to record (a superadmin's
// break-glass), or the refusal.
func (r *Runner) checkFreeze(env *envconfig.Environment, action, trigger, only string, bg *freeze.BreakGlass) (*freeze.Override, error) {
	a := freezeAction(action, trigger)
	if r.opts.Freezes == nil || !a.Refused() {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(r.baseContext(), freezeReadTimeout)
	defer cancel()
	return r.opts.Freezes.Check(ctx, a, r.freezeTarget(env, only), bg)
}

// freezeRefusal is the public text of a freeze refusal for the history
// and the audit record; "" when err is not one.
func freezeRefusal(err error) string {
	var fe *freeze.FrozenError
	switch {
	case errors.As(err, &fe):
		if errors.Is(err, freeze.ErrBreakGlassDenied) {
			return "break-glass refused: only a superadmin may override a freeze; " + fe.Message() + "; nothing was touched"
		}
		return fe.Message() + "; nothing was touched"
	case errors.Is(err, freeze.ErrUnreadable):
		return "the deploy freezes could not be read, so writes are refused until they can (see the server log); nothing was touched"
	}
	return ""
}

// WithBreakGlass records the break-glass o that let rec's action through
// a freeze: its note first in the message (which freeze, until when, who
// and why) and its reason in rec.BreakGlass. A nil o leaves rec as it is.
// The console's runs and the CLI's writes record it the same way.
func WithBreakGlass(rec audit.Record, o *freeze.Override) audit.Record {
	if o == nil {
		return rec
	}
	rec.BreakGlass = o.Reason
	if note := o.Note(); note != "" {
		if rec.Message == "" {
			rec.Message = note
		} else {
			rec.Message = note + "; " + rec.Message
		}
	}
	return rec
}
