package kubeview

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/hanzoai/deploy-web/appcr"
)

// stripObject is the informers' transform after the drift summary: it keeps
// of each object only what the pages, the JSON API and the health rules
// read, so that the cache of a large fleet stays small. The resource panel
// reads the whole object from the apiserver per request (Object), so no
// page shows a cached manifest.
//
// Every object loses its managedFields (the drift summary was taken before)
// and the last-applied annotation (a copy of the desired object; the panel
// reads it from the live object). Per kind:
//   - Event: what the events tab shows and the involved object (leanEvent);
//   - Pod: metadata, the containers' names and images, the restart policy
//     and node, and the status without addresses and per-container
//     resources (the health rule, the tree's ready and restart counts, the
//     running versions and the log picker read these);
//   - ReplicaSet, Deployment, StatefulSet, DaemonSet, Job, CronJob: the pod
//     template is cut the same way (images for the tree, the sync verdict,
//     the running versions and the history; its labels and annotations
//     stay), the rest of the spec and the status stay (health);
//   - ConfigMap: no data (never shown from the cache);
//   - everything else (Services, Ingresses, HPAs, PDBs, PVCs, Apps) keeps
//     its spec and status, which are small.
func stripObject(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Event:
		return leanEvent(o), nil
	case *corev1.Pod:
		o.Spec = leanPodSpec(o.Spec)
		o.Status = leanPodStatus(o.Status)
	case *appsv1.ReplicaSet:
		o.Spec.Template.Spec = leanPodSpec(o.Spec.Template.Spec)
	case *appsv1.Deployment:
		o.Spec.Template.Spec = leanPodSpec(o.Spec.Template.Spec)
	case *appsv1.StatefulSet:
		o.Spec.Template.Spec = leanPodSpec(o.Spec.Template.Spec)
		o.Spec.VolumeClaimTemplates = nil
	case *appsv1.DaemonSet:
		o.Spec.Template.Spec = leanPodSpec(o.Spec.Template.Spec)
	case *batchv1.Job:
		o.Spec.Template.Spec = leanPodSpec(o.Spec.Template.Spec)
	case *batchv1.CronJob:
		o.Spec.JobTemplate.Spec.Template.Spec = leanPodSpec(o.Spec.JobTemplate.Spec.Template.Spec)
	case *corev1.ConfigMap:
		o.Data, o.BinaryData = nil, nil
	}
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
		if a := m.GetAnnotations(); a != nil {
			if _, ok := a[appcr.LastAppliedAnnotation]; ok {
				delete(a, appcr.LastAppliedAnnotation)
				if len(a) == 0 {
					a = nil
				}
				m.SetAnnotations(a) // an Unstructured copies, a typed object keeps the map
			}
		}
	}
	return obj, nil
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
// phase, reason and message, the conditions, the start time and each
// container's state, readiness and restarts.
func leanPodStatus(s corev1.PodStatus) corev1.PodStatus {
	return corev1.PodStatus{
		Phase: s.Phase, Reason: s.Reason, Message: s.Message, Conditions: s.Conditions, StartTime: s.StartTime,
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
