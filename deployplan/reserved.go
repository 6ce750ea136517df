package deployplan

import (
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/internal/labels"
)

// historyName is the name of a plan history ConfigMap
// (deploy-web-<action>-<yyyymmdd>-<hhmmss>-<hex>, planstore).
var historyName = regexp.MustCompile(`^deploy-web-[a-z-]+-[0-9]{8}-[0-9]{6}-[0-9a-f]+$`)

// ownObjectKinds are the kinds of deploy-web's own install (deploy/base),
// all named "deploy-web".
var ownObjectKinds = map[string]bool{
	"/ServiceAccount": true, "apps/Deployment": true, "/Service": true, "/Secret": true, "/ConfigMap": true,
	"policy/PodDisruptionBudget": true, "rbac.authorization.k8s.io/Role": true, "rbac.authorization.k8s.io/RoleBinding": true,
}

// ReservedName says why deploy-web reserves the object's name, "" when it
// does not: the apply lock (Lease deploy-web-apply), the capture record
// (ConfigMap deploy-web-captures), a plan history ConfigMap, or one of
// deploy-web's own objects (named deploy-web). A manifest may not hold
// them: applying one would take the lock from under an apply, make a
// capture restorable, rewrite the history or deploy-web itself.
func ReservedName(u *unstructured.Unstructured) string {
	gvk := u.GroupVersionKind()
	gk := gvk.Group + "/" + gvk.Kind
	switch {
	case gk == "coordination.k8s.io/Lease" && u.GetName() == LockName:
		return fmt.Sprintf("Lease %s is deploy-web's apply lock", LockName)
	case gk == "/ConfigMap" && u.GetName() == CaptureRecordName:
		return fmt.Sprintf("ConfigMap %s is deploy-web's record of the captures its applies wrote", CaptureRecordName)
	case gk == "/ConfigMap" && (u.GetLabels()[labels.Kind] != "" || historyName.MatchString(u.GetName())):
		return fmt.Sprintf("ConfigMap %s is (or is named like) a deploy-web plan history entry", u.GetName())
	case ownObjectKinds[gk] && u.GetName() == "deploy-web":
		return fmt.Sprintf("%s deploy-web is deploy-web's own object", gvk.Kind)
	}
	return ""
}

// ReservedCheck returns a blocker for every object whose name deploy-web
// reserves (ReservedName).
func ReservedCheck(objs []*unstructured.Unstructured) []Blocker {
	var out []Blocker
	for _, o := range objs {
		why := ReservedName(o)
		if why == "" {
			continue
		}
		ref := o.GetKind() + "/" + o.GetName()
		out = append(out, Blocker{ID: "reserved-name:" + ref,
			Message:     fmt.Sprintf("%s: %s; a manifest may not hold it", ref, why),
			UnblockHint: "rename the object or remove it from the kustomization: names deploy-web uses for itself are never applied"})
	}
	return dedupeBlockers(out)
}
