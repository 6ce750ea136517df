package handlers

import (
	"context"
	"net/http"
	"strings"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/templates"
)

// targetFunc finds where a request's action happens. ok false means the
// route is not about one target (a list, the catch-all, /me): the route
// then needs its action somewhere (roles.Grants.AllowSomewhere), and the
// handler decides each thing it shows (the fleet shows the rows
// Allow(View) allows).
type targetFunc func(r *http.Request) (t roles.Target, ok bool)

// targetOf chooses a route's target by the shape of its pattern, so that
// every route of one shape finds its target the same way:
//
//   - .../clusters/{cluster}/apps/{namespace}/{name}/...: that App, in the
//     environment that deploys to its cluster and namespace (appEnv);
//   - /apps/{namespace}/{name}... (the single-cluster redirects): the App in
//     the only cluster (no cluster when there are several);
//   - .../environments/{env}/...: the environment, with its cluster and
//     namespace when configured;
//   - /v1/deploy/{name}/...: the App the API names (resolveApp), or only
//     what the request says of it (?cluster=, ?namespace=) when it does not
//     resolve, so a refusal never tells whether the App exists;
//   - anything else: no one target.
func (s *Server) targetOf(pattern string) targetFunc {
	switch {
	case strings.Contains(pattern, "/clusters/{cluster}/apps/{namespace}/{name}"):
		return func(r *http.Request) (roles.Target, bool) {
			c, ns := r.PathValue("cluster"), r.PathValue("namespace")
			return roles.Target{Cluster: c, Environment: s.appEnv(c, ns), Namespace: ns, App: r.PathValue("name")}, true
		}
	case strings.Contains(pattern, " /apps/{namespace}/{name}") || strings.HasPrefix(pattern, "/apps/{namespace}/{name}"):
		return func(r *http.Request) (roles.Target, bool) {
			t := roles.Target{Namespace: r.PathValue("namespace"), App: r.PathValue("name")}
			if !s.multiCluster() {
				t.Cluster = s.clusters[0].Name
				t.Environment = s.appEnv(t.Cluster, t.Namespace)
			}
			return t, true
		}
	case strings.Contains(pattern, "/environments/{env}"):
		return func(r *http.Request) (roles.Target, bool) { return s.envTarget(r.PathValue("env")), true }
	case strings.Contains(pattern, "/v1/deploy/{name}/"):
		pair := strings.HasSuffix(pattern, " /v1/deploy/{name}/{sub}")
		return func(r *http.Request) (roles.Target, bool) {
			if pair && r.PathValue("name") == "environments" {
				// apiDeployPair: environment {sub}.
				return s.envTarget(r.PathValue("sub")), true
			}
			if a, err := s.resolveApp(r, ""); err == nil {
				return roles.Target{Cluster: a.Cluster(), Environment: s.appEnv(a.Cluster(), a.Namespace), Namespace: a.Namespace, App: a.Name}, true
			}
			q := r.URL.Query()
			return roles.Target{Cluster: q.Get("cluster"), Namespace: q.Get("namespace"), App: r.PathValue("name")}, true
		}
	}
	return func(*http.Request) (roles.Target, bool) { return roles.Target{}, false }
}

// appEnv is the environment an App in cluster and namespace belongs to: the
// one environment of --environments (deploy.yaml) that deploys to that
// namespace of that cluster; "" when none or several do (a role scoped to
// environments then does not cover the App).
func (s *Server) appEnv(cluster, namespace string) string {
	if envs := s.appEnvironments(cluster, namespace); len(envs) == 1 {
		return envs[0]
	}
	return ""
}

// appEnvironments are the environments of --environments that deploy to
// namespace of cluster (appEnv's candidates).
func (s *Server) appEnvironments(cluster, namespace string) []string {
	if s.opts.Environments == nil {
		return nil
	}
	var out []string
	for _, e := range s.opts.Environments.Config().Environments {
		if e.Namespace == namespace && s.opts.EnvClusters[e.Name] == cluster {
			out = append(out, e.Name)
		}
	}
	return out
}

// envTarget is the target of an action on environment env: its cluster and
// namespace when configured.
func (s *Server) envTarget(env string) roles.Target {
	t := roles.Target{Environment: env, Cluster: s.opts.EnvClusters[env]}
	if s.opts.Environments != nil {
		if e, err := s.opts.Environments.Config().Env(env); err == nil {
			t.Namespace = e.Namespace
		}
	}
	return t
}

// authorize is the one authorization of a protected route, after Require
// authenticated the request: the person's Grants (from the roles policy)
// decide action at the route's target, and a denial is a 403 whose message
// is the decision's Because. The Grants go into the request's context, for
// the handler and templates to draw every button from the same decision
// (grantsOf).
func (s *Server) authorize(action roles.Action, target targetFunc, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := s.grantsFor(r.Context())
		var d roles.Decision
		if t, ok := target(r); ok {
			d = g.Allow(action, t)
		} else {
			d = g.AllowSomewhere(action)
		}
		if !d.Allowed {
			s.log.Info("request forbidden", "method", r.Method, "path", r.URL.Path, "action", string(action), "because", d.Because, "request_id", requestID(r.Context()))
			s.writeError(w, r, http.StatusForbidden, reasonForbidden, d.Because)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), grantsKey{}, g)))
	})
}

// reasonForbidden is the reason of a 403 from authorize: the person's roles
// do not allow the route's action there.
const reasonForbidden = "Forbidden"

// grantsKey keys the request's roles.Grants in its context.
type grantsKey struct{}

// grantsFor resolves the signed-in person's Grants (none outside Require).
func (s *Server) grantsFor(ctx context.Context) roles.Grants {
	id, ok := auth.FromContext(ctx)
	if !ok {
		return s.opts.Roles.For(roles.Principal{})
	}
	return s.opts.Roles.For(id.Principal())
}

// grantsOf returns the Grants authorize put in ctx (resolving them again
// when absent).
func (s *Server) grantsOf(ctx context.Context) roles.Grants {
	if g, ok := ctx.Value(grantsKey{}).(roles.Grants); ok {
		return g
	}
	return s.grantsFor(ctx)
}

// allowed is the button test: whether the person may do action at t, by the
// same decision the route of that action makes.
func (s *Server) allowed(ctx context.Context, action roles.Action, t roles.Target) bool {
	return s.grantsOf(ctx).Allow(action, t).Allowed
}

// appAllowed is what the person may do to App a, for its page's buttons.
func (s *Server) appAllowed(ctx context.Context, a appRef) templates.Allowed {
	t := s.appTarget(a)
	return templates.Allowed{
		Logs:     s.allowed(ctx, roles.Logs, t),
		Sync:     s.allowed(ctx, roles.Sync, t),
		Rollback: s.allowed(ctx, roles.Rollback, t),
		Freeze:   s.breakGlassState(ctx, t),
	}
}

// envAllowed is what the person may do in environment env, for its page's
// buttons.
func (s *Server) envAllowed(ctx context.Context, env string) templates.Allowed {
	t := s.envTarget(env)
	return templates.Allowed{Plan: s.allowed(ctx, roles.Plan, t), Apply: s.allowed(ctx, roles.Apply, t), Freeze: s.breakGlassState(ctx, t)}
}

// appTarget is the target of an action on App a.
func (s *Server) appTarget(a appRef) roles.Target {
	return roles.Target{Cluster: a.Cluster(), Environment: s.appEnv(a.Cluster(), a.Namespace), Namespace: a.Namespace, App: a.Name}
}
