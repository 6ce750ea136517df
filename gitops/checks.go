package gitops

import (
	"context"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/promcheck"
	"github.com/hanzoai/deploy-web/promotion"
)

// PendingChecks is the checks gate of a version waiting to be promoted:
// App's Version runs in Source, Target (promoted from Source, with
// promotion.checks) runs another release of it.
type PendingChecks struct {
	App, Source, Target, Version string
	// Gate is the checks gate as the promotion would decide it now
	// (promotion.ChecksGate over the same evaluation, cached per minute).
	Gate promotion.Gate
	// Results are the checks' results, in the file's order.
	Results []promcheck.Result
}

// PendingChecks evaluates the promotion checks of App app into target:
// nil when target has no checks, its source does not run app, target
// already runs the same release, or the caller may not view the source.
// The columns' Apps come from the caches; the checks from the
// per-minute cache of promcheck (bound ctx: each check waits at most
// promcheck.Timeout).
func (s *Service) PendingChecks(ctx context.Context, targetName, app string) (*PendingChecks, error) {
	er, err := s.runner()
	if err != nil || s.opts.View == nil {
		return nil, nil
	}
	target, err := er.Config().Env(targetName)
	if err != nil || target.Promotion == nil || len(target.Promotion.Checks) == 0 {
		return nil, nil
	}
	source, err := er.Config().Env(target.PromotedFrom())
	if err != nil || !s.opts.View.MayView(ctx, source.Name) {
		return nil, nil
	}
	scol, srows := s.opts.View.Column(ctx, source)
	tcol, trows := s.opts.View.Column(ctx, target)
	for _, c := range []promotion.Column{scol, tcol} {
		if c.Unavailable != "" {
			return nil, refuse(KindConflict, "Unreadable", "environment %s: %s", c.Env, c.Unavailable)
		}
	}
	m := promotion.Build([]promotion.Column{scol, tcol}, map[string][]kubeview.AppRow{source.Name: srows, target.Name: trows})
	src, ok := m.Cell(app, source.Name)
	dst, _ := m.Cell(app, target.Name)
	if !ok || !src.Present || !dst.Differs {
		return nil, nil
	}
	checks, results := s.checks(ctx, target, source, app, src, false)
	return &PendingChecks{App: app, Source: source.Name, Target: target.Name, Version: src.Version, Results: results,
		Gate: promotion.ChecksGate(promotion.GateInput{Target: tcol, Checks: checks})}, nil
}

// CheckTrend is one promotion check's trend for an App, and the
// environment whose promotion it gates.
type CheckTrend struct {
	Target string
	promcheck.Trend
}

// CheckTrends are the trends of the checks App app (at version) is
// promoted out of environment env with: every check of each environment
// promoted from env, run against env's metrics, in promotion order.
// metrics is false when env has no metrics (nothing is asked).
func (s *Service) CheckTrends(ctx context.Context, env *envconfig.Environment, app, version string) (trends []CheckTrend, metrics bool) {
	er, err := s.runner()
	if err != nil || env.Metrics == nil {
		return nil, false
	}
	cfg := er.Config()
	v := checkVars(env, app, version)
	for _, name := range cfg.PromotionOrder() {
		t, err := cfg.Env(name)
		if err != nil || t.PromotedFrom() != env.Name || t.Promotion == nil {
			continue
		}
		for _, c := range t.Promotion.Checks {
			trends = append(trends, CheckTrend{Target: t.Name, Trend: s.opts.Checks.Trend(ctx, *env.Metrics, c, v)})
		}
	}
	return trends, true
}
