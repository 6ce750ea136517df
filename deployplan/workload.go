package deployplan

import (
	"fmt"
	"slices"
	"sort"
	"strings"

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

// WorkloadOf extracts the containers of an object that runs containers:
// an App (its spec.image), or any object that carries a pod template
// (PodContainers: containers, init and ephemeral containers at any depth,
// whatever its kind). ok is false for an object that runs nothing, and for
// one whose containers cannot be read (WorkloadCheck refuses it).
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
	containers, carries, err := PodContainers(u)
	tpl := podSpecPath(gvk.Group, gvk.Kind)
	if err != nil || tpl == nil && !carries {
		return Workload{}, false
	}
	w.Containers = containers
	if r, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); found {
		w.Replicas = &r
	}
	if tpl == nil {
		return w, true
	}
	if gvk.Kind == "Job" || gvk.Kind == "CronJob" {
		w.Suspended, _, _ = unstructured.NestedBool(u.Object, "spec", "suspend")
	}
	labels, _, _ := unstructured.NestedStringMap(u.Object, append(append([]string{}, tpl...), "metadata", "labels")...)
	w.PodLabels = labels
	if len(tpl) == 0 {
		w.PodLabels = u.GetLabels()
	}
	return w, true
}

// containerFields are the fields of a pod spec that list containers, in
// the order their containers are reported.
var containerFields = []string{"initContainers", "containers", "ephemeralContainers"}

// PodContainers returns every container of every pod template u carries,
// at any depth and whatever its kind (spec.template.spec,
// spec.jobTemplate.spec.template.spec, a custom resource's
// spec.workload.podSpec): each field named containers, initContainers or
// ephemeralContainers, outside metadata, status, labels and annotations.
// carries says u has such a field. Every such field must be a list (or
// null) of objects each with a string image: anything else is an error
// naming the path, since images that cannot be read cannot be checked.
// ConfigMaps and Secrets carry strings only and are not searched; an App
// is read by WorkloadOf (its spec.image).
func PodContainers(u *unstructured.Unstructured) (containers []Container, carries bool, err error) {
	gvk := u.GroupVersionKind()
	if gvk.Group == "" && (gvk.Kind == "ConfigMap" || gvk.Kind == "Secret") {
		return nil, false, nil
	}
	var walk func(v any, path string) error
	walk = func(v any, path string) error {
		switch x := v.(type) {
		case map[string]any:
			for _, f := range containerFields {
				list, present := x[f]
				if !present {
					continue
				}
				carries = true
				cs, err := readContainers(list, path+"."+f)
				if err != nil {
					return err
				}
				containers = append(containers, cs...)
			}
			if carries {
				if err := noImageVolumes(x["volumes"], path+".volumes"); err != nil {
					return err
				}
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if slices.Contains(containerFields, k) || k == "labels" || k == "annotations" || path == "" && (k == "metadata" || k == "status") {
					continue
				}
				if err := walk(x[k], path+"."+k); err != nil {
					return err
				}
			}
		case []any:
			for i, e := range x {
				if err := walk(e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(u.Object, ""); err != nil {
		return nil, true, err
	}
	return containers, carries, nil
}

// noImageVolumes refuses image volumes (volumes[].image, Kubernetes'
// ImageVolume) in a pod spec's volumes v at path: the kubelet pulls the
// image and its files can run in a container (a command under the mount),
// but it is no container's image, so no image gate would check it.
func noImageVolumes(v any, path string) error {
	vols, _ := v.([]any)
	for i, vol := range vols {
		if m, ok := vol.(map[string]any); ok {
			if _, present := m["image"]; present {
				return fmt.Errorf("%s[%d].image is an image volume: its image is not checked against the catalog or the live state, so image volumes are not supported; ship the files in a container image", strings.TrimPrefix(path, "."), i)
			}
		}
	}
	return nil
}

// readContainers reads one containers list at path: null, or a list of
// objects each with a string image (and a string name, if any).
func readContainers(v any, path string) ([]Container, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s is %s, not a list of containers", strings.TrimPrefix(path, "."), describe(v))
	}
	var out []Container
	for i, c := range list {
		at := fmt.Sprintf("%s[%d]", strings.TrimPrefix(path, "."), i)
		m, ok := c.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s is %s, not a container", at, describe(c))
		}
		ct := Container{}
		img, present := m["image"]
		if !present {
			return nil, fmt.Errorf("%s has no image", at)
		}
		if ct.Image, ok = img.(string); !ok {
			return nil, fmt.Errorf("%s.image is %s, not an image reference", at, describe(m["image"]))
		}
		if n, present := m["name"]; present {
			if ct.Name, ok = n.(string); !ok {
				return nil, fmt.Errorf("%s.name is %s, not a name", at, describe(n))
			}
		}
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
		out = append(out, ct)
	}
	return out, nil
}

// WorkloadCheck returns a blocker for every object that carries containers
// deploy-web cannot read (PodContainers): their images could not be
// checked, so the object is refused as an unknown workload kind.
func WorkloadCheck(objs []*unstructured.Unstructured) []Blocker {
	var out []Blocker
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() == appcr.Kind.GroupKind() {
			continue
		}
		_, _, err := PodContainers(o)
		if err == nil {
			continue
		}
		ref := o.GetKind() + "/" + o.GetName()
		out = append(out, Blocker{ID: "unknown-workload:" + ref,
			Message:     fmt.Sprintf("%s (%s) carries containers deploy-web cannot read: %v; its images cannot be checked, so it is refused as an unknown workload kind", ref, o.GetAPIVersion(), err),
			UnblockHint: "give every containers, initContainers and ephemeralContainers field the pod spec's shape (a list of containers, each with a string image), or remove the object"})
	}
	return out
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
