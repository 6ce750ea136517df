package handlers

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/web/paths"
)

// appRef is the App a route acts on, and the cluster it lives in.
type appRef struct {
	c               *Cluster
	Namespace, Name string
}

// Cluster is the App's cluster's name.
func (a appRef) Cluster() string { return a.c.Name }

// resolveApp is the one resolver of the App a route acts on; every app
// route calls it first.
//
// A page route names the App by {cluster}/{namespace}/{name}: 404 unless
// the cluster is configured, the namespace is one of its platform
// namespaces and the App is in it.
//
// An API route names it by {name}: ?cluster= and ?namespace= pick one when
// the name exists in several clusters or platform namespaces (404 for a
// cluster that is not configured, 400 for a namespace that is no platform
// one, 409 while it stays ambiguous, listing the candidates);
// hintNamespace, when it is one of them, picks in its place (the namespace
// of a resource ref).
func (s *Server) resolveApp(r *http.Request, hintNamespace string) (appRef, error) {
	if ns := r.PathValue("namespace"); ns != "" {
		c := s.cluster(r.PathValue("cluster"))
		name := r.PathValue("name")
		if c == nil {
			return appRef{}, notFound("cluster " + r.PathValue("cluster"))
		}
		if err := checkApp(c, ns, name); err != nil {
			return appRef{}, err
		}
		return appRef{c, ns, name}, nil
	}
	return s.apiApp(r, hintNamespace)
}

// candidate is an App of the requested name in one cluster and namespace.
type candidate struct {
	c  *Cluster
	ns string
}

func (c candidate) String() string { return c.c.Name + "/" + c.ns }

// apiApp resolves the {name} of an API route (see resolveApp).
func (s *Server) apiApp(r *http.Request, hintNamespace string) (appRef, error) {
	name := r.PathValue("name")
	clusters := s.clusters
	cn := r.URL.Query().Get("cluster")
	if cn == "" && s.multiCluster() && !safeMethod(r.Method) {
		// A write never goes where the caches say the App is: a cluster
		// unreachable or not synced yet has an empty cache, and the write
		// would land in another cluster's App of the same name.
		return appRef{}, badRequest("cluster: with several clusters (%s) a write must name its cluster: add ?cluster=", strings.Join(s.clusterNames(), ", "))
	}
	if cn != "" {
		c := s.cluster(cn)
		if c == nil {
			return appRef{}, notFound("cluster " + cn)
		}
		clusters = []*Cluster{c}
	}
	ns := r.URL.Query().Get("namespace")
	if ns != "" && !slices.ContainsFunc(clusters, func(c *Cluster) bool { return slices.Contains(c.View.Namespaces(), ns) }) {
		return appRef{}, badRequest("namespace: %q is not a platform namespace", ns)
	}
	var found []candidate
	for _, c := range clusters {
		if ns != "" && !slices.Contains(c.View.Namespaces(), ns) {
			continue
		}
		app, err := c.View.LookupApp(ns, name)
		var amb *kubeview.AmbiguousAppError
		switch {
		case errors.As(err, &amb):
			for _, n := range amb.Namespaces {
				found = append(found, candidate{c, n})
			}
		case errors.Is(err, kubeview.ErrAppNotFound):
		case err != nil:
			return appRef{}, err
		default:
			found = append(found, candidate{c, app.GetNamespace()})
		}
	}
	if len(found) > 1 && hintNamespace != "" {
		var hinted []candidate
		for _, f := range found {
			if f.ns == hintNamespace {
				hinted = append(hinted, f)
			}
		}
		if len(hinted) > 0 {
			found = hinted
		}
	}
	switch {
	case len(found) == 0:
		return appRef{}, notFound("app " + name)
	case len(found) > 1:
		return appRef{}, ambiguous(name, found)
	}
	return appRef{found[0].c, found[0].ns, name}, nil
}

// ambiguous is the 409 of a name found in several places: in one cluster
// it names the namespaces (as before clusters), else cluster/namespace.
func ambiguous(name string, found []candidate) error {
	oneCluster := !slices.ContainsFunc(found, func(f candidate) bool { return f.c != found[0].c })
	var where []string
	for _, f := range found {
		if oneCluster {
			where = append(where, f.ns)
		} else {
			where = append(where, f.String())
		}
	}
	if oneCluster {
		return &httpError{Status: http.StatusConflict, Reason: "Ambiguous",
			Public: "app " + name + " exists in namespaces " + strings.Join(where, ", ") + ": add ?namespace= to choose one"}
	}
	return &httpError{Status: http.StatusConflict, Reason: "Ambiguous",
		Public: "app " + name + " exists in clusters/namespaces " + strings.Join(where, ", ") + ": add ?cluster= and ?namespace= to choose one"}
}

// checkApp answers 404 unless ns/name is an App in a platform namespace of c.
func checkApp(c *Cluster, ns, name string) error {
	if !slices.Contains(c.View.Namespaces(), ns) {
		return notFound("app " + ns + "/" + name)
	}
	if _, err := c.View.LookupApp(ns, name); err != nil {
		if errors.Is(err, kubeview.ErrAppNotFound) {
			return notFound("app " + ns + "/" + name)
		}
		return err
	}
	return nil
}

// legacyApp serves the single-cluster app URLs, /apps/{namespace}/{name}
// and everything under it: with one cluster a permanent redirect to the
// same page under /clusters/{cluster}/ (308 keeps a POST a POST); with
// several, the redirect when exactly one cluster has the App, 404 when
// none does, 409 naming the clusters when several do.
func (s *Server) legacyApp(w http.ResponseWriter, r *http.Request) error {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	target := s.clusters[0]
	if s.multiCluster() && !safeMethod(r.Method) {
		// Redirecting a write means guessing its cluster from the caches
		// (an unreachable cluster's is empty): refuse instead.
		return &httpError{Status: http.StatusConflict, Reason: "ClusterRequired",
			Public: "with several clusters (" + strings.Join(s.clusterNames(), ", ") + ") a write to app " + ns + "/" + name + " must use its cluster's URL, /clusters/{cluster}/apps/" + ns + "/" + name + "/..."}
	}
	if s.multiCluster() {
		var found []candidate
		for _, c := range s.clusters {
			if checkApp(c, ns, name) == nil {
				found = append(found, candidate{c, ns})
			}
		}
		switch {
		case len(found) == 0:
			return notFound("app " + ns + "/" + name)
		case len(found) > 1:
			var names []string
			for _, f := range found {
				names = append(names, f.c.Name)
			}
			return &httpError{Status: http.StatusConflict, Reason: "Ambiguous",
				Public: "app " + ns + "/" + name + " exists in clusters " + strings.Join(names, ", ") + ": open it from the application list"}
		}
		target = found[0].c
	}
	// The rest of the path, as sent (escaped): /apps/ns/name/rest...
	rest := ""
	if parts := strings.SplitN(r.URL.EscapedPath(), "/", 5); len(parts) == 5 {
		rest = "/" + parts[4]
	}
	u := paths.App(target.Name, ns, name) + rest
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	status := http.StatusMovedPermanently
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		status = http.StatusPermanentRedirect
	}
	http.Redirect(w, r, u, status)
	return nil
}

// safeMethod reports whether a request only reads.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// envTargets reports whether an environment of the plan engine deploys to
// cluster c: with one cluster every environment does (as before
// clusters); with several, only one mapped to c by Options.EnvClusters.
func (s *Server) envTargets(env string, c *Cluster) bool {
	if !s.multiCluster() {
		return true
	}
	return s.opts.EnvClusters[env] == c.Name
}
