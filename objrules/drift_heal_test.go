package objrules

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDriftRemovePatch(t *testing.T) {
	live := map[string]any{
		"metadata": map[string]any{"name": "api", "labels": map[string]any{"app": "api", "team/x": "1"}},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "api", "env": []any{
				map[string]any{"name": "COLOR", "value": "blue"},
				map[string]any{"name": "HAND_EDIT", "value": "1"},
			}},
		}}}},
	}
	desired := map[string]any{
		"metadata": map[string]any{"name": "api", "labels": map[string]any{"app": "api"}},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "api", "env": []any{map[string]any{"name": "COLOR", "value": "red"}}},
		}}}},
	}
	kubectl := `{"f:metadata":{"f:labels":{"f:team/x":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"api\"}":{"f:env":{"k:{\"name\":\"COLOR\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"HAND_EDIT\"}":{".":{},"f:name":{},"f:value":{}}}}}}}}}`
	entries := []metav1.ManagedFieldsEntry{
		{Manager: "deploy-web", Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:app":{}}}}`)},
		{Manager: "kubectl-set", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(kubectl)},
	}
	drift := Drift("Deployment", entries, func() map[string]any { return live }, DriftRules{OperatorManagers: []string{"deploy-web"}})
	got := map[string]string{}
	for _, d := range drift {
		p, ok := d.RemovePatch(live)
		if !ok {
			t.Fatalf("RemovePatch(%s) not ok", d.Path)
		}
		var ops []map[string]any
		if err := json.Unmarshal(p, &ops); err != nil || len(ops) != 2 || ops[0]["op"] != "test" || ops[1]["op"] != "remove" {
			t.Fatalf("RemovePatch(%s) = %s, want test then remove", d.Path, p)
		}
		got[d.Path] = ops[1]["path"].(string)
		if set := d.SetIn(desired); set != (d.Path != `metadata.labels["team/x"]` && d.Path != `spec.template.spec.containers[name=api].env[name=HAND_EDIT]`) {
			t.Errorf("SetIn(%s) = %v", d.Path, set)
		}
	}
	want := map[string]string{
		`metadata.labels["team/x"]`:                                   "/metadata/labels/team~1x",
		`spec.template.spec.containers[name=api].env[name=COLOR]`:     "/spec/template/spec/containers/0/env/0",
		`spec.template.spec.containers[name=api].env[name=HAND_EDIT]`: "/spec/template/spec/containers/0/env/1",
	}
	if len(got) != len(want) {
		t.Fatalf("drift paths = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("RemovePatch(%s) removes %q, want %q", k, got[k], v)
		}
	}
}
