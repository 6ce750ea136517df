package handlers

import (
	"net/http"

	"github.com/hanzoai/deploy-web/web/templates"
)

// apiSync serves POST /v1/deploy/{name}/sync.
func (s *Server) apiSync(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.releaser(nil); err != nil {
		return err
	}
	app, err := s.resolveApp(r, "")
	if err != nil {
		s.auditRefusal(r, "sync", err)
		return err
	}
	rel, err := s.releaser(app.c)
	if err != nil {
		return err
	}
	res, err := rel.Sync(r.Context(), app.Namespace, app.Name, actor(r))
	if err != nil {
		return releaseError(err)
	}
	writeJSON(w, http.StatusOK, syncResponse{Cluster: app.Cluster(), SyncResult: res})
	return nil
}

// appSync serves POST /clusters/{cluster}/apps/{namespace}/{name}/sync.
func (s *Server) appSync(w http.ResponseWriter, r *http.Request) error {
	app, err := s.resolveApp(r, "")
	if err != nil {
		s.auditRefusal(r, "sync", err)
		return err
	}
	ns, name := app.Namespace, app.Name
	rel, err := s.releaser(app.c)
	if err != nil {
		return err
	}
	res, err := rel.Sync(r.Context(), ns, name, actor(r))
	if err != nil {
		return releaseError(err)
	}
	a := templates.ActionView{AppCluster: app.Cluster(), AppNamespace: ns, AppName: name, Kind: "success", Message: "Sync requested at " + res.RequestedAt + ": the operator reconciles " + name + "."}
	return s.render(w, r, http.StatusOK, templates.ActionResult(a))
}
