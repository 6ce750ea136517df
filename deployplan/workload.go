package deployplan

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/appcr"
)

// Workload is a rendered object that runs containers.
type Workload struct {
	Kind, Name, Namespace string
	Containers            []Container
	// Replicas is spec.replicas when the kind has it and sets it.
	Replicas *int64
	// PodLabels are the pod template's labels (for Service selectors).
	PodLabels map[string]string
	// Suspended is spec.suspend of a Job or CronJob.
	Suspended bool
}

// Container is a container (init containers included) of a workload.
type Container struct {
	Name  string `json:"name"`
	Image string `json:"image"`
	Env   []Env  `json:"-"`
}

// Env is a container environment variable; FromRef is set for valueFrom.
type Env struct {
	Name, Value string
	FromRef     bool
}

// podSpecPath returns where a kind keeps its pod template, or nil.
func podSpecPath(group, kind string) []string {
	switch {
	case group == "apps" && (kind == "Deployment" || kind == "StatefulSet" || kind == "DaemonSet" || kind == "ReplicaSet"),
		group == "batch" && kind == "Job":
		return []string{"spec", "template"}
	case group == "batch" && kind == "CronJob":
		return []string{"spec", "jobTemplate", "spec", "template"}
	case group == "" && kind == "Pod":
		return []string{}
	}
	return nil
}

// WorkloadOf extracts the containers of a workload object; ok is false for
// kinds that run nothing.
func WorkloadOf(u *unstructured.Unstructured) (Workload, bool) {
	gvk := u.GroupVersionKind()
	w := Workload{Kind: gvk.Kind, Name: u.GetName(), Namespace: u.GetNamespace()}
	if gvk.GroupKind() == appcr.Kind.GroupKind() {
		img, _, _ := unstructured.NestedString(u.Object, "spec", "image")
		w.Containers = []Container{{Name: "app", Image: img}}
		if r, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); found {
			w.Replicas = &r
		}
		return w, true
	}
	tpl := podSpecPath(gvk.Group, gvk.Kind)
	if tpl == nil {
		return Workload{}, false
	}
	if r, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); found {
		w.Replicas = &r
	}
	if gvk.Kind == "Job" || gvk.Kind == "CronJob" {
		w.Suspended, _, _ = unstructured.NestedBool(u.Object, "spec", "suspend")
	}
	labels, _, _ := unstructured.NestedStringMap(u.Object, append(append([]string{}, tpl...), "metadata", "labels")...)
	w.PodLabels = labels
	spec := append(append([]string{}, tpl...), "spec")
	if len(tpl) == 0 {
		spec = []string{"spec"}
		w.PodLabels = u.GetLabels()
	}
	for _, field := range []string{"initContainers", "containers"} {
		list, _, _ := unstructured.NestedSlice(u.Object, append(append([]string{}, spec...), field)...)
		for _, c := range list {
			m, ok := c.(map[string]any)
			if !ok {
				continue
			}
			ct := Container{}
			ct.Name, _ = m["name"].(string)
			ct.Image, _ = m["image"].(string)
			envs, _ := m["env"].([]any)
			for _, e := range envs {
				em, ok := e.(map[string]any)
				if !ok {
					continue
				}
				ev := Env{}
				ev.Name, _ = em["name"].(string)
				ev.Value, _ = em["value"].(string)
				_, ev.FromRef = em["valueFrom"]
				ct.Env = append(ct.Env, ev)
			}
			w.Containers = append(w.Containers, ct)
		}
	}
	return w, true
}

// isSecret reports whether an object is a core Secret: its values are never
// read back, printed or stored.
func isSecret(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Secret"
}

// waitedKinds are the workloads whose health an apply waits for.
func waited(u *unstructured.Unstructured) bool {
	gk := u.GroupVersionKind().GroupKind()
	switch {
	case gk.Group == "apps" && (gk.Kind == "Deployment" || gk.Kind == "StatefulSet" || gk.Kind == "DaemonSet"):
		return true
	case gk == appcr.Kind.GroupKind():
		return true
	}
	return false
}
