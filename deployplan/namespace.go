package deployplan

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The namespace rule, written once: an object without a namespace is the
// environment's, when its kind is namespaced (as kubectl -n does); a
// cluster-scoped kind stays cluster-scoped. Whether a kind is namespaced
// is the cluster's answer (discovery, the clients' Scope) when a cluster
// is at hand, else OfflineScope's. The plan (BoundaryCheck), the apply,
// the records (written with the namespace the apply used, and older ones
// read with it), revdiff (records, refs and live) and the command line
// all go through InNamespace or WithNamespace.

// clusterScopedKinds are the cluster-scoped kinds of Kubernetes itself, by
// group, which a source plan knows without a cluster.
var clusterScopedKinds = map[string]bool{
	"/Namespace": true, "/Node": true, "/PersistentVolume": true,
	"rbac.authorization.k8s.io/ClusterRole": true, "rbac.authorization.k8s.io/ClusterRoleBinding": true,
	"apiextensions.k8s.io/CustomResourceDefinition": true, "apiregistration.k8s.io/APIService": true,
	"storage.k8s.io/StorageClass": true, "scheduling.k8s.io/PriorityClass": true, "networking.k8s.io/IngressClass": true,
	"admissionregistration.k8s.io/ValidatingWebhookConfiguration": true, "admissionregistration.k8s.io/MutatingWebhookConfiguration": true,
}

// OfflineScope is the Scope known without a cluster: the cluster-scoped
// kinds of Kubernetes itself, every other kind namespaced (only the
// cluster knows its CRDs).
func OfflineScope(gvk schema.GroupVersionKind) (namespaced, known bool) {
	return !clusterScopedKinds[gvk.Group+"/"+gvk.Kind], true
}

// InNamespace is the namespace o is in under the rule: its own, else ns
// when scope says its kind is namespaced (known or not: a kind the
// cluster does not serve is read as namespaced, and blocked by the
// plan), else "" (cluster-scoped).
func InNamespace(o *unstructured.Unstructured, ns string, scope Scope) string {
	if n := o.GetNamespace(); n != "" {
		return n
	}
	if namespaced, known := scope(o.GroupVersionKind()); namespaced || !known {
		return ns
	}
	return ""
}

// WithNamespace returns objs under the rule: each object without a
// namespace whose kind is namespaced is copied with namespace ns; the
// others are returned as they are. objs is not modified.
func WithNamespace(objs []*unstructured.Unstructured, ns string, scope Scope) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o
		if o == nil || o.GetNamespace() != "" {
			continue
		}
		if n := InNamespace(o, ns, scope); n != "" {
			c := o.DeepCopy()
			c.SetNamespace(n)
			out[i] = c
		}
	}
	return out
}
