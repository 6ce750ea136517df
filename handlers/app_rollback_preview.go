package handlers

import (
	"cmp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/web/templates"
)

// desiredObjects is the desired-state index's list of an environment's
// rendered objects (envsource.Index), for the confirmation's preview.
type desiredObjects interface {
	Objects(env string) []*unstructured.Unstructured
}

// catalogMovePreview is what the confirmation of a rollback of App a to
// the commit tag version says moves with it: the environment's catalog, if
// in commit mode, and the other Apps its last render runs at the same
// commit as a (their tags name one commit: one is a prefix of the other).
// The POST reads the repository and answers with what moved.
func (s *Server) catalogMovePreview(a appRef, g *gitRendered, version string) *templates.CatalogMovePreview {
	p, _ := g.env.CatalogInRepo()
	out := &templates.CatalogMovePreview{Env: g.env.Name, Catalog: p, Commit: version}
	objs, ok := s.opts.Desired.(desiredObjects)
	if !ok {
		return out
	}
	image, _, _ := unstructured.NestedString(g.desired.Object.Object, "spec", "image")
	tag := appcr.ImageTag(image)
	for _, o := range objs.Objects(g.env.Name) {
		gvk := o.GroupVersionKind()
		if gvk.Group != a.c.AppGroup || gvk.Kind != a.c.AppKind || o.GetName() == a.Name && cmp.Or(o.GetNamespace(), g.env.Namespace) == a.Namespace {
			continue
		}
		img, _, _ := unstructured.NestedString(o.Object, "spec", "image")
		if t := appcr.ImageTag(img); deployplan.ValidCommit(t) && deployplan.ValidCommit(tag) && (strings.HasPrefix(t, tag) || strings.HasPrefix(tag, t)) {
			out.Apps = append(out.Apps, cmp.Or(o.GetNamespace(), g.env.Namespace)+"/"+o.GetName())
		}
	}
	slices.Sort(out.Apps)
	return out
}
