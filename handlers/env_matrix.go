package handlers

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/gitops"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// envCluster is the configured cluster environment e deploys to: the only
// one, or the one Options.EnvClusters maps it to (nil: none).
func (s *Server) envCluster(e *envconfig.Environment) *Cluster {
	if !s.multiCluster() {
		if len(s.clusters) == 0 {
			return nil
		}
		return s.clusters[0]
	}
	return s.byName[s.opts.EnvClusters[e.Name]]
}

// envColumn is environment e as a column of the matrix, and its Apps read
// from its cluster's cache (none when Unavailable says why not).
func (s *Server) envColumn(ctx context.Context, e *envconfig.Environment) (gitops.Column, []kubeview.AppRow) {
	col := gitops.Column{Env: e.Name, Namespace: e.Namespace, Protected: e.Protected, After: e.PromotedFrom()}
	if e.Promotion != nil {
		col.Soak = e.Promotion.SoakOrDefault()
	}
	col.Commit = s.lastAppliedCommit(ctx, e.Name)
	c := s.envCluster(e)
	switch {
	case c == nil:
		col.Unavailable = "its cluster is not one deploy-web reads"
		return col, nil
	case !slices.Contains(c.View.Namespaces(), e.Namespace):
		col.Cluster = c.Name
		col.Unavailable = "namespace " + e.Namespace + " is not a platform namespace: its Apps are not read"
		return col, nil
	}
	col.Cluster = c.Name
	page, err := c.View.Applications(kubeview.Query{Namespace: e.Namespace})
	if err != nil {
		s.log.Warn("matrix: applications unreadable", "environment", e.Name, "err", err)
		col.Unavailable = "its Apps could not be read"
		return col, nil
	}
	return col, page.Rows
}

// lastAppliedCommit is the source commit of environment env's newest
// successful apply in the audit trail ("" when unknown).
func (s *Server) lastAppliedCommit(ctx context.Context, env string) string {
	if s.opts.Audit == nil {
		return ""
	}
	page, err := s.opts.Audit.List(ctx, audit.Filter{Environment: env, Verb: audit.VerbApply, Outcome: audit.OutcomeSucceeded, Limit: 1})
	if err != nil || len(page.Records) == 0 {
		return ""
	}
	return page.Records[0].Commit
}

// envMatrix is the matrix of the environments the person may view, in
// promotion order.
func (s *Server) envMatrix(ctx context.Context) gitops.Matrix {
	if s.opts.Environments == nil {
		return gitops.Matrix{}
	}
	cfg := s.opts.Environments.Config()
	var cols []gitops.Column
	apps := map[string][]kubeview.AppRow{}
	for _, name := range cfg.PromotionOrder() {
		if !s.allowed(ctx, roles.View, s.envTarget(name)) {
			continue // not the person's: not a column
		}
		e, err := cfg.Env(name)
		if err != nil {
			continue
		}
		col, rows := s.envColumn(ctx, e)
		cols = append(cols, col)
		apps[name] = rows
	}
	return gitops.BuildMatrix(cols, apps)
}

// matrixQuery reads the matrix's filters; an unknown health is the
// user's mistake.
func matrixQuery(q url.Values) (gitops.MatrixQuery, error) {
	mq := gitops.MatrixQuery{Search: strings.TrimSpace(q.Get("q"))}
	if len(mq.Search) > 253 {
		return mq, badRequest("q: at most 253 characters")
	}
	if h := q.Get("health"); h != "" {
		if !validHealth(h) {
			return mq, badRequest("health: %q is not one of Healthy, Progressing, Degraded, Suspended, Missing, Unknown", h)
		}
		mq.Health = objrules.HealthStatus(h)
	}
	switch d := q.Get("differs"); d {
	case "", "0", "false":
	case "1", "true":
		mq.Differs = true
	default:
		return mq, badRequest("differs: %q is not 1 or 0", d)
	}
	return mq, nil
}

// matrixValues is q as the URL query of the matrix's links.
func matrixValues(q gitops.MatrixQuery) url.Values {
	v := url.Values{}
	if q.Search != "" {
		v.Set("q", q.Search)
	}
	if q.Health != "" {
		v.Set("health", string(q.Health))
	}
	if q.Differs {
		v.Set("differs", "1")
	}
	return v
}

// matrixView is the matrix's props for the person: filtered, each cell
// with its links, and a "Promote to" for each next environment the person
// may promote to.
func (s *Server) matrixView(ctx context.Context, m gitops.Matrix, q gitops.MatrixQuery) templates.MatrixProps {
	v := matrixValues(q)
	jq := url.Values{"view": {"matrix"}}
	for k, vs := range v {
		jq[k] = vs
	}
	p := templates.MatrixProps{PollURL: paths.EnvMatrix(v), JSONURL: paths.APIEnvironments(jq), Total: len(m.Rows), Now: s.opts.Now(),
		Query: templates.MatrixQuery{Search: q.Search, Health: string(q.Health), Differs: q.Differs}}
	next := map[string][]string{}
	for _, c := range m.Columns {
		// A target whose Apps are not read cannot be promoted into (its
		// gates cannot be evaluated): not offered.
		if c.After != "" && c.Unavailable == "" && s.allowed(ctx, roles.Promote, s.envTarget(c.Env)) {
			next[c.After] = append(next[c.After], c.Env)
		}
	}
	for _, c := range m.Columns {
		mc := templates.MatrixColumn{Column: c, URL: paths.Env(c.Env)}
		if c.Unavailable == "" {
			for _, t := range next[c.Env] {
				mc.Promote = append(mc.Promote, templates.PromoteLink{Target: t, URL: paths.EnvPromote(t, c.Env, "")})
			}
		}
		p.Columns = append(p.Columns, mc)
	}
	p.Pending = s.pendingPromotions(ctx)
	checked := s.checkedTargets(m)
	f := m.Filter(q)
	for _, r := range f.Rows {
		row := templates.MatrixRow{App: r.App}
		for i, cell := range r.Cells {
			col := m.Columns[i]
			mc := templates.MatrixCell{Cell: cell, Env: col.Env, Unavailable: col.Unavailable != "", PrevEnv: col.After}
			if cell.Present {
				mc.AppURL = paths.App(col.Cluster, col.Namespace, r.App)
				if prev, ok := m.Cell(r.App, col.After); ok && prev.Present {
					mc.DiffURL = paths.EnvCompare(col.Env, r.App, col.After)
				}
				for _, t := range next[col.Env] {
					mc.Promote = append(mc.Promote, templates.PromoteLink{Target: t, URL: paths.EnvPromote(t, col.Env, r.App)})
				}
				for _, t := range checked[col.Env] {
					if tc, _ := m.Cell(r.App, t); tc.Differs {
						mc.Checks = append(mc.Checks, templates.PromoteLink{Target: t, URL: paths.EnvPromoteChecks(t, col.Env, r.App)})
					}
				}
			}
			row.Cells = append(row.Cells, mc)
		}
		p.Rows = append(p.Rows, row)
	}
	return p
}

// checkedTargets are, by source, the environments of m promoted from it
// that have promotion.checks and whose Apps are read: a version waiting
// there shows its checks.
func (s *Server) checkedTargets(m gitops.Matrix) map[string][]string {
	out := map[string][]string{}
	if s.opts.Environments == nil {
		return out
	}
	cfg := s.opts.Environments.Config()
	for _, c := range m.Columns {
		e, err := cfg.Env(c.Env)
		if err != nil || c.After == "" || c.Unavailable != "" || e.Promotion == nil || len(e.Promotion.Checks) == 0 {
			continue
		}
		out[c.After] = append(out[c.After], c.Env)
	}
	return out
}

// apiEnvMatrix serves GET /v1/deploy/environments?view=matrix (through
// apiEnvironments): the matrix as JSON (the page's filters q, health and
// differs apply).
func (s *Server) apiEnvMatrix(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.envRunner(); err != nil {
		return err
	}
	q, err := matrixQuery(r.URL.Query())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.envMatrix(r.Context()).Filter(q))
	return nil
}

// pendingPromotions are the requests waiting for a second person in the
// environments the person may view (none when the store is not configured
// or cannot be read: the dialogs list them too).
func (s *Server) pendingPromotions(ctx context.Context) []templates.PendingPromotion {
	if s.opts.Promotions == nil {
		return nil
	}
	reqs, err := s.opts.Promotions.List(ctx, "")
	if err != nil {
		s.log.Warn("promotion requests unreadable", "err", err)
		return nil
	}
	var out []templates.PendingPromotion
	for _, r := range reqs {
		if r.State != gitops.StatePending || !s.allowed(ctx, roles.View, s.envTarget(r.Target)) {
			continue
		}
		app := ""
		if len(r.Apps) == 1 {
			app = r.Apps[0].App
		}
		out = append(out, templates.PendingPromotion{ID: r.ID, Source: r.Source, Target: r.Target, Versions: gitops.VersionsText(r.Apps),
			Requester: gitops.ActorText(r.Requester), URL: paths.EnvPromote(r.Target, r.Source, app)})
	}
	return out
}
