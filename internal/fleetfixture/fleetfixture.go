// Package fleetfixture generates a fleet of Apps with their objects for
// benchmarks: per app an App CR, a Deployment, two ReplicaSets (the older
// scaled to zero), three ready pods, a Service, an HPA and a PDB, spread
// over the namespaces "apps" and "infra".
package fleetfixture

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/hanzoai/deploy-web/appcr"
)

// Namespaces are the fixture's platform namespaces.
func Namespaces() []string { return []string{"apps", "infra"} }

// Objects returns the typed objects and the App CRs of n apps.
func Objects(n int) (typed, apps []runtime.Object) {
	for i := range n {
		ns := []string{"apps", "infra"}[i%2]
		name := fmt.Sprintf("svc-%05d", i)
		uid := types.UID("app-" + name)
		img := func(v string) string { return "ghcr.io/acme/" + name + ":" + v }
		apps = append(apps, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hanzo.ai/v1", "kind": "App",
			"metadata": map[string]any{"name": name, "namespace": ns, "uid": string(uid), "generation": int64(1)},
			"spec":     map[string]any{"image": img("1.1.0"), "replicas": int64(3)},
			"status": map[string]any{"observedGeneration": int64(1), "conditions": []any{
				map[string]any{"type": "Ready", "status": "True", "reason": "RolloutComplete"}}},
		}})
		owner := []metav1.OwnerReference{{APIVersion: "hanzo.ai/v1", Kind: "App", Name: name, UID: uid, Controller: ptr.To(true)}}
		labels := map[string]string{appcr.InstanceLabel: name}
		depUID := types.UID("dep-" + name)
		tmpl := func(v string) corev1.PodTemplateSpec {
			return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: img(v)}}}}
		}
		typed = append(typed,
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: depUID, Labels: labels, OwnerReferences: owner, Generation: 1},
				Spec:   appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Template: tmpl("1.1.0")},
				Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, OwnerReferences: owner}},
			&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, OwnerReferences: owner},
				Status: autoscalingv2.HorizontalPodAutoscalerStatus{Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue}}}},
			&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, OwnerReferences: owner}},
		)
		depOwner := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: name, UID: depUID, Controller: ptr.To(true)}}
		for rev, v := range []string{"1.0.0", "1.1.0"} {
			rsName := fmt.Sprintf("%s-%d", name, rev)
			rsUID := types.UID("rs-" + rsName)
			replicas := int32(rev * 3)
			typed = append(typed, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: rsName, Namespace: ns, UID: rsUID, Labels: labels, OwnerReferences: depOwner,
				Annotations: map[string]string{"deployment.kubernetes.io/revision": fmt.Sprint(rev + 1)}},
				Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Template: tmpl(v)}, Status: appsv1.ReplicaSetStatus{Replicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas}})
			for p := range int(replicas) {
				typed = append(typed, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", rsName, p), Namespace: ns, Labels: labels,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rsName, UID: rsUID, Controller: ptr.To(true)}}},
					Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: img(v)}}, RestartPolicy: corev1.RestartPolicyAlways},
					Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}})
			}
		}
	}
	return typed, apps
}
