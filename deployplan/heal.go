package deployplan

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/objrules"
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
	Fields []objrules.DriftField
}

// Drifted reads, from the cluster of rc, the live object of each of objs
// (the environment's rendered objects, under the namespace rule; those of
// another namespace and Secrets are skipped) and returns those with drift, sorted by Ref: the
// drift model of a plan (objectDrift), so an object deploy-web never
// applied has none. An object that does not exist has none either.
func Drifted(ctx context.Context, env *envconfig.Environment, rc *rest.Config, objs []*unstructured.Unstructured) ([]DriftedObject, error) {
	cl, err := newClients(rc)
	if err != nil {
		return nil, err
	}
	autoscaled := autoscaledTargets(objs)
	for ref := range cl.liveAutoscalers(ctx, env.Namespace) {
		autoscaled[ref] = true // an HPA that left the render still scales it
	}
	var out []DriftedObject
	for _, o := range WithNamespace(objs, env.Namespace, cl.scope) {
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

// How a self-heal treats one drifted field (FieldHeal.Action).
const (
	// HealPutBack: git sets the field; the heal's forced apply puts git's
	// value back.
	HealPutBack = "put back"
	// HealRemove: git does not set the field; the heal removes it (a JSON
	// patch: test, then remove), with selfHeal prune: fields.
	HealRemove = "removed"
	// HealCannot: the field cannot be healed (prune: none, or the write
	// failed); Why says "owned by X".
	HealCannot = "cannot heal"
)

// FieldHeal is one drifted field of a self-heal and what the heal does,
// or did, with it.
type FieldHeal struct {
	// Ref is ObjectRef of the object.
	Ref    string
	Field  objrules.DriftField
	Action string
	// Why says why a field cannot be healed ("owned by kubectl-set").
	Why string
}

// String is how a record names it: "Deployment/api spec.replicas = 5
// (by kubectl-scale): removed".
func (h FieldHeal) String() string {
	s := fmt.Sprintf("%s %s = %s (by %s): %s", h.Ref, h.Field.Path, h.Field.Live, h.Field.Manager, h.Action)
	if h.Why != "" {
		s += ": " + h.Why
	}
	return s
}

// Key names the drifted field and its live value, for remembering one
// that cannot be healed until it changes.
func (h FieldHeal) Key() string {
	return h.Ref + "\x00" + h.Field.Path + "\x00" + h.Field.Manager + "\x00" + h.Field.Live
}

// PlanHeal reads the drifted fields of the objects refs names (ObjectRef)
// among objs (the environment's rendered objects, under the namespace
// rule) and says what a heal does with each: HealPutBack for a field the
// rendered object sets, else HealRemove when prune, else HealCannot
// ("owned by" its manager).
func PlanHeal(ctx context.Context, env *envconfig.Environment, rc *rest.Config, objs []*unstructured.Unstructured, refs []string, prune bool) ([]FieldHeal, error) {
	drifted, err := Drifted(ctx, env, rc, objs)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, r := range refs {
		want[r] = true
	}
	desired := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		desired[ObjectRef(o)] = o
	}
	var out []FieldHeal
	for _, d := range drifted {
		if !want[d.Ref] || desired[d.Ref] == nil {
			continue
		}
		for _, f := range d.Fields {
			h := FieldHeal{Ref: d.Ref, Field: f, Action: HealPutBack}
			switch {
			case f.SetIn(desired[d.Ref].Object):
			case prune:
				h.Action = HealRemove
			default:
				h.Action, h.Why = HealCannot, "owned by "+f.Manager+" (selfHeal prune: none)"
			}
			out = append(out, h)
		}
	}
	return out, nil
}

// RemoveFields removes the fields of heals marked HealRemove, one write
// each: the object read again, then a JSON patch that tests the field's
// live value and removes it (field manager FieldManager), so nothing else
// changes and a field that moved meanwhile is left alone. A field that
// cannot be removed (gone, moved, the write refused) comes back as
// HealCannot, "owned by" its manager, with the reason. Others are
// returned as they are.
func RemoveFields(ctx context.Context, env *envconfig.Environment, rc *rest.Config, objs []*unstructured.Unstructured, heals []FieldHeal) ([]FieldHeal, error) {
	cl, err := newClients(rc)
	if err != nil {
		return nil, err
	}
	byRef := map[string]*unstructured.Unstructured{}
	for _, o := range WithNamespace(objs, env.Namespace, cl.scope) {
		byRef[ObjectRef(o)] = o
	}
	out := make([]FieldHeal, len(heals))
	for i, h := range heals {
		out[i] = h
		if h.Action != HealRemove {
			continue
		}
		o := byRef[h.Ref]
		cannot := func(why string) { out[i].Action, out[i].Why = HealCannot, "owned by "+h.Field.Manager+": "+why }
		if o == nil || o.GetNamespace() != env.Namespace || isSecret(o) {
			cannot("not an object of the environment")
			continue
		}
		live, err := cl.get(ctx, o)
		if err != nil || live == nil {
			cannot("the object could not be read")
			continue
		}
		patch, ok := h.Field.RemovePatch(live.Object)
		if !ok {
			cannot("the field could not be addressed in the live object")
			continue
		}
		ri, _, err := cl.resource(o)
		if err != nil {
			cannot("the kind is not served")
			continue
		}
		if _, err := ri.Patch(ctx, o.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
			cannot("the removal was refused: " + shortErr(err))
		}
	}
	return out, nil
}

// VerifyHeal checks heals against the live objects after the heal's
// writes: a field still drifted (same path, manager and value) did not
// change, and comes back HealCannot ("owned by" its manager) unless it
// already was; the others are what the heal changed.
func VerifyHeal(ctx context.Context, env *envconfig.Environment, rc *rest.Config, objs []*unstructured.Unstructured, heals []FieldHeal) ([]FieldHeal, error) {
	drifted, err := Drifted(ctx, env, rc, objs)
	if err != nil {
		return nil, err
	}
	still := map[string]bool{}
	for _, d := range drifted {
		for _, f := range d.Fields {
			still[FieldHeal{Ref: d.Ref, Field: f}.Key()] = true
		}
	}
	out := make([]FieldHeal, len(heals))
	for i, h := range heals {
		out[i] = h
		if h.Action != HealCannot && still[h.Key()] {
			out[i].Action, out[i].Why = HealCannot, "owned by "+h.Field.Manager+": still live after the heal"
		}
	}
	return out, nil
}
