package handlers

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/hanzoai/deploy-web/diffrender"
	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/kubeview"
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

// parseRef validates a ref from the URL (pure; see kubeview.ParseRef).
func (s *Server) parseRef(raw string) (kubeview.Ref, error) {
	ref, err := kubeview.ParseRef(raw, s.opts.AppGroup, s.opts.AppKind)
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
	Drift []kubeview.DriftField
}

// loadResource finds a ref in an app's tree, reads the object from the
// cluster and computes its diff.
func (s *Server) loadResource(ctx context.Context, ns, app string, ref kubeview.Ref) (resourceDetail, error) {
	obj, node, err := s.view.Object(ctx, ns, app, ref)
	if errors.Is(err, kubeview.ErrNotInTree) || errors.Is(err, kubeview.ErrAppNotFound) {
		return resourceDetail{}, resourceNotFound()
	}
	if err != nil {
		return resourceDetail{}, &httpError{Status: http.StatusBadGateway, Reason: "ClusterError", Public: "could not read the object from the cluster", Err: err}
	}
	d := resourceDetail{ref: ref, Node: node, Live: obj.Object, DesiredSource: desiredNone, Drift: s.view.DriftOf(node.UID)}
	if d.Drift == nil {
		d.Drift = []kubeview.DriftField{}
	}
	// The desired state: an environment's git source first, then the
	// last-applied annotation, else none. The diff has the same shape.
	if s.opts.Desired != nil {
		if g, ok := s.opts.Desired.Lookup(ref.Group, ref.Kind, ref.Namespace, ref.Name); ok {
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
	d.Diff, err = diffrender.Manifests(d.Desired, obj.Object)
	if errors.Is(err, diffrender.ErrSecret) {
		return resourceDetail{}, resourceNotFound()
	}
	if err != nil {
		return resourceDetail{}, err
	}
	return d, nil
}

// appResource serves GET /apps/{namespace}/{name}/resource/{ref}: the
// resource panel beside the tree (the panel alone for HTMX).
func (s *Server) appResource(w http.ResponseWriter, r *http.Request) error {
	ns, name, err := s.resolveApp(r, "")
	if err != nil {
		return err
	}
	ref, err := s.parseRef(r.PathValue("ref"))
	if err != nil {
		return err
	}
	d, err := s.loadResource(r.Context(), ns, name, ref)
	if err != nil {
		return err
	}
	panel, err := s.resourcePanel(r, ns, name, d)
	if err != nil {
		return err
	}
	if isHTMX(r) && r.Header.Get("HX-Target") == "panel" {
		return s.render(w, r, http.StatusOK, templates.ResourcePanelView(panel))
	}
	live, _, err := s.appLive(r, ns, name, ref.String())
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, templates.AppView(templates.AppPage{Layout: s.layout(r, "apps", d.Node.Name+" · "+name), Live: live, Panel: &panel}))
}

// resourcePanel builds the panel's props for the requested tab.
func (s *Server) resourcePanel(r *http.Request, ns, app string, d resourceDetail) (templates.ResourcePanel, error) {
	q := r.URL.Query()
	p := templates.ResourcePanel{
		AppNamespace: ns, AppName: app, Node: d.Node, Tab: q.Get("tab"), DesiredSource: d.DesiredSource, Now: s.opts.Now(),
		Drift: d.Drift,
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
	p.Diff = diffView(d.Diff, q.Get("mode"), q.Get("context") != "full")
	switch p.Tab {
	case "manifest":
		p.ManagedFields = q.Get("managed") == "1"
		text := d.Diff.LiveFullYAML
		if p.ManagedFields {
			// The cache drops managedFields: read this one object afresh.
			u, err := s.view.FetchLive(r.Context(), ns, app, d.ref)
			if err != nil {
				return p, &httpError{Status: http.StatusBadGateway, Reason: "ClusterError", Public: "could not read the object from the cluster", Err: err}
			}
			delete(u.Object, "status")
			if text, err = diffrender.YAML(u.Object); err != nil {
				return p, err
			}
		}
		c, err := highlightYAML(text)
		if err != nil {
			return p, err
		}
		p.ManifestHTML = c
	case "events":
		evs, err := s.view.Events(r.Context(), d.Node.Namespace, d.Node.UID)
		if err != nil {
			return p, &httpError{Status: http.StatusBadGateway, Reason: "ClusterError", Public: "could not read the events from the cluster", Err: err}
		}
		for _, e := range evs {
			p.Events = append(p.Events, templates.EventRow{Type: e.Type, Reason: e.Reason, Message: e.Message, Count: e.Count, Last: e.Last})
		}
	}
	return p, nil
}

// diffView turns a manifest diff into rows for the template.
func diffView(md diffrender.ManifestDiff, mode string, compact bool) templates.DiffView {
	v := templates.DiffView{NoDesired: md.NoDesired, Equal: md.Diff.Equal, Added: md.Diff.Added, Removed: md.Diff.Removed, Mode: "split", Compact: compact}
	if mode == "unified" {
		v.Mode = "unified"
	}
	if md.NoDesired {
		return v
	}
	var hunks []diffrender.Hunk
	if compact {
		hunks = md.Diff.Hunks(3)
	} else if len(md.Diff.Rows) > 0 {
		hunks = []diffrender.Hunk{{Rows: md.Diff.Rows}}
	}
	for _, h := range hunks {
		dh := templates.DiffHunk{Skipped: h.Skipped}
		if v.Mode == "unified" {
			for _, u := range h.Unified() {
				row := templates.DiffRow{Op: u.Op.String(), LeftNum: u.LeftNum, RightNum: u.RightNum, UnifiedSign: " "}
				switch u.Op {
				case diffrender.Delete:
					row.UnifiedSign, row.LeftText = "−", u.Text
				case diffrender.Insert:
					row.UnifiedSign, row.RightText = "+", u.Text
				default:
					row.LeftText = u.Text
				}
				dh.Rows = append(dh.Rows, row)
			}
		} else {
			for _, r := range h.Rows {
				dh.Rows = append(dh.Rows, templates.DiffRow{Op: r.Op.String(), LeftNum: r.Left.Num, LeftText: r.Left.Text, RightNum: r.Right.Num, RightText: r.Right.Text})
			}
		}
		v.Hunks = append(v.Hunks, dh)
	}
	return v
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
	ns, name, err := s.resolveApp(r, ref.Namespace)
	if err != nil {
		return err
	}
	d, err := s.loadResource(r.Context(), ns, name, ref)
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
