package deployplan

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// An HPA still live but no longer rendered sets its target's replica
// count: the plan warns naming the HPA, and the count is not hand drift.
func TestLeftRenderAutoscaled(t *testing.T) {
	web := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}}}
	hpa := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"scaleTargetRef": map[string]any{"kind": "Deployment", "name": "web"}}}}
	// Live: applied by deploy-web without spec.replicas, scaled to 5 by
	// the autoscaler through the scale subresource (no manager of the
	// count).
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web"}, "spec": map[string]any{"replicas": int64(5)}}}
	live.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: FieldManager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1",
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:template":{}}}`)}})

	t.Run("the HPA left the render", func(t *testing.T) {
		objs := []*unstructured.Unstructured{web}
		autoscaled := autoscaledTargets(objs)
		if d := objectDrift(live, autoscaled["Deployment/web"]); len(d) != 1 || d[0].Path != "spec.replicas" {
			t.Fatalf("drift before the rule = %+v, want the unrecorded scale (the case the rule exists for)", d)
		}
		warnings := leftRenderAutoscaled(objs, autoscaled, map[string]string{"Deployment/web": "web-hpa", "Deployment/gone": "gone-hpa"})
		if len(warnings) != 1 || !strings.Contains(warnings[0], "Deployment/web") || !strings.Contains(warnings[0], "HorizontalPodAutoscaler/web-hpa") {
			t.Errorf("warnings = %q, want one naming Deployment/web and HorizontalPodAutoscaler/web-hpa", warnings)
		}
		if d := objectDrift(live, autoscaled["Deployment/web"]); len(d) != 0 {
			t.Errorf("drift = %+v, want none: the count is the autoscaler's", d)
		}
		if autoscaled["Deployment/gone"] {
			t.Errorf("an HPA's target that is not rendered is marked autoscaled")
		}
	})
	t.Run("the HPA is rendered", func(t *testing.T) {
		objs := []*unstructured.Unstructured{web, hpa}
		autoscaled := autoscaledTargets(objs)
		if w := leftRenderAutoscaled(objs, autoscaled, map[string]string{"Deployment/web": "web"}); len(w) != 0 {
			t.Errorf("warnings = %q, want none: the HPA is rendered", w)
		}
		if d := objectDrift(live, autoscaled["Deployment/web"]); len(d) != 0 {
			t.Errorf("drift = %+v, want none", d)
		}
	})
}
