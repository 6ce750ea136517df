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

// appFromPath checks the {namespace}/{name} of a page route.
func (s *Server) appFromPath(r *http.Request) (string, string, error) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	if err := s.checkApp(ns, name); err != nil {
		return "", "", err
	}
	return ns, name, nil
}

// checkApp answers 404 unless ns/name is an App in a platform namespace.
func (s *Server) checkApp(ns, name string) error {
	if !slices.Contains(s.view.Namespaces(), ns) {
		return notFound("app " + ns + "/" + name)
	}
	if _, err := s.view.LookupApp(name, ns); err != nil {
		if errors.Is(err, kubeview.ErrAppNotFound) {
			return notFound("app " + ns + "/" + name)
		}
		return err
	}
	return nil
}
