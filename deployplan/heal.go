package deployplan

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/kubeview"
)

// ObjectRef names a rendered object of an environment as the blockers and
// the self-heal do: "Kind/name" (the environment's namespace is implied).
func ObjectRef(o *unstructured.Unstructured) string {
	return o.GetKind() + "/" + o.GetName()
}

// ForceObjects keeps the objects named by refs (ObjectRef), except
// Secrets: as Options.Force, their dry-run and apply take over the fields
// another manager set, which puts a drifted object back (a self-heal).
func ForceObjects(refs []string) *ObjectFilter {
	set := map[string]bool{}
	for _, r := range refs {
		set[r] = true
	}
	sorted := slices.Sorted(maps.Keys(set))
	return &ObjectFilter{
		Name: "forced (self-heal): " + strings.Join(sorted, ", "),
		Keep: func(o *unstructured.Unstructured) bool { return !isSecret(o) && set[ObjectRef(o)] },
	}
}

// DriftedObject is a live object of an environment with drift: fields
// that managers other than deploy-web set and deploy-web does not own.
type DriftedObject struct {
	// Ref is ObjectRef of the object.
	Ref    string
	Fields []kubeview.DriftField
}

// Drifted reads, from the cluster of rc, the live object of each of objs
// (the environment's rendered objects; those of another namespace and
// Secrets are skipped) and returns those with drift, sorted by Ref: the
// drift model of a plan (objectDrift), so an object deploy-web never
// applied has none. An object that does not exist has none either.
func Drifted(ctx context.Context, env *Environment, rc *rest.Config, objs []*unstructured.Unstructured) ([]DriftedObject, error) {
	cl, err := newClients(rc)
	if err != nil {
		return nil, err
	}
	autoscaled := autoscaledTargets(objs)
	var out []DriftedObject
	for _, o := range objs {
		if o.GetNamespace() != env.Namespace || isSecret(o) {
			continue
		}
		live, err := cl.get(ctx, o)
		if err != nil {
			return nil, fmt.Errorf("deployplan: environment %s: read %s for its drift: %s", env.Name, ObjectRef(o), objErr(o, err))
		}
		if d := objectDrift(live, autoscaled[ObjectRef(o)]); len(d) > 0 {
			out = append(out, DriftedObject{Ref: ObjectRef(o), Fields: d})
		}
	}
	slices.SortFunc(out, func(a, b DriftedObject) int { return strings.Compare(a.Ref, b.Ref) })
	return out, nil
}
