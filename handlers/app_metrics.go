package handlers

import (
	"context"
	"net/http"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/promcheck"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// appEnvironment is the environment App a is in: the one whose manifests
// render it, else the one environment deploying to its namespace in its
// cluster (nil: none, or several).
func (s *Server) appEnvironment(a appRef) *envconfig.Environment {
	if g := s.renderedBy(a); g != nil {
		return g.env
	}
	if s.opts.Environments == nil {
		return nil
	}
	cfg := s.opts.Environments.Config()
	var found *envconfig.Environment
	for i, e := range cfg.Environments {
		if e.Namespace != a.Namespace || !s.envTargets(e.Name, a.c) {
			continue
		}
		if found != nil {
			return nil
		}
		found = &cfg.Environments[i]
	}
	return found
}

// appMetricsPlaceholder is the app page's Metrics panel as the page
// paints it (it loads itself): nil when the App's environment has no
// metrics.
func (s *Server) appMetricsPlaceholder(a appRef) *templates.AppMetricsProps {
	return s.metricsPlaceholder(a, s.appEnvironment(a))
}

// metricsPlaceholder is App a's Metrics placeholder in environment env.
func (s *Server) metricsPlaceholder(a appRef, env *envconfig.Environment) *templates.AppMetricsProps {
	if env == nil || env.Metrics == nil {
		return nil
	}
	return &templates.AppMetricsProps{URL: paths.AppMetrics(a.Cluster(), a.Namespace, a.Name), Env: env.Name}
}

// appMetrics serves GET /clusters/{cluster}/apps/{namespace}/{name}/metrics:
// the Metrics panel, each promotion check the App is promoted out of its
// environment with (gitops.Service.CheckTrends: promcheck's bounded
// range query, cached per minute) laid out as a chart; all the queries
// together bounded by promcheck.Timeout. An App whose environment has
// no metrics is 404: it has no panel.
func (s *Server) appMetrics(w http.ResponseWriter, r *http.Request) error {
	a, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	env := s.appEnvironment(a)
	p := s.metricsPlaceholder(a, env)
	if p == nil {
		return notFound("metrics of app " + a.Namespace + "/" + a.Name + " (its environment has no metrics)")
	}
	row, _ := a.c.View.Row(a.Namespace, a.Name)
	ctx, cancel := context.WithTimeout(r.Context(), promcheck.Timeout)
	defer cancel()
	trends, _ := s.ops.CheckTrends(ctx, env, a.Name, row.Version)
	p.Loaded = true
	for _, t := range trends {
		p.Checks = append(p.Checks, templates.MetricCheck{Target: t.Target, Trend: t.Trend, Chart: templates.LayoutMetricChart(t.Trend)})
	}
	return s.render(w, r, http.StatusOK, templates.AppMetrics(*p))
}
