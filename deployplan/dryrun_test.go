package deployplan

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestObjectDrift: only an object deploy-web applied has drift (the fields
// other managers set that deploy-web does not own); an object nobody
// applied through deploy-web yet, and a Secret, have none.
func TestObjectDrift(t *testing.T) {
	entry := func(manager, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(fields)}
	}
	obj := func(kind string, entries ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind,
			"metadata": map[string]any{"name": "c", "annotations": map[string]any{"owner": "ops"}}, "data": map[string]any{"a": "1"}}}
		u.SetManagedFields(entries)
		return u
	}
	own := entry(FieldManager, `{"f:data":{"f:a":{}}}`)
	hand := entry("kubectl-annotate", `{"f:metadata":{"f:annotations":{"f:owner":{}}}}`)
	if d := objectDrift(obj("ConfigMap", own, hand), false); len(d) != 1 || d[0].Path != "metadata.annotations.owner" || d[0].Manager != "kubectl-annotate" || d[0].Live != `"ops"` {
		t.Errorf("applied ConfigMap annotated by hand: drift %+v", d)
	}
	if d := objectDrift(obj("ConfigMap", own), false); len(d) != 0 {
		t.Errorf("deploy-web's own fields: drift %+v, want none", d)
	}
	if d := objectDrift(obj("ConfigMap", hand), false); len(d) != 0 {
		t.Errorf("never applied by deploy-web: drift %+v, want none", d)
	}
	if d := objectDrift(obj("Secret", own, hand), false); len(d) != 0 {
		t.Errorf("Secret: drift %+v, want none", d)
	}
	// kubectl scale of a Deployment whose count no one owned: no manager
	// recorded, the count shows it; an HPA's count is not drift.
	scaled := obj("Deployment", entry(FieldManager, `{"f:spec":{"f:selector":{}}}`))
	scaled.SetAPIVersion("apps/v1")
	scaled.Object["spec"] = map[string]any{"replicas": int64(4)}
	if d := objectDrift(scaled, false); len(d) != 1 || d[0].Path != "spec.replicas" || d[0].Live != "4" {
		t.Errorf("kubectl scale: drift %+v, want spec.replicas = 4", d)
	}
	if d := objectDrift(scaled, true); len(d) != 0 {
		t.Errorf("scaled by its HPA: drift %+v, want none", d)
	}
	if d := objectDrift(nil, false); d != nil {
		t.Errorf("absent object: drift %+v", d)
	}
}

// TestMovedBetween: only an object whose resourceVersion moved under the
// dry-run and that would read as changed is read again.
func TestMovedBetween(t *testing.T) {
	obj := func(rv, note string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "a", "resourceVersion": rv, "annotations": map[string]any{"n": note}}}}
		return u
	}
	tests := []struct {
		name      string
		live, dry *unstructured.Unstructured
		err       error
		want      bool
	}{
		{"same version, changed", obj("1", "x"), obj("1", "y"), nil, false},
		{"moved, unchanged", obj("1", "x"), obj("2", "x"), nil, false},
		{"moved and reads as changed", obj("1", "x"), obj("2", "y"), nil, true},
		{"no live object", nil, obj("2", "y"), nil, false},
		{"dry-run failed", obj("1", "x"), nil, errors.New("conflict"), false},
	}
	for _, tt := range tests {
		if got := movedBetween(tt.live, tt.dry, tt.err); got != tt.want {
			t.Errorf("%s: movedBetween = %t, want %t", tt.name, got, tt.want)
		}
	}
}
