package kubeview

import (
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Bounds of a cache's interner: strings longer than internMaxLen are
// never shared (a hostile image or label value stays the object's own),
// and after internMaxEntries distinct strings the table starts again
// empty (strings already shared stay shared; names of deleted objects do
// not pile up).
const (
	internMaxLen     = 253
	internMaxEntries = 1 << 16
)

// interner shares the bytes of strings that repeat across the cached
// objects of one cache: namespaces, the instance label's value (the App's
// name on every child), owner names and kinds, images, container and node
// names, phases and condition types. The decoder allocates each of them
// again for every object; after interning, one copy serves them all.
//
// It shares maps too: the labels and annotations the cache keeps are one
// entry or none (keptLabels, keptAnnotations), the same entry on every
// child of an App (its instance label) or on many objects (a revision),
// and a map of one entry costs some 300 bytes. A shared map is never
// written: cached objects are read-only, and stripObject replaces an
// object's maps rather than changing them.
type interner struct {
	mu   sync.Mutex
	m    map[string]string
	maps map[[2]string]map[string]string
}

func newInterner() *interner {
	return &interner{m: map[string]string{}, maps: map[[2]string]map[string]string{}}
}

// object interns the repeated strings of a stripped object (stripObject)
// in place, under one lock.
func (in *interner) object(obj any) {
	in.mu.Lock()
	defer in.mu.Unlock()
	s := in.strLocked
	if m, err := meta.Accessor(obj); err == nil {
		m.SetNamespace(s(m.GetNamespace()))
		// An unstructured object hands out copies of its labels and
		// references; a typed one its own.
		if _, u := obj.(*unstructured.Unstructured); !u {
			m.SetLabels(in.sharedMap(m.GetLabels()))
			m.SetAnnotations(in.sharedMap(m.GetAnnotations()))
			refs := m.GetOwnerReferences()
			for i := range refs {
				refs[i].APIVersion, refs[i].Kind, refs[i].Name = s(refs[i].APIVersion), s(refs[i].Kind), s(refs[i].Name)
			}
		}
	}
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		if spec, ok := o.Object["spec"].(map[string]any); ok {
			if img, ok := spec["image"].(string); ok {
				spec["image"] = s(img)
			}
		}
	case *corev1.Pod:
		in.podSpec(&o.Spec)
		o.Status.Phase = corev1.PodPhase(s(string(o.Status.Phase)))
		for i := range o.Status.Conditions {
			c := &o.Status.Conditions[i]
			c.Type, c.Status = corev1.PodConditionType(s(string(c.Type))), corev1.ConditionStatus(s(string(c.Status)))
		}
		in.containerStatuses(o.Status.ContainerStatuses)
		in.containerStatuses(o.Status.InitContainerStatuses)
	case *appsv1.ReplicaSet:
		in.podSpec(&o.Spec.Template.Spec)
	case *appsv1.Deployment:
		in.podSpec(&o.Spec.Template.Spec)
		for i := range o.Status.Conditions {
			c := &o.Status.Conditions[i]
			c.Type, c.Status, c.Reason = appsv1.DeploymentConditionType(s(string(c.Type))), corev1.ConditionStatus(s(string(c.Status))), s(c.Reason)
		}
	case *appsv1.StatefulSet:
		in.podSpec(&o.Spec.Template.Spec)
	case *appsv1.DaemonSet:
		in.podSpec(&o.Spec.Template.Spec)
	case *batchv1.Job:
		in.podSpec(&o.Spec.Template.Spec)
	case *batchv1.CronJob:
		in.podSpec(&o.Spec.JobTemplate.Spec.Template.Spec)
	case *autoscalingv2.HorizontalPodAutoscaler:
		for i := range o.Status.Conditions {
			c := &o.Status.Conditions[i]
			c.Type, c.Status, c.Reason = autoscalingv2.HorizontalPodAutoscalerConditionType(s(string(c.Type))), corev1.ConditionStatus(s(string(c.Status))), s(c.Reason)
		}
	}
}

// strLocked returns the shared copy of s; in.mu must be held.
func (in *interner) strLocked(s string) string {
	if s == "" || len(s) > internMaxLen {
		return s
	}
	if v, ok := in.m[s]; ok {
		return v
	}
	if len(in.m) >= internMaxEntries {
		clear(in.m)
	}
	in.m[s] = s
	return s
}

// sharedMap returns the shared map equal to m when m has one entry of
// short strings, else m; in.mu must be held. m must not be written after.
func (in *interner) sharedMap(m map[string]string) map[string]string {
	if len(m) != 1 {
		return m
	}
	for k, v := range m {
		if len(k) > internMaxLen || len(v) > internMaxLen {
			return m
		}
		key := [2]string{k, v}
		if shared, ok := in.maps[key]; ok {
			return shared
		}
		if len(in.maps) >= internMaxEntries {
			clear(in.maps)
		}
		shared := map[string]string{in.strLocked(k): in.strLocked(v)}
		in.maps[key] = shared
		return shared
	}
	return m
}

func (in *interner) podSpec(ps *corev1.PodSpec) {
	s := in.strLocked
	ps.NodeName = s(ps.NodeName)
	ps.RestartPolicy = corev1.RestartPolicy(s(string(ps.RestartPolicy)))
	for _, cs := range [][]corev1.Container{ps.Containers, ps.InitContainers} {
		for i := range cs {
			cs[i].Name, cs[i].Image = s(cs[i].Name), s(cs[i].Image)
		}
	}
}

func (in *interner) containerStatuses(ss []corev1.ContainerStatus) {
	s := in.strLocked
	for i := range ss {
		c := &ss[i]
		c.Name, c.Image = s(c.Name), s(c.Image)
		for _, st := range []*corev1.ContainerState{&c.State, &c.LastTerminationState} {
			if st.Waiting != nil {
				st.Waiting.Reason = s(st.Waiting.Reason)
			}
			if st.Terminated != nil {
				st.Terminated.Reason = s(st.Terminated.Reason)
			}
		}
	}
}
