package deployplan

import (
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
	if d := objectDrift(obj("ConfigMap", own, hand)); len(d) != 1 || d[0].Path != "metadata.annotations.owner" || d[0].Manager != "kubectl-annotate" || d[0].Live != `"ops"` {
		t.Errorf("applied ConfigMap annotated by hand: drift %+v", d)
	}
	if d := objectDrift(obj("ConfigMap", own)); len(d) != 0 {
		t.Errorf("deploy-web's own fields: drift %+v, want none", d)
	}
	if d := objectDrift(obj("ConfigMap", hand)); len(d) != 0 {
		t.Errorf("never applied by deploy-web: drift %+v, want none", d)
	}
	if d := objectDrift(obj("Secret", own, hand)); len(d) != 0 {
		t.Errorf("Secret: drift %+v, want none", d)
	}
	if d := objectDrift(nil); d != nil {
		t.Errorf("absent object: drift %+v", d)
	}
}
