package objrules

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDriftValues: the drifted fields of the live object, and nothing
// else, as a manifest; list elements keep their keys.
func TestDriftValues(t *testing.T) {
	rules := DriftRules{OperatorManagers: []string{DefaultOperatorManager}}
	operator := mf(DefaultOperatorManager, metav1.ManagedFieldsOperationApply, "", operatorFields)
	tests := []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    map[string]any
	}{
		{"no drift", []metav1.ManagedFieldsEntry{operator}, nil},
		{"an env entry", []metav1.ManagedFieldsEntry{operator,
			mf("kubectl-set", metav1.ManagedFieldsOperationUpdate, "", `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:env":{".":{},"k:{\"name\":\"EXTRA_FLAG\"}":{".":{},"f:name":{},"f:value":{}}}}}}}}}`)},
			map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "web", "env": []any{map[string]any{"name": "EXTRA_FLAG", "value": "1"}}},
			}}}}}},
		{"an annotation, a label and a finalizer", []metav1.ManagedFieldsEntry{operator,
			mf("kubectl-annotate", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{"f:annotations":{"f:team.example.com/owner":{}}}}`),
			mf("kubectl-label", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{"f:labels":{"f:tier":{}}}}`),
			mf("kubectl-patch", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{"f:finalizers":{".":{},"v:\"example.com/keep\"":{}}}}`)},
			map[string]any{"metadata": map[string]any{
				"annotations": map[string]any{"team.example.com/owner": "ops"},
				"labels":      map[string]any{"tier": "front"},
				"finalizers":  []any{"example.com/keep"},
			}}},
		{"a scalar and a field of a list element", []metav1.ManagedFieldsEntry{
			mf(DefaultOperatorManager, metav1.ManagedFieldsOperationApply, "", `{"f:spec":{"f:selector":{}}}`),
			mf("kubectl-edit", metav1.ManagedFieldsOperationUpdate, "", `{"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:args":{}}}}}}}`)},
			map[string]any{"spec": map[string]any{"replicas": int64(5), "template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "web", "args": []any{"--a", "--b"}},
			}}}}}},
		{"a field that is gone", []metav1.ManagedFieldsEntry{operator,
			mf("kubectl-label", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{"f:labels":{"f:gone":{}},"f:annotations":{"f:team.example.com/owner":{}}}}`)},
			map[string]any{"metadata": map[string]any{"annotations": map[string]any{"team.example.com/owner": "ops"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := driftObject()
			drift := Drift("Deployment", tt.entries, driftObject, rules)
			got := DriftValues(obj, drift)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DriftValues() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(driftObject(), obj); diff != "" {
				t.Errorf("DriftValues changed obj (-before +after):\n%s", diff)
			}
			// The result shares nothing with obj.
			if got != nil {
				scribbleAll(got)
				if diff := cmp.Diff(driftObject(), obj); diff != "" {
					t.Errorf("a change of the result reached obj:\n%s", diff)
				}
			}
		})
	}
	if got := DriftValues(driftObject(), []DriftField{{Path: "spec.replicas"}}); got != nil {
		t.Errorf("DriftValues of a field without a structured path = %v, want nil", got)
	}
	if got := DriftValues(nil, Drift("Deployment", tests[1].entries, driftObject, rules)); got != nil {
		t.Errorf("DriftValues(nil) = %v, want nil", got)
	}
}

// scribbleAll overwrites every scalar of a map or list in place.
func scribbleAll(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if _, ok := e.(map[string]any); ok {
				scribbleAll(e)
			} else if _, ok := e.([]any); ok {
				scribbleAll(e)
			} else {
				v[k] = "scribbled"
			}
		}
	case []any:
		for i, e := range v {
			if _, ok := e.(map[string]any); ok {
				scribbleAll(e)
			} else if _, ok := e.([]any); ok {
				scribbleAll(e)
			} else {
				v[i] = "scribbled"
			}
		}
	}
}
