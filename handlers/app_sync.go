package handlers

import (
	"net/http"

	"github.com/hanzoai/deploy-web/web/templates"
)

// apiSync serves POST /v1/deploy/{name}/sync.
func (s *Server) apiSync(w http.ResponseWriter, r *http.Request) error {
	rel, err := s.releaser()
	if err != nil {
		return err
	}
	ns, name, err := s.resolveApp(r, "")
	if err != nil {
		s.auditRefusal(r, "sync", err)
		return err
	}
	res, err := rel.Sync(r.Context(), ns, name, actor(r))
	if err != nil {
		return releaseError(err)
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// appSync serves POST /apps/{namespace}/{name}/sync.
func (s *Server) appSync(w http.ResponseWriter, r *http.Request) error {
	ns, name, err := s.resolveApp(r, "")
	if err != nil {
		s.auditRefusal(r, "sync", err)
		return err
	}
	rel, err := s.releaser()
	if err != nil {
		return err
	}
	res, err := rel.Sync(r.Context(), ns, name, actor(r))
	if err != nil {
		return releaseError(err)
	}
	a := templates.ActionView{AppNamespace: ns, AppName: name, Kind: "success", Message: "Sync requested at " + res.RequestedAt + ": the operator reconciles " + name + "."}
	return s.render(w, r, http.StatusOK, templates.ActionResult(a))
}
