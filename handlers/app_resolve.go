package handlers

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/hanzoai/deploy-web/kubeview"
)

// resolveApp is the one resolver of the App a route acts on; every app
// route calls it first.
//
// A page route names the App by {namespace}/{name}: 404 unless the
// namespace is a platform namespace and the App is in it.
//
// An API route names it by {name}: ?namespace= picks one when the name
// exists in several platform namespaces (400 for a namespace that is not a
// platform one, 409 while it stays ambiguous); hintNamespace, when it is one
// of them, picks in its place (the namespace of a resource ref).
func (s *Server) resolveApp(r *http.Request, hintNamespace string) (namespace, name string, err error) {
	if ns := r.PathValue("namespace"); ns != "" {
		name := r.PathValue("name")
		if err := s.checkApp(ns, name); err != nil {
			return "", "", err
		}
		return ns, name, nil
	}
	return s.apiApp(r, hintNamespace)
}

// apiApp resolves the {name} of an API route (see resolveApp).
func (s *Server) apiApp(r *http.Request, hintNamespace string) (string, string, error) {
	name := r.PathValue("name")
	ns := r.URL.Query().Get("namespace")
	if ns != "" && !slices.Contains(s.fleet.Namespaces(), ns) {
		return "", "", badRequest("namespace: %q is not a platform namespace", ns)
	}
	app, err := s.fleet.LookupApp(ns, name)
	var amb *kubeview.AmbiguousAppError
	switch {
	case errors.As(err, &amb) && hintNamespace != "" && slices.Contains(amb.Namespaces, hintNamespace):
		app, err = s.fleet.LookupApp(hintNamespace, name)
	case errors.As(err, &amb):
		return "", "", &httpError{Status: http.StatusConflict, Reason: "Ambiguous",
			Public: "app " + name + " exists in namespaces " + strings.Join(amb.Namespaces, ", ") + ": add ?namespace= to choose one"}
	case errors.Is(err, kubeview.ErrAppNotFound):
		return "", "", notFound("app " + name)
	}
	if err != nil {
		return "", "", err
	}
	return app.GetNamespace(), app.GetName(), nil
}

// checkApp answers 404 unless ns/name is an App in a platform namespace.
func (s *Server) checkApp(ns, name string) error {
	if !slices.Contains(s.fleet.Namespaces(), ns) {
		return notFound("app " + ns + "/" + name)
	}
	if _, err := s.fleet.LookupApp(ns, name); err != nil {
		if errors.Is(err, kubeview.ErrAppNotFound) {
			return notFound("app " + ns + "/" + name)
		}
		return err
	}
	return nil
}
