package objrules

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkDriftTree computes drift for what an App's tree holds: a
// Deployment with 8 containers (operator fields on each, one hand-added env
// var on each) and 500 pods (derived: skipped).
func BenchmarkDriftTree(b *testing.B) {
	rules := DriftRules{OperatorManagers: []string{DefaultOperatorManager}}
	var op, hand strings.Builder
	op.WriteString(`{"f:metadata":{"f:labels":{"f:app.kubernetes.io/instance":{}}},"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{`)
	hand.WriteString(`{"f:spec":{"f:template":{"f:spec":{"f:containers":{`)
	containers := make([]any, 8)
	for i := range 8 {
		if i > 0 {
			op.WriteByte(',')
			hand.WriteByte(',')
		}
		fmt.Fprintf(&op, `"k:{\"name\":\"c%d\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}},"f:resources":{"f:limits":{"f:cpu":{},"f:memory":{}}}}`, i)
		fmt.Fprintf(&hand, `"k:{\"name\":\"c%d\"}":{"f:env":{".":{},"k:{\"name\":\"EXTRA\"}":{".":{},"f:name":{},"f:value":{}}}}`, i)
		containers[i] = map[string]any{"name": fmt.Sprintf("c%d", i), "image": "r/x:1", "env": []any{map[string]any{"name": "EXTRA", "value": "1"}}}
	}
	op.WriteString(`}}}}}`)
	hand.WriteString(`}}}}}`)
	dep := []metav1.ManagedFieldsEntry{
		mf(DefaultOperatorManager, metav1.ManagedFieldsOperationApply, "", op.String()),
		mf("kubectl-set", metav1.ManagedFieldsOperationUpdate, "", hand.String()),
		mf("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "status", `{"f:status":{"f:replicas":{}}}`),
	}
	obj := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": containers}}}}
	pod := []metav1.ManagedFieldsEntry{
		mf("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{"f:labels":{"f:pod-template-hash":{}}}}`),
		mf("kwok", metav1.ManagedFieldsOperationUpdate, "status", `{"f:status":{"f:phase":{}}}`),
	}
	if got := Drift("Deployment", dep, func() map[string]any { return obj }, rules); len(got) != 8 {
		b.Fatalf("Drift = %d entries, want 8", len(got))
	}
	b.ReportAllocs()
	for b.Loop() {
		Drift("Deployment", dep, func() map[string]any { return obj }, rules)
		for range 500 {
			Drift("Pod", pod, nil, rules)
		}
	}
}
