package deployplan

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/appcr"
)

// ObjectFilter narrows a plan, and the apply of it, to some of the
// rendered objects (Options.Only).
type ObjectFilter struct {
	// Name says what the filter keeps, for the report and the progress
	// ("App api and its objects").
	Name string
	// Keep reports whether a rendered object is planned and applied.
	Keep func(o *unstructured.Unstructured) bool
}

// AppObjects keeps one App (group, kind and name as the render writes
// them, in any namespace the render gives it) and the objects the render
// labels as its own: app.kubernetes.io/instance set to the App's name,
// the label the operator puts on every child.
func AppObjects(group, kind, name string) *ObjectFilter {
	return &ObjectFilter{
		Name: fmt.Sprintf("%s %s and its objects (label %s=%s)", kind, name, appcr.InstanceLabel, name),
		Keep: func(o *unstructured.Unstructured) bool {
			gvk := o.GroupVersionKind()
			if gvk.Group == group && gvk.Kind == kind && o.GetName() == name {
				return true
			}
			return o.GetLabels()[appcr.InstanceLabel] == name
		},
	}
}

// only returns r with the objects f keeps (r itself when f is nil). The
// digest, the checks, the dry-run and the apply then see those alone, so
// a plan and the apply of it agree on what they cover.
func (f *ObjectFilter) only(r *Rendered) (*Rendered, error) {
	if f == nil {
		return r, nil
	}
	out := *r
	out.Objects, out.outside = nil, nil
	for _, o := range r.Objects {
		if f.Keep(o) {
			out.Objects = append(out.Objects, o)
		} else {
			out.outside = append(out.outside, o)
		}
	}
	if len(out.Objects) == 0 {
		return nil, fmt.Errorf("deployplan: the render of %s holds no object for %s: check the App's name and that the environment renders it", r.Origin, f.Name)
	}
	return &out, nil
}

// name is what f keeps ("" for no filter: the whole render).
func (f *ObjectFilter) name() string {
	if f == nil {
		return ""
	}
	return f.Name
}

// checkReviewedScope refuses the apply of a reviewed plan narrowed
// otherwise than the apply: a plan of one App's objects was not a review of
// the others, and the other way round.
func checkReviewedScope(rev *Reviewed, only *ObjectFilter) error {
	if rev == nil || rev.Only == only.name() {
		return nil
	}
	if rev.Only == "" {
		return &RefusalError{Reason: fmt.Sprintf("plan %s covers the whole environment, the apply %s only: plan %s alone first; nothing was touched", rev.PlanID, only.name(), only.name())}
	}
	return &RefusalError{Reason: fmt.Sprintf("plan %s covers %s only, not what this apply covers: apply it by syncing that App, or plan the whole environment first; nothing was touched", rev.PlanID, rev.Only)}
}
