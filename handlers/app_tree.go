package handlers

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/kubeview"
)

// apiApp resolves the {name} of an API route to one App: ?namespace= picks
// one when the name exists in several platform namespaces (409 otherwise).
func (s *Server) apiApp(r *http.Request, hintNamespace string) (*unstructured.Unstructured, error) {
	name := r.PathValue("name")
	ns := r.URL.Query().Get("namespace")
	if ns != "" && !slices.Contains(s.view.Namespaces(), ns) {
		return nil, badRequest("namespace: %q is not a platform namespace", ns)
	}
	app, err := s.view.LookupApp(name, ns)
	var amb *kubeview.AmbiguousAppError
	switch {
	case errors.As(err, &amb) && hintNamespace != "" && slices.Contains(amb.Namespaces, hintNamespace):
		return s.view.LookupApp(name, hintNamespace)
	case errors.As(err, &amb):
		return nil, &httpError{Status: http.StatusConflict, Reason: "Ambiguous",
			Public: "app " + name + " exists in namespaces " + strings.Join(amb.Namespaces, ", ") + ": add ?namespace= to choose one"}
	case errors.Is(err, kubeview.ErrAppNotFound):
		return nil, notFound("app " + name)
	}
	return app, err
}

// apiTree serves GET /v1/deploy/{name}/tree: the ArgoCD ApplicationTree shape.
func (s *Server) apiTree(w http.ResponseWriter, r *http.Request) error {
	app, err := s.apiApp(r, "")
	if err != nil {
		return err
	}
	tree, err := s.view.Tree(app.GetNamespace(), app.GetName())
	if errors.Is(err, kubeview.ErrAppNotFound) {
		return notFound("app " + app.GetName())
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tree)
	return nil
}

// resourceResponse is the JSON of GET /v1/deploy/{name}/resource/{ref}.
type resourceResponse struct {
	Ref           string         `json:"ref"`
	Live          map[string]any `json:"live"`
	DesiredSource string         `json:"desiredSource"`
	Git           *GitSource     `json:"git,omitempty"`
	Desired       map[string]any `json:"desired,omitempty"`
	Diff          diffJSON       `json:"diff"`
	// Drift lists the fields changed outside the App's operator (empty
	// when none).
	Drift []kubeview.DriftField `json:"drift"`
}

type diffJSON struct {
	Equal   bool `json:"equal"`
	Added   int  `json:"added"`
	Removed int  `json:"removed"`
	// Unified is the diff in unified format with 3 lines of context.
	Unified string `json:"unified,omitempty"`
}

// apiResource serves GET /v1/deploy/{name}/resource/{ref}.
func (s *Server) apiResource(w http.ResponseWriter, r *http.Request) error {
	ref, err := s.parseRef(r.PathValue("ref"))
	if err != nil {
		return err
	}
	app, err := s.apiApp(r, ref.Namespace)
	if err != nil {
		return err
	}
	d, err := s.loadResource(app.GetNamespace(), app.GetName(), ref)
	if err != nil {
		return err
	}
	resp := resourceResponse{Ref: ref.String(), Live: d.Live, DesiredSource: d.DesiredSource, Git: d.Git, Desired: d.Desired,
		Diff: diffJSON{Equal: d.Diff.Diff.Equal, Added: d.Diff.Diff.Added, Removed: d.Diff.Diff.Removed}, Drift: d.Drift}
	if !d.Diff.NoDesired && !d.Diff.Diff.Equal {
		var b strings.Builder
		for _, h := range d.Diff.Diff.Hunks(3) {
			b.WriteString(h.Header() + "\n")
			for _, u := range h.Unified() {
				sign := " "
				switch u.Op.String() {
				case "delete":
					sign = "-"
				case "insert":
					sign = "+"
				}
				b.WriteString(sign + u.Text + "\n")
			}
		}
		resp.Diff.Unified = b.String()
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
