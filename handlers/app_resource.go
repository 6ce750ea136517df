package handlers

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/hanzoai/deploy-web/diffrender"
	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/web/templates"
)

// Desired sources of a resource's diff.
const (
	desiredGit         = "git"
	desiredLastApplied = "last-applied"
	desiredNone        = "none"
)

// GitSource says where a git-sourced desired manifest comes from.
type GitSource struct {
	Environment string `json:"environment"`
	Repo        string `json:"repo,omitempty"`
	Ref         string `json:"ref,omitempty"`
	Commit      string `json:"commit,omitempty"`
	Path        string `json:"path"`
}

// resourceNotFound is the one answer for an object that is not in the app's
// tree, does not exist, or is a Secret: no existence oracle.
func resourceNotFound() *httpError { return notFound("resource") }

// parseRef validates a ref from the URL (pure; see kubeview.ParseRef). The
// App kind of any configured cluster is accepted (the ref must still be in
// the resolved app's tree).
func (s *Server) parseRef(raw string) (kubeview.Ref, error) {
	var ref kubeview.Ref
	var err error
	for _, c := range s.clusters {
		ref, err = kubeview.ParseRef(raw, c.AppGroup, c.AppKind)
		if !errors.Is(err, kubeview.ErrUnknownKind) {
			break
		}
	}
	switch {
	case err == nil:
		return ref, nil
	case errors.Is(err, kubeview.ErrUnknownKind) && isSecretRef(raw):
		return kubeview.Ref{}, resourceNotFound()
	case errors.Is(err, kubeview.ErrUnknownKind):
		return kubeview.Ref{}, badRequest("ref: kind is not one deploy-web shows")
	}
	return kubeview.Ref{}, badRequest("ref: want group:kind:namespace:name")
}

// isSecretRef reports whether a ref names a core Secret.
func isSecretRef(raw string) bool {
	parts := strings.SplitN(raw, ":", 4)
	return len(parts) == 4 && parts[0] == "" && parts[1] == "Secret"
}

// resourceDetail is everything known about one object of an app's tree.
type resourceDetail struct {
	ref           kubeview.Ref
	Node          kubeview.TreeNode
	Live          map[string]any
	DesiredSource string
	Desired       map[string]any
	Git           *GitSource
	Diff          diffrender.ManifestDiff
	// Drift lists the fields changed outside the App's operator (never nil).
	Drift []objrules.DriftField
	// DriftInDiff: Diff shows the drifted fields on the live side too.
	DriftInDiff bool
}

// includeDrift decides whether a diff shows the fields changed outside the
// operator (?drift=): "1" or "true" asks for them, "0" or "false" not,
// anything else (none) takes def. An object without drift has none to show.
func includeDrift(param string, drifted, def bool) bool {
	switch param {
	case "1", "true":
		return drifted
	case "0", "false":
		return false
	}
	return drifted && def
}

// loadResource finds a ref in an app's tree, reads the object from the
// cluster and computes its diff, with the
// fields changed outside the operator when withDrift, given whether the
// object has any, says so.
func (s *Server) loadResource(ctx context.Context, a appRef, ref kubeview.Ref, withDrift func(drifted bool) bool) (resourceDetail, error) {
	obj, node, err := a.c.View.Object(ctx, a.Namespace, a.Name, ref)
	if errors.Is(err, kubeview.ErrNotInTree) || errors.Is(err, kubeview.ErrAppNotFound) {
		return resourceDetail{}, resourceNotFound()
	}
	if err != nil {
		return resourceDetail{}, &httpError{Status: http.StatusBadGateway, Reason: "ClusterError", Public: "could not read the object from the cluster", Err: err}
	}
	d := resourceDetail{ref: ref, Node: node, Live: obj.Object, DesiredSource: desiredNone, Drift: a.c.View.DriftOf(node.UID)}
	if d.Drift == nil {
		d.Drift = []objrules.DriftField{}
	}
	// The desired state: an environment's git source first, then the
	// last-applied annotation, else none. The diff has the same shape.
	if s.opts.Desired != nil {
		if g, ok := s.opts.Desired.Lookup(ref.Group, ref.Kind, ref.Namespace, ref.Name); ok && s.envTargets(g.Environment, a.c) {
			d.Desired, d.DesiredSource = g.Object.Object, desiredGit
			d.Git = &GitSource{Environment: g.Environment, Repo: g.Repo, Ref: g.Ref, Commit: g.Commit, Path: g.Path}
		}
	}
	if d.Desired == nil {
		desired, err := diffrender.LastApplied(obj.Object)
		if err != nil {
			s.log.Warn("unreadable last-applied annotation", "ref", ref.String(), "err", err)
		}
		if desired != nil {
			d.Desired, d.DesiredSource = desired, desiredLastApplied
		}
	}
	var extra map[string]any
	if d.DriftInDiff = withDrift(len(d.Drift) > 0) && d.Desired != nil; d.DriftInDiff {
		extra = objrules.DriftValues(obj.Object, d.Drift)
	}
	d.Diff, err = diffrender.ManifestsIncluding(d.Desired, obj.Object, extra)
	if errors.Is(err, diffrender.ErrSecret) {
		return resourceDetail{}, resourceNotFound()
	}
	if err != nil {
		return resourceDetail{}, err
	}
	return d, nil
}

// appResource serves GET /clusters/{cluster}/apps/{namespace}/{name}/resource/{ref}:
// the resource panel beside the tree (the panel alone for HTMX).
func (s *Server) appResource(w http.ResponseWriter, r *http.Request) error {
	a, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	ref, err := s.parseRef(r.PathValue("ref"))
	if err != nil {
		return err
	}
	name := a.Name
	// The panel's diff shows the fields changed outside the operator
	// unless ?drift=0.
	q := r.URL.Query()
	d, err := s.loadResource(r.Context(), a, ref, func(drifted bool) bool { return includeDrift(q.Get("drift"), drifted, true) })
	if err != nil {
		return err
	}
	panel, err := s.resourcePanel(r, a, d)
	if err != nil {
		return err
	}
	if isHTMX(r) && r.Header.Get("HX-Target") == "panel" {
		return s.render(w, r, http.StatusOK, templates.ResourcePanelView(panel))
	}
	live, _, err := s.appLive(r, a, ref.String())
	if err != nil {
		return err
	}
	p, err := s.appView(r, a, d.Node.Name+" · "+name, live)
	if err != nil {
		return err
	}
	p.Panel = &panel
	return s.render(w, r, http.StatusOK, templates.AppView(p))
}

// resourcePanel builds the panel's props for the requested tab.
func (s *Server) resourcePanel(r *http.Request, a appRef, d resourceDetail) (templates.ResourcePanel, error) {
	q := r.URL.Query()
	p := templates.ResourcePanel{
		AppCluster: a.Cluster(), AppNamespace: a.Namespace, AppName: a.Name, Node: d.Node, Tab: q.Get("tab"), DesiredSource: d.DesiredSource, Now: s.opts.Now(),
		Drift: d.Drift, DriftInDiff: d.DriftInDiff, Operations: s.panelOperations(r.Context(), a, d.ref),
	}
	if d.Git != nil {
		p.GitOrigin = d.Git.Environment + ": " + d.Git.Repo + "@" + d.Git.Ref + ":" + d.Git.Path + " (" + textfmt.ShortSHA(d.Git.Commit) + ")"
		if d.Git.Repo == "" {
			p.GitOrigin = d.Git.Environment + ": " + d.Git.Path
		}
	}
	if len(d.Node.ParentRefs) > 0 {
		p.Owner = d.Node.ParentRefs[0]
	}
	switch p.Tab {
	case "manifest", "diff", "events":
	default:
		p.Tab = "summary"
	}
	p.Diff = resourceDiffView(d.Diff, q.Get("mode"), q.Get("context") != "full")
	switch p.Tab {
	case "manifest":
		p.ManagedFields = q.Get("managed") == "1"
		text := d.Diff.LiveFullYAML
		if p.ManagedFields {
			// The cache drops managedFields: read this one object afresh.
			u, err := a.c.View.FetchLive(r.Context(), a.Namespace, a.Name, d.ref)
			if err != nil {
				return p, &httpError{Status: http.StatusBadGateway, Reason: "ClusterError", Public: "could not read the object from the cluster", Err: err}
			}
			delete(u.Object, "status")
			if text, err = diffrender.YAML(u.Object); err != nil {
				return p, err
			}
		}
		p.ManifestHTML = highlightYAML(text)
	case "events":
		release, refusal := s.eventReads.acquire(subjectOf(r.Context()))
		if release == nil {
			return p, tooMany(refusal)
		}
		defer release()
		evs, err := a.c.View.Events(r.Context(), d.Node.Namespace, d.Node.UID)
		if err != nil {
			return p, &httpError{Status: http.StatusBadGateway, Reason: "ClusterError", Public: "could not read the events from the cluster", Err: err}
		}
		for _, e := range evs.Items {
			p.Events = append(p.Events, templates.EventRow{Type: e.Type, Reason: e.Reason, Message: e.Message, Count: e.Count, Last: e.Last})
		}
		p.EventsTotal, p.EventsCapped, p.EventsIncomplete = evs.Total, evs.Capped, evs.Incomplete
	}
	return p, nil
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
	Drift []objrules.DriftField `json:"drift"`
}

// diffJSON reads as every diff does, from the live object to the desired
// state: Added counts the lines only the desired state has (a sync adds
// them), Removed those only the live object has.
type diffJSON struct {
	Equal   bool `json:"equal"`
	Added   int  `json:"added"`
	Removed int  `json:"removed"`
	// IncludesDrift: the diff shows the fields changed outside the operator
	// on the live side (?drift=true).
	IncludesDrift bool `json:"includesDrift"`
	// Unified is the diff in unified format with 3 lines of context, from
	// the live object ("-") to the desired state ("+").
	Unified string `json:"unified,omitempty"`
}

// apiResource serves GET /v1/deploy/{name}/resource/{ref}.
func (s *Server) apiResource(w http.ResponseWriter, r *http.Request) error {
	ref, err := s.parseRef(r.PathValue("ref"))
	if err != nil {
		return err
	}
	a, err := s.resolveApp(r, ref.Namespace)
	if err != nil {
		return err
	}
	// The JSON's diff is of the desired fields only, unless ?drift=true.
	q := r.URL.Query()
	d, err := s.loadResource(r.Context(), a, ref, func(drifted bool) bool { return includeDrift(q.Get("drift"), drifted, false) })
	if err != nil {
		return err
	}
	resp := resourceResponse{Ref: ref.String(), Live: d.Live, DesiredSource: d.DesiredSource, Git: d.Git, Desired: d.Desired,
		Diff: diffJSON{Equal: d.Diff.Diff.Equal, Added: d.Diff.Diff.Added, Removed: d.Diff.Diff.Removed, IncludesDrift: d.DriftInDiff}, Drift: d.Drift}
	if !d.Diff.NoDesired {
		resp.Diff.Unified = d.Diff.Diff.UnifiedText(3)
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
