package kubeview

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/appcr"
)

// stripObject is the informers' transform after the drift summary: it keeps
// of each object only what the pages, the JSON API and the health rules
// read, so that the cache of a large fleet stays small. The resource panel
// reads the whole object from the apiserver per request (Object), so no
// page shows a cached manifest.
//
// Every registry object loses its managedFields (the drift summary was
// taken before), every label but the instance label (indexed) and every
// annotation but the few that are read (keptAnnotations). Per kind:
//   - Pod: the containers' names and images, the restart policy and node,
//     and the status without addresses, per-container resources and
//     conditions other than Ready (the
//     health rule, the tree's ready and restart counts, the running
//     versions and the log picker read these);
//   - ReplicaSet, Deployment, StatefulSet, DaemonSet, Job, CronJob: the pod
//     template is cut the same way and loses its metadata, the selector
//     goes; the rest of the spec and the status stay (health, replicas);
//   - Service: its type and status (health);
//   - ConfigMap: no data;
//   - HorizontalPodAutoscaler (autoscaling/v2): its target and replica
//     bounds, and the status without metrics (its health reads the
//     conditions);
//   - PDB, Ingress, PVC keep spec and status (few and small);
//   - the App (unstructured): see leanApp.
func stripObject(obj any) (any, error) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		return leanApp(o), nil
	case *corev1.Pod:
		o.Spec = leanPodSpec(o.Spec)
		o.Status = leanPodStatus(o.Status)
	case *appsv1.ReplicaSet:
		o.Spec.Template = leanTemplate(o.Spec.Template)
		o.Spec.Selector = nil
	case *appsv1.Deployment:
		o.Spec.Template = leanTemplate(o.Spec.Template)
		o.Spec.Selector = nil
	case *appsv1.StatefulSet:
		o.Spec.Template = leanTemplate(o.Spec.Template)
		o.Spec.Selector, o.Spec.VolumeClaimTemplates = nil, nil
	case *appsv1.DaemonSet:
		o.Spec.Template = leanTemplate(o.Spec.Template)
		o.Spec.Selector = nil
	case *batchv1.Job:
		o.Spec.Template = leanTemplate(o.Spec.Template)
		o.Spec.Selector = nil
	case *batchv1.CronJob:
		o.Spec.JobTemplate = batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: leanTemplate(o.Spec.JobTemplate.Spec.Template)}}
	case *corev1.Service:
		o.Spec = corev1.ServiceSpec{Type: o.Spec.Type}
	case *corev1.ConfigMap:
		o.Data, o.BinaryData = nil, nil
	case *autoscalingv2.HorizontalPodAutoscaler:
		o.Spec = autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: o.Spec.ScaleTargetRef, MinReplicas: o.Spec.MinReplicas, MaxReplicas: o.Spec.MaxReplicas}
		o.Status = autoscalingv2.HorizontalPodAutoscalerStatus{ObservedGeneration: o.Status.ObservedGeneration,
			CurrentReplicas: o.Status.CurrentReplicas, DesiredReplicas: o.Status.DesiredReplicas, Conditions: o.Status.Conditions}
	}
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
		m.SetLabels(keepKeys(m.GetLabels(), keptLabels))
		m.SetAnnotations(keepKeys(m.GetAnnotations(), keptAnnotations))
	}
	return obj, nil
}

// keptLabels are the labels the cache keeps: the instance label (indexed,
// and how a child names its App).
var keptLabels = []string{appcr.InstanceLabel}

// keptAnnotations are the annotations the cache keeps, each read by a page:
// the Deployment controller's revision (tree, history, running versions),
// a pod's default container (log picker), the HPA v1 conditions (health).
var keptAnnotations = []string{
	"deployment.kubernetes.io/revision",
	"kubectl.kubernetes.io/default-container",
	"autoscaling.alpha.kubernetes.io/conditions",
}

// keepKeys returns the entries of m whose key is in keep: m itself when it
// has no others, nil when none is left.
func keepKeys(m map[string]string, keep []string) map[string]string {
	drop := false
	for k := range m {
		if !slices.Contains(keep, k) {
			drop = true
			break
		}
	}
	if !drop {
		if len(m) == 0 {
			return nil
		}
		return m
	}
	var out map[string]string
	for _, k := range keep {
		if v, ok := m[k]; ok {
			if out == nil {
				out = make(map[string]string, 1)
			}
			out[k] = v
		}
	}
	return out
}

// leanApp keeps of an App what the list, the tree and the App's health
// read: its identity and owners, generation and deletion, the labels and
// annotations kept for every object, spec.image (the App contract) and the
// status's observedGeneration and conditions. Other fields of a hostile or
// simply large custom resource never reach the cache.
func leanApp(u *unstructured.Unstructured) *unstructured.Unstructured {
	md := map[string]any{}
	if m, ok := u.Object["metadata"].(map[string]any); ok {
		for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp", "ownerReferences"} {
			if v, ok := m[k]; ok {
				md[k] = v
			}
		}
	}
	out := &unstructured.Unstructured{Object: map[string]any{"metadata": md}}
	for _, k := range []string{"apiVersion", "kind"} {
		if v, ok := u.Object[k]; ok {
			out.Object[k] = v
		}
	}
	out.SetLabels(keepKeys(u.GetLabels(), keptLabels))
	out.SetAnnotations(keepKeys(u.GetAnnotations(), keptAnnotations))
	if img, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "image"); ok {
		out.Object["spec"] = map[string]any{"image": img}
	}
	if st, ok := u.Object["status"].(map[string]any); ok {
		lean := map[string]any{}
		for _, k := range []string{"observedGeneration", "conditions"} {
			if v, ok := st[k]; ok {
				lean[k] = v
			}
		}
		out.Object["status"] = lean
	}
	return out
}

// leanTemplate keeps of a pod template its lean spec (leanPodSpec).
func leanTemplate(t corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: leanPodSpec(t.Spec)}
}

// leanPodSpec keeps of a pod spec the containers' names and images (init
// containers with their restart policy: a sidecar's), the restart policy
// and the node.
func leanPodSpec(s corev1.PodSpec) corev1.PodSpec {
	return corev1.PodSpec{
		Containers: leanContainers(s.Containers), InitContainers: leanContainers(s.InitContainers),
		RestartPolicy: s.RestartPolicy, NodeName: s.NodeName,
	}
}

func leanContainers(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: c.Name, Image: c.Image, RestartPolicy: c.RestartPolicy}
	}
	return out
}

// leanPodStatus keeps what PodHealth, the tree and the log picker read: the
// phase, reason and message, the Ready condition (the only one read), the
// start time and each container's state, readiness and restarts.
func leanPodStatus(s corev1.PodStatus) corev1.PodStatus {
	var conds []corev1.PodCondition
	for _, c := range s.Conditions {
		if c.Type == corev1.PodReady {
			conds = []corev1.PodCondition{c}
			break
		}
	}
	return corev1.PodStatus{
		Phase: s.Phase, Reason: s.Reason, Message: s.Message, Conditions: conds, StartTime: s.StartTime,
		ObservedGeneration:    s.ObservedGeneration,
		ContainerStatuses:     leanContainerStatuses(s.ContainerStatuses),
		InitContainerStatuses: leanContainerStatuses(s.InitContainerStatuses),
	}
}

func leanContainerStatuses(ss []corev1.ContainerStatus) []corev1.ContainerStatus {
	if len(ss) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(ss))
	for i, s := range ss {
		out[i] = corev1.ContainerStatus{
			Name: s.Name, Image: s.Image, Ready: s.Ready, Started: s.Started, RestartCount: s.RestartCount,
			State: s.State, LastTerminationState: s.LastTerminationState,
		}
	}
	return out
}
