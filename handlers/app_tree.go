package handlers

import (
	"errors"
	"net/http"

	"github.com/hanzoai/deploy-web/kubeview"
)

// apiTree serves GET /v1/deploy/{name}/tree: the ArgoCD ApplicationTree shape.
func (s *Server) apiTree(w http.ResponseWriter, r *http.Request) error {
	a, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	name := a.Name
	tree, err := a.c.View.Tree(a.Namespace, name)
	if errors.Is(err, kubeview.ErrAppNotFound) {
		return notFound("app " + name)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tree)
	return nil
}
