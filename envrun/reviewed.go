package envrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/planstore"
)

// LatestPlan decides whether the plan id (a history entry) may be applied
// in environment env, given the environment's history newest first: it must
// be named, be the environment's newest plan, and be ready. It returns that
// entry, or a *deployplan.RefusalError saying why not. The console offers
// Apply only where this accepts the plan shown.
func LatestPlan(entries []planstore.Entry, env, id string) (planstore.Entry, error) {
	if id == "" {
		return planstore.Entry{}, &deployplan.RefusalError{Reason: "no plan was named: Apply applies the finished ready plan shown on the page; plan first; nothing was touched"}
	}
	var newest *planstore.Entry
	for i := range entries {
		if entries[i].Action == ActionPlan && entries[i].Environment == env {
			newest = &entries[i]
			break
		}
	}
	switch {
	case newest == nil:
		return planstore.Entry{}, &deployplan.RefusalError{Reason: fmt.Sprintf("plan %s is unknown: environment %s has no plan yet; plan first; nothing was touched", id, env)}
	case newest.ID != id:
		for _, e := range entries {
			if e.ID == id && e.Action == ActionPlan {
				return planstore.Entry{}, &deployplan.RefusalError{Reason: fmt.Sprintf("plan %s is not the latest plan of %s (%s is, made by %s): review that one (reload the page); nothing was touched", id, env, newest.ID, newest.User)}
			}
		}
		return planstore.Entry{}, &deployplan.RefusalError{Reason: fmt.Sprintf("plan %s is unknown in environment %s: plan again; nothing was touched", id, env)}
	case newest.Conclusion != deployplan.StatusReady:
		return planstore.Entry{}, &deployplan.RefusalError{Reason: fmt.Sprintf("plan %s is %s, not ready: only a ready plan is applied; nothing was touched", id, newest.Conclusion)}
	}
	return *newest, nil
}

// reviewedPlan reads the plan an apply names from the history and returns
// what the apply must find unchanged.
func (r *Runner) reviewedPlan(env, id string) (*deployplan.Reviewed, error) {
	if r.opts.Store == nil {
		return nil, &deployplan.RefusalError{Reason: "there is no plan history to apply a plan from; nothing was touched"}
	}
	base := r.opts.BaseContext
	if base == nil {
		base = context.Background()
	}
	ctx, cancel := context.WithTimeout(base, 15*time.Second)
	defer cancel()
	entries, err := r.opts.Store.List(ctx, env)
	if err != nil {
		return nil, fmt.Errorf("envrun: read the plan history: %w", err)
	}
	e, err := LatestPlan(entries, env, id)
	if err != nil {
		return nil, err
	}
	_, files, err := r.opts.Store.Get(ctx, e.ID)
	if errors.Is(err, planstore.ErrNotFound) {
		return nil, &deployplan.RefusalError{Reason: fmt.Sprintf("plan %s is gone from the history: plan again; nothing was touched", id)}
	}
	if err != nil {
		return nil, fmt.Errorf("envrun: read plan %s: %w", id, err)
	}
	if files["report.json"] == nil {
		return nil, &deployplan.RefusalError{Reason: fmt.Sprintf("plan %s kept no report: plan again; nothing was touched", id)}
	}
	return deployplan.ReviewedPlan(files["report.json"], env, id)
}
