package objrules

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func mf(manager string, op metav1.ManagedFieldsOperationType, subresource, fields string) metav1.ManagedFieldsEntry {
	t := metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: subresource, Time: &t, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

// operatorFields is what the reference operator applies on a Deployment.
const operatorFields = `{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{"f:app.kubernetes.io/instance":{}},"f:ownerReferences":{"k:{\"uid\":\"u1\"}":{}}},` +
	`"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app.kubernetes.io/instance":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}}}`

func driftObject() map[string]any {
	return map[string]any{
		"metadata": map[string]any{
			"annotations": map[string]any{"team.example.com/owner": "ops", "deployment.kubernetes.io/revision": "3"},
			"labels":      map[string]any{"tier": "front", "app.kubernetes.io/instance": "web"},
			"finalizers":  []any{"example.com/keep"},
		},
		"spec": map[string]any{
			"replicas": int64(5),
			"template": map[string]any{"metadata": map[string]any{"annotations": map[string]any{
				"kubectl.kubernetes.io/restartedAt": "2026-12-05T02:00:00Z", "kubectl.kubernetes.io/other": "x"}}, "spec": map[string]any{"containers": []any{map[string]any{
				"name": "web", "image": "registry/web:1.2.0",
				"env":  []any{map[string]any{"name": "EXTRA_FLAG", "value": "1"}},
				"args": []any{"--a", "--b"},
			}}}},
		},
	}
}

func TestDrift(t *testing.T) {
	rules := DriftRules{OperatorManagers: []string{DefaultOperatorManager}}
	operator := mf(DefaultOperatorManager, metav1.ManagedFieldsOperationApply, "", operatorFields)
	when := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		kind    string
		entries []metav1.ManagedFieldsEntry
		want    []DriftField
	}{
		{"operator only", "Deployment", []metav1.ManagedFieldsEntry{operator}, nil},
		{"no managed fields", "Deployment", nil, nil},
		{"kubectl set env adds one env entry", "Deployment", []metav1.ManagedFieldsEntry{operator,
			mf("kubectl-set", metav1.ManagedFieldsOperationUpdate, "", `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:env":{".":{},"k:{\"name\":\"EXTRA_FLAG\"}":{".":{},"f:name":{},"f:value":{}}}}}}}}}`)},
			[]DriftField{{Path: "spec.template.spec.containers[name=web].env[name=EXTRA_FLAG]", Manager: "kubectl-set", Operation: "Update", Time: &when, Live: `{"name":"EXTRA_FLAG","value":"1"}`}}},
		{"kubectl scale without an HPA", "Deployment", []metav1.ManagedFieldsEntry{
			mf(DefaultOperatorManager, metav1.ManagedFieldsOperationApply, "", `{"f:spec":{"f:selector":{}}}`),
			mf("kubectl", metav1.ManagedFieldsOperationUpdate, "scale", `{"f:spec":{"f:replicas":{}}}`)},
			[]DriftField{{Path: "spec.replicas", Manager: "kubectl", Operation: "Update", Time: &when, Live: "5"}}},
		{"HPA scaling through the scale subresource", "Deployment", []metav1.ManagedFieldsEntry{
			mf(DefaultOperatorManager, metav1.ManagedFieldsOperationApply, "", `{"f:spec":{"f:selector":{}}}`),
			mf("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "scale", `{"f:spec":{"f:replicas":{}}}`)}, nil},
		{"annotation and label by hand", "Service", []metav1.ManagedFieldsEntry{operator,
			mf("kubectl-annotate", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{"f:annotations":{"f:team.example.com/owner":{}}}}`),
			mf("kubectl-label", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{"f:labels":{"f:tier":{}}}}`)},
			[]DriftField{
				{Path: `metadata.annotations["team.example.com/owner"]`, Manager: "kubectl-annotate", Operation: "Update", Time: &when, Live: `"ops"`},
				{Path: "metadata.labels.tier", Manager: "kubectl-label", Operation: "Update", Time: &when, Live: `"front"`},
			}},
		{"kubectl edit of a field the operator owned", "Deployment", []metav1.ManagedFieldsEntry{
			// the edit took spec.replicas from the operator: it is in the editor's set only
			mf(DefaultOperatorManager, metav1.ManagedFieldsOperationApply, "", `{"f:spec":{"f:selector":{}}}`),
			mf("kubectl-edit", metav1.ManagedFieldsOperationUpdate, "", `{"f:spec":{"f:replicas":{},"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:args":{}}}}}}}`)},
			[]DriftField{
				{Path: "spec.replicas", Manager: "kubectl-edit", Operation: "Update", Time: &when, Live: "5"},
				{Path: "spec.template.spec.containers[name=web].args", Manager: "kubectl-edit", Operation: "Update", Time: &when, Live: `["--a","--b"]`},
			}},
		{"server-side apply by another manager", "Deployment", []metav1.ManagedFieldsEntry{operator,
			mf("helm", metav1.ManagedFieldsOperationApply, "", `{"f:metadata":{"f:labels":{"f:tier":{}}}}`)},
			[]DriftField{{Path: "metadata.labels.tier", Manager: "helm", Operation: "Apply", Time: &when, Live: `"front"`}}},
		{"a field shared with the operator is not drift", "Deployment", []metav1.ManagedFieldsEntry{operator,
			mf("other", metav1.ManagedFieldsOperationApply, "", `{"f:spec":{"f:replicas":{}}}`)}, nil},
		{"status and the status subresource", "Deployment", []metav1.ManagedFieldsEntry{operator,
			mf("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "status", `{"f:status":{"f:replicas":{}}}`),
			mf("someone", metav1.ManagedFieldsOperationUpdate, "", `{"f:status":{"f:phase":{}}}`)}, nil},
		{"deployment controller's revision annotation", "Deployment", []metav1.ManagedFieldsEntry{operator,
			mf("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{"f:annotations":{".":{},"f:deployment.kubernetes.io/revision":{}}}}`)}, nil},
		{"controller finalizers and owner references", "Deployment", []metav1.ManagedFieldsEntry{operator,
			mf("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{"f:finalizers":{".":{},"v:\"example.com/keep\"":{}},"f:ownerReferences":{"k:{\"uid\":\"u2\"}":{}}}}`)}, nil},
		{"a person's finalizer", "Deployment", []metav1.ManagedFieldsEntry{operator,
			mf("kubectl-patch", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{"f:finalizers":{".":{},"v:\"example.com/keep\"":{}}}}`)},
			[]DriftField{{Path: `metadata.finalizers["example.com/keep"]`, Manager: "kubectl-patch", Operation: "Update", Time: &when, Live: `"example.com/keep"`}}},
		{"pod-template-hash label", "Deployment", []metav1.ManagedFieldsEntry{operator,
			mf("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{"f:labels":{"f:pod-template-hash":{}}}}`)}, nil},
		{"a restart request is no drift", "Deployment", []metav1.ManagedFieldsEntry{operator,
			mf("deploy-web", metav1.ManagedFieldsOperationUpdate, "", `{"f:spec":{"f:template":{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/restartedAt":{}}}}}}`)}, nil},
		{"another template annotation by hand is", "Deployment", []metav1.ManagedFieldsEntry{operator,
			mf("kubectl-patch", metav1.ManagedFieldsOperationUpdate, "", `{"f:spec":{"f:template":{"f:metadata":{"f:annotations":{"f:kubectl.kubernetes.io/other":{}}}}}}`)},
			[]DriftField{{Path: `spec.template.metadata.annotations["kubectl.kubernetes.io/other"]`, Manager: "kubectl-patch", Operation: "Update", Time: &when, Live: `"x"`}}},
		{"pods are derived", "Pod", []metav1.ManagedFieldsEntry{mf("kubectl-label", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{"f:labels":{"f:tier":{}}}}`)}, nil},
		{"replicasets are derived", "ReplicaSet", []metav1.ManagedFieldsEntry{mf("kubectl-label", metav1.ManagedFieldsOperationUpdate, "", `{"f:metadata":{"f:labels":{"f:tier":{}}}}`)}, nil},
		{"malformed fields are skipped", "Deployment", []metav1.ManagedFieldsEntry{operator,
			mf("broken", metav1.ManagedFieldsOperationUpdate, "", `{"f:spec":`)}, nil},
		// A Service put back from LoadBalancer: the API server dropped
		// spec.allocateLoadBalancerNodePorts but kept the editor's entry.
		{"a field the object no longer has is not drift", "Service", []metav1.ManagedFieldsEntry{operator,
			mf("kubectl-edit", metav1.ManagedFieldsOperationUpdate, "", `{"f:spec":{"f:allocateLoadBalancerNodePorts":{}},"f:metadata":{"f:labels":{"f:gone":{}}}}`)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Drift(tt.kind, tt.entries, driftObject, rules)
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(DriftField{})); diff != "" {
				t.Errorf("Drift() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDriftBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"f:metadata":{"f:labels":{`)
	labels := map[string]any{}
	for i := range 500 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"f:l%03d":{}`, i)
		labels[fmt.Sprintf("l%03d", i)] = strings.Repeat("x", 1000)
	}
	b.WriteString(`}}}`)
	obj := map[string]any{"metadata": map[string]any{"labels": labels}}
	got := Drift("ConfigMap", []metav1.ManagedFieldsEntry{mf("flood", metav1.ManagedFieldsOperationUpdate, "", b.String())},
		func() map[string]any { return obj }, DriftRules{OperatorManagers: []string{DefaultOperatorManager}})
	if len(got) != maxDriftFields {
		t.Fatalf("len(Drift) = %d, want %d", len(got), maxDriftFields)
	}
	for _, d := range got {
		if len(d.Live) > maxDriftValue+len("…") {
			t.Fatalf("live value of %s is %d bytes, want at most %d", d.Path, len(d.Live), maxDriftValue+len("…"))
		}
	}
	if got[0].Path != "metadata.labels.l000" {
		t.Errorf("first path = %q, want metadata.labels.l000 (sorted)", got[0].Path)
	}
}

func TestDriftReadsContentOnlyWhenDrifted(t *testing.T) {
	called := false
	content := func() map[string]any { called = true; return driftObject() }
	rules := DriftRules{OperatorManagers: []string{DefaultOperatorManager}}
	Drift("Deployment", []metav1.ManagedFieldsEntry{mf(DefaultOperatorManager, metav1.ManagedFieldsOperationApply, "", operatorFields),
		mf("kube-controller-manager", metav1.ManagedFieldsOperationUpdate, "status", `{"f:status":{}}`)}, content, rules)
	if called {
		t.Error("Drift read the object's content although nothing drifted")
	}
}

func TestUnrecordedScale(t *testing.T) {
	withReplicas := func(n int64) map[string]any {
		return map[string]any{"spec": map[string]any{"replicas": n}}
	}
	ours := mf("deploy-web", metav1.ManagedFieldsOperationApply, "", `{"f:spec":{"f:selector":{}}}`)
	owned := mf("deploy-web", metav1.ManagedFieldsOperationApply, "", `{"f:spec":{"f:replicas":{}}}`)
	tests := []struct {
		name       string
		kind       string
		entries    []metav1.ManagedFieldsEntry
		obj        map[string]any
		autoscaled bool
		want       bool
	}{
		// kubectl scale when no manager owned spec.replicas: the API server
		// records no manager, only the count shows it.
		{"kubectl scale of a count no one set", "Deployment", []metav1.ManagedFieldsEntry{ours}, withReplicas(3), false, true},
		{"a StatefulSet too", "StatefulSet", []metav1.ManagedFieldsEntry{ours}, withReplicas(0), false, true},
		{"the default count", "Deployment", []metav1.ManagedFieldsEntry{ours}, withReplicas(1), false, false},
		{"the HPA's count", "Deployment", []metav1.ManagedFieldsEntry{ours}, withReplicas(3), true, false},
		{"an owned count (Drift sees who scaled)", "Deployment", []metav1.ManagedFieldsEntry{owned}, withReplicas(3), false, false},
		{"not a scalable kind", "ConfigMap", []metav1.ManagedFieldsEntry{ours}, withReplicas(3), false, false},
		{"no count", "Deployment", []metav1.ManagedFieldsEntry{ours}, map[string]any{}, false, false},
	}
	for _, tt := range tests {
		d, got := UnrecordedScale(tt.kind, tt.entries, tt.obj, tt.autoscaled)
		if got != tt.want {
			t.Errorf("UnrecordedScale(%s) = %v, want %v", tt.name, got, tt.want)
		}
		if got && (d.Path != "spec.replicas" || d.Manager != UnrecordedScaleManager || d.Live != fmt.Sprint(tt.obj["spec"].(map[string]any)["replicas"])) {
			t.Errorf("UnrecordedScale(%s) = %+v", tt.name, d)
		}
	}
}
