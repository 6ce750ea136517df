package deployplan

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ObjectAction is the one comparison of a live object with what a
// server-side apply makes of it: the dry-run's result in a plan, the
// apply's response after it (Apply records "unchanged" exactly when this
// says ActionUnchanged). Create when there is no live object, unchanged
// when nothing would be written, else update.
//
// "Nothing would be written" includes the field ownership: an apply that
// only takes back shared ownership of fields another manager set to the
// same values (after kubectl rollout undo, kubectl apply of the same
// manifest) writes the object (a new resourceVersion), so it is an update,
// and the plan's changes say so (ownership). Only the managed fields'
// timestamps are left out: the API server itself keeps them when nothing
// else changes.
func ObjectAction(live, after *unstructured.Unstructured) string {
	if live == nil {
		return ActionCreate
	}
	if after == nil {
		return ActionUnknown
	}
	if reflect.DeepEqual(comparable(live), comparable(after)) {
		return ActionUnchanged
	}
	return ActionUpdate
}

// ownershipKey is the key comparable keeps the managed fields under; it is
// not a valid field name, so no object has it.
const ownershipKey = "(ownership)"

// comparable is u without what every write changes (resourceVersion,
// generation, status, the managed fields' timestamps) and with its managed
// fields as a map from manager to field set.
func comparable(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy().Object
	unstructured.RemoveNestedField(c, "status")
	for _, f := range []string{"managedFields", "resourceVersion", "generation", "creationTimestamp", "uid"} {
		unstructured.RemoveNestedField(c, "metadata", f)
	}
	if own := ownership(u.GetManagedFields()); len(own) > 0 {
		c[ownershipKey] = own
	}
	return c
}

// ownership maps each managed-fields entry (manager, operation,
// subresource, apiVersion) to its field set, times left out.
func ownership(mfs []metav1.ManagedFieldsEntry) map[string]string {
	if len(mfs) == 0 {
		return nil
	}
	out := make(map[string]string, len(mfs))
	for _, e := range mfs {
		set := ""
		if e.FieldsV1 != nil {
			set = string(e.FieldsV1.Raw)
		}
		out[ownerName(e)] = set
	}
	return out
}

// ownerName names a managed-fields entry as a user reads it: the manager,
// with its operation, and its subresource when it wrote through one
// ("kubectl-patch (Update)", "kube-controller-manager (Update, scale)").
func ownerName(e metav1.ManagedFieldsEntry) string {
	s := e.Manager + " (" + string(e.Operation)
	if e.Subresource != "" {
		s += ", " + e.Subresource
	}
	if e.APIVersion != "" {
		s += ", " + e.APIVersion
	}
	return s + ")"
}
