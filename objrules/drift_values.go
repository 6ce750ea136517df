package objrules

import (
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/hanzoai/deploy-web/internal/managedfields"
)

// DriftValues returns the fields of obj that drift lists, with their live
// values, as a manifest of their own in which every other field is left
// out: the part of the live object changed outside the operator, which a
// diff can show beside the fields the desired state sets. A list element
// named by its key keeps its key fields, so that a diff pairs it with the
// same element elsewhere; a list reached by index, and a set of scalars, is
// copied whole. A field no longer in obj is left out, and a DriftField not
// made by Drift (no structured path) adds nothing. obj is not mutated and
// shares no map or slice with the result, which is nil when empty.
func DriftValues(obj map[string]any, drift []DriftField) map[string]any {
	if obj == nil {
		return nil
	}
	var out any = map[string]any{}
	for _, d := range drift {
		if len(d.at) == 0 {
			continue
		}
		if merged, ok := driftCopyAt(out, obj, d.at); ok {
			out = merged
		}
	}
	m, _ := out.(map[string]any)
	if len(m) == 0 {
		return nil
	}
	return m
}

// driftCopyAt copies the value at path p of src into dst, a value of the
// same shape, creating maps and list elements on the way; it returns the
// new dst and whether src has a value at p (dst is unchanged when not).
func driftCopyAt(dst, src any, p fieldpath.Path) (any, bool) {
	if len(p) == 0 {
		return runtime.DeepCopyJSONValue(src), true
	}
	pe := p[0]
	switch {
	case pe.FieldName != nil:
		sm, ok := src.(map[string]any)
		if !ok {
			return dst, false
		}
		v, ok := sm[*pe.FieldName]
		if !ok {
			return dst, false
		}
		dm, ok := dst.(map[string]any)
		if !ok {
			dm = map[string]any{}
		}
		child, ok := driftCopyAt(dm[*pe.FieldName], v, p[1:])
		if !ok {
			return dst, false
		}
		dm[*pe.FieldName] = child
		return dm, true
	case pe.Key != nil:
		sl, ok := src.([]any)
		if !ok {
			return dst, false
		}
		el, found := driftFind(sl, pe)
		if !found {
			return dst, false
		}
		dl, _ := dst.([]any)
		if i := driftIndex(dl, pe); i >= 0 {
			child, ok := driftCopyAt(dl[i], el, p[1:])
			if ok {
				dl[i] = child
			}
			return dl, ok
		}
		start := map[string]any{}
		if em, ok := el.(map[string]any); ok {
			for _, f := range *pe.Key {
				if v, ok := em[f.Name]; ok {
					start[f.Name] = runtime.DeepCopyJSONValue(v)
				}
			}
		}
		child, ok := driftCopyAt(start, el, p[1:])
		if !ok {
			return dst, false
		}
		return append(dl, child), true
	case pe.Value != nil, pe.Index != nil:
		// A set of scalars or a list by position: the whole live list.
		sl, ok := src.([]any)
		if !ok {
			return dst, false
		}
		return runtime.DeepCopyJSONValue(sl), true
	}
	return dst, false
}

// driftFind returns the element of l that pe names.
func driftFind(l []any, pe fieldpath.PathElement) (any, bool) {
	if i := driftIndex(l, pe); i >= 0 {
		return l[i], true
	}
	return nil, false
}

// driftIndex returns the index of the element of l that pe names, or -1.
func driftIndex(l []any, pe fieldpath.PathElement) int {
	for i, el := range l {
		if managedfields.Matches(el, pe) {
			return i
		}
	}
	return -1
}
