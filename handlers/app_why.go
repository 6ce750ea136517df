package handlers

import (
	"context"
	"errors"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/promcheck"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
	"github.com/hanzoai/deploy-web/why"
)

// "Why isn't it live?": GET /v1/deploy/{name}/why, the app page's panel
// and the environment page's. The reasons are package why's composition;
// here the App is resolved and the sources wired.

// newWhy is the "why" composition over s's options: each source the
// console has (a nil one gives no reasons of its kind).
func (s *Server) newWhy() *why.Service {
	o := why.Options{Applied: liveEntries{s}}
	if s.opts.Freezes != nil {
		o.Freezes = s.opts.Freezes
	}
	if s.opts.AutoSync != nil {
		o.AutoSync = s.opts.AutoSync
	}
	if s.opts.Promotions != nil {
		o.Promotions = s.opts.Promotions
	}
	if s.ops != nil {
		o.Soaks = s.ops
	}
	if s.opts.Environments != nil {
		if st := s.opts.Environments.Store(); st != nil {
			o.Runs = st
		}
		if s.opts.EnvClusterConfig != nil {
			o.Locks = envLocks{s}
		}
		o.Checks = pendingChecks{s}
	}
	return why.New(o)
}

// pendingChecks are the promotion checks of a waiting version, as the
// workflow service's gate decides them, each query bounded by
// promcheck.Timeout and all of them together too.
type pendingChecks struct{ s *Server }

func (p pendingChecks) Pending(ctx context.Context, env, app string) (*why.CheckGate, error) {
	ctx, cancel := context.WithTimeout(ctx, promcheck.Timeout)
	defer cancel()
	pc, err := p.s.ops.PendingChecks(ctx, env, app)
	if err != nil || pc == nil {
		return nil, err
	}
	return &why.CheckGate{Source: pc.Source, Version: pc.Version, Gate: pc.Gate}, nil
}

// liveEntries is what is live in each environment (Server.liveEntry).
type liveEntries struct{ s *Server }

func (l liveEntries) LastApplied(ctx context.Context, env string) (*planstore.Entry, error) {
	e, _, err := l.s.liveEntry(ctx, env)
	return e, err
}

// lockReadTimeout bounds the read of an environment's apply lock.
const lockReadTimeout = 5 * time.Second

// envLocks reads the apply lock (Lease) of an environment in its cluster.
type envLocks struct{ s *Server }

func (l envLocks) Held(ctx context.Context, name string) (*deployplan.LockHeldError, error) {
	env, err := l.s.opts.Environments.Config().Env(name)
	if err != nil {
		return nil, nil
	}
	rc, err := l.s.opts.EnvClusterConfig(env)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, lockReadTimeout)
	defer cancel()
	return deployplan.LockStatus(ctx, kube, env.Namespace, l.s.opts.Now())
}

// whyApp is App a as package why asks about it.
func (s *Server) whyApp(a appRef) (why.App, error) {
	tree, err := a.c.View.Tree(a.Namespace, a.Name)
	if errors.Is(err, kubeview.ErrAppNotFound) {
		return why.App{}, notFound("app " + a.Namespace + "/" + a.Name)
	}
	if err != nil {
		return why.App{}, err
	}
	row, ok := a.c.View.Row(a.Namespace, a.Name)
	row.Cluster = a.Cluster()
	t := s.appTarget(a)
	app := why.App{Cluster: a.Cluster(), Namespace: a.Namespace, Name: a.Name, Row: row, HasRow: ok, Tree: tree,
		FreezeTarget: s.freezeTarget(t), Env: t.Environment}
	if g := s.renderedBy(a); g != nil {
		app.Env = g.env.Name
		app.Git = &why.Git{Commit: g.desired.Commit, Version: desiredVersion(g.desired.Object)}
		if g.desired.Object != nil {
			// A refused annotation blocks the plan, which "why" names.
			app.Git.DependsOn, _ = deployplan.DependsOn(g.desired.Object)
		}
	}
	return app, nil
}

// desiredVersion is the version of an App object: its image's tag.
func desiredVersion(u *unstructured.Unstructured) string {
	if u == nil {
		return ""
	}
	img, _, _ := unstructured.NestedString(u.Object, "spec", "image")
	return appcr.ImageTag(img)
}

// apiWhy serves GET /v1/deploy/{name}/why: every reason the App's desired
// version is not running healthy now.
func (s *Server) apiWhy(w http.ResponseWriter, r *http.Request) error {
	a, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	app, err := s.whyApp(a)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.why.Explain(r.Context(), app, a.c.View, true))
	return nil
}

// appWhyPanel is the app page's "Why isn't it live?" panel of App a. A
// page's first paint leaves the promotion checks out (they may wait for
// Prometheus): the panel then asks again at once.
func (s *Server) appWhyPanel(ctx context.Context, a appRef, firstPaint bool) (templates.WhyPanelProps, error) {
	app, err := s.whyApp(a)
	if err != nil {
		return templates.WhyPanelProps{}, err
	}
	w := s.why
	partial := firstPaint && w.HasChecks()
	if partial {
		w = w.WithoutChecks()
	}
	return templates.WhyPanelProps{Name: a.Name, URL: paths.AppWhy(a.Cluster(), a.Namespace, a.Name),
		Answer: w.Explain(ctx, app, a.c.View, true), Partial: partial}, nil
}

// appWhy serves GET /clusters/{cluster}/apps/{namespace}/{name}/why: the
// panel's refresh (HTMX), or the panel as a page of its own.
func (s *Server) appWhy(w http.ResponseWriter, r *http.Request) error {
	a, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	p, err := s.appWhyPanel(r.Context(), a, false)
	if err != nil {
		return err
	}
	if isHTMX(r) {
		return s.render(w, r, http.StatusOK, templates.WhyPanel(p))
	}
	return s.render(w, r, http.StatusOK, templates.WhyView(templates.WhyViewProps{Layout: s.layout(r, "apps", a.Name),
		AppURL: paths.App(a.Cluster(), a.Namespace, a.Name), Panel: p}))
}

// maxEnvWhyApps bounds the Apps an environment's panel answers for.
const maxEnvWhyApps = 500

// envWhyPanel is environment env's "Not live" panel: its Apps (those in
// its namespace of its cluster) that have a reason, each read with one
// batch of the sources (why.Service.Batch) and without events.
func (s *Server) envWhyPanel(ctx context.Context, env *envconfig.Environment) templates.EnvWhyProps {
	p := templates.EnvWhyProps{Env: env.Name, URL: paths.EnvWhy(env.Name)}
	c := s.cluster(s.opts.EnvClusters[env.Name])
	if c == nil && len(s.clusters) == 1 {
		c = s.clusters[0]
	}
	if c == nil {
		p.Unavailable = "The cluster of " + env.Name + " is not one the console reads."
		return p
	}
	page, err := c.View.Applications(kubeview.Query{Namespace: env.Namespace})
	if err != nil {
		s.log.Warn("applications unreadable", "environment", env.Name, "err", err)
		p.Unavailable = "The Apps of " + env.Name + " could not be read."
		return p
	}
	batch := s.why.Batch()
	for i, row := range page.Rows {
		if i == maxEnvWhyApps {
			p.More = len(page.Rows) - i
			break
		}
		a := appRef{c: c, Namespace: row.Namespace, Name: row.Name}
		if !s.allowed(ctx, roles.View, s.appTarget(a)) {
			continue
		}
		app, err := s.whyApp(a)
		if err != nil {
			continue // gone since the list
		}
		p.Checked++
		ans := batch.Explain(ctx, app, c.View, false)
		if len(ans.Reasons) > 0 {
			p.Apps = append(p.Apps, templates.EnvWhyApp{Name: row.Name, Href: paths.App(c.Name, row.Namespace, row.Name), Answer: ans})
		}
	}
	return p
}

// envWhy serves GET /environments/{env}/why, the panel's refresh.
func (s *Server) envWhy(w http.ResponseWriter, r *http.Request) error {
	env, err := s.pathEnv(r)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, templates.EnvWhyPanel(s.envWhyPanel(r.Context(), env)))
}

// whyFilter is the fleet's "Not live" filter (nil when off): the Apps
// that have a reason their cached row decides (why.Cached).
func whyFilter(on bool) func(kubeview.AppRow) bool {
	if !on {
		return nil
	}
	return func(row kubeview.AppRow) bool { return why.Cached(why.App{Row: row, HasRow: true}) }
}

// bothFilters keeps the rows both filters keep (a nil filter keeps all).
func bothFilters(a, b func(kubeview.AppRow) bool) func(kubeview.AppRow) bool {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(row kubeview.AppRow) bool { return a(row) && b(row) }
}
