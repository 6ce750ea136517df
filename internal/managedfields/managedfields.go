// Package managedfields reads the managedFields of Kubernetes objects with
// structured-merge-diff, the apiserver's own library: the one parser of a
// FieldsV1 set (Parse) and the one match of a list element against the
// path element that names it (Matches). kubeview's drift and deployplan's
// pre-apply capture both read managedFields through it.
package managedfields

import (
	"bytes"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Parse returns the field set of a managedFields entry's FieldsV1, nil for
// an entry without one. Path elements of a kind it does not know are left
// out, as the apiserver does.
func Parse(f *metav1.FieldsV1) (*fieldpath.Set, error) {
	if f == nil {
		return nil, nil
	}
	raw := f.GetRawBytes()
	if len(raw) == 0 {
		return nil, nil
	}
	s := &fieldpath.Set{}
	if err := s.FromJSON(bytes.NewReader(raw)); err != nil {
		return nil, fmt.Errorf("managedfields: FieldsV1: %w", err)
	}
	return s, nil
}

// Matches reports whether el, an element of a list of a JSON object, is
// the element pe names: by value (a set of scalars) or by its key fields
// (a map list). An index or a field name matches no element here.
// Numbers compare by value, so int64 1 from the cluster equals 1.0.
func Matches(el any, pe fieldpath.PathElement) bool {
	if pe.Value != nil {
		return value.Equals(value.NewValueInterface(el), *pe.Value)
	}
	m, ok := el.(map[string]any)
	if !ok || pe.Key == nil {
		return false
	}
	for _, f := range *pe.Key {
		v, ok := m[f.Name]
		if !ok || !value.Equals(value.NewValueInterface(v), f.Value) {
			return false
		}
	}
	return true
}
