package handlers

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/revdiff"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/templates"
)

// envApp reads App name of environment e, live from its cluster: the
// App's resource from the apiserver, its membership checked by the cache.
func (s *Server) envApp(ctx context.Context, e *envconfig.Environment, name string) (*unstructured.Unstructured, error) {
	c := s.envCluster(e)
	if c == nil || !slices.Contains(c.View.Namespaces(), e.Namespace) {
		return nil, notFound("App " + name + " in environment " + e.Name + " (its namespace is not read)")
	}
	ref := kubeview.Ref{Group: c.AppGroup, Kind: c.AppKind, Namespace: e.Namespace, Name: name}
	u, err := c.View.FetchLive(ctx, e.Namespace, name, ref)
	switch {
	case errors.Is(err, kubeview.ErrAppNotFound), errors.Is(err, kubeview.ErrNotInTree):
		return nil, notFound("App " + name + " in environment " + e.Name)
	case err != nil:
		return nil, &httpError{Status: http.StatusBadGateway, Reason: "ClusterError", Public: "could not read App " + name + " of environment " + e.Name, Err: err}
	}
	return comparableApp(u), nil
}

// comparableApp is what two environments' copies of an App are compared
// on: kind, name, labels and spec. The namespace (each environment's own),
// the annotations, the status and the server's fields differ by nature.
func comparableApp(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(u.GetAPIVersion())
	out.SetKind(u.GetKind())
	out.SetName(u.GetName())
	if l := u.GetLabels(); len(l) > 0 {
		out.SetLabels(l)
	}
	if spec, ok := u.Object["spec"]; ok {
		out.Object["spec"] = spec
	}
	return out
}

// envCompare serves GET /environments/{env}/compare/{app}?from=OTHER: App
// app of environment OTHER (left, before) against the same App in env
// (right, after), drawn as the revision diff is.
func (s *Server) envCompare(w http.ResponseWriter, r *http.Request) error {
	er, err := s.envRunner()
	if err != nil {
		return err
	}
	cfg := er.Config()
	to, err := cfg.Env(r.PathValue("env"))
	if err != nil {
		return notFound("environment")
	}
	app := r.PathValue("app")
	p := templates.EnvCompareProps{Layout: s.layout(r, "envs", app+" in "+to.Name), App: app, Env: to.Name, From: r.URL.Query().Get("from")}
	for _, name := range cfg.PromotionOrder() {
		if name != to.Name && s.allowed(r.Context(), roles.View, s.envTarget(name)) {
			p.Envs = append(p.Envs, name)
		}
	}
	from, err := cfg.Env(p.From)
	if err != nil || !slices.Contains(p.Envs, p.From) {
		// Another environment than the person's reads as unknown.
		p.Error = "from: choose one of the other environments to compare with"
		if len(p.Envs) == 0 {
			p.Error = "there is no other environment of yours to compare with"
		}
		return s.render(w, r, http.StatusBadRequest, templates.EnvCompareView(p))
	}
	left, err := s.envApp(r.Context(), from, app)
	if err != nil {
		return err
	}
	right, err := s.envApp(r.Context(), to, app)
	if err != nil {
		return err
	}
	res, err := revdiff.Compare([]*unstructured.Unstructured{left}, []*unstructured.Unstructured{right}, revdiff.Options{})
	if err != nil {
		return err
	}
	rep := revdiff.NewReport(to.Name, from.Name, to.Name, "", res)
	p.Diff = envDiffView(rep, "split", "")
	return s.render(w, r, http.StatusOK, templates.EnvCompareView(p))
}
