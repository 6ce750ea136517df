package deployplan

import (
	"context"
	"fmt"
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hanzoai/deploy-web/objrules"
)

// Client rate limits of the engine (client-go's defaults, 5 QPS and a
// burst of 10, throttle a plan of a few dozen objects to tens of seconds).
// docs/plan-and-apply.md ("Commands") documents them.
const (
	ClientQPS   = 50
	ClientBurst = 100
)

// dryRunParallelism bounds the objects read and dry-run at the same time.
const dryRunParallelism = 8

// dryResult is one object's live state and server-side dry-run apply.
type dryResult struct {
	live    *unstructured.Unstructured // nil when absent
	readErr error                      // the live read failed (then dry is not tried)
	dry     *unstructured.Unstructured
	dryErr  error
}

// dryRunAll reads every object's live state and dry-runs its apply, at
// most dryRunParallelism at a time; results[i] is objs[i]'s. Nothing is
// written (every apply is DryRunAll).
func (c *clients) dryRunAll(ctx context.Context, objs []*unstructured.Unstructured) []dryResult {
	results := make([]dryResult, len(objs))
	forEachBounded(len(objs), dryRunParallelism, func(i int) {
		o, r := objs[i], &results[i]
		for attempt := 0; ; attempt++ {
			r.live, r.readErr = c.get(ctx, o)
			if r.readErr != nil {
				return
			}
			r.dry, r.dryErr = c.apply(ctx, o, true)
			// A controller that wrote the object between the read and
			// the dry-run (a Deployment's revision annotation right
			// after an apply) would read as a change: compare against
			// the object the dry-run saw, read again (twice at most).
			if attempt == 2 || !movedBetween(r.live, r.dry, r.dryErr) {
				return
			}
		}
	})
	return results
}

// movedBetween says whether the live object changed between its read and
// the dry-run that followed (another resourceVersion under the dry-run) in
// a way that makes the plan see a change.
func movedBetween(live, dry *unstructured.Unstructured, dryErr error) bool {
	return dryErr == nil && live != nil && dry != nil &&
		live.GetResourceVersion() != dry.GetResourceVersion() &&
		ObjectAction(live, dry) != ActionUnchanged
}

// objectDrift is the drift of a live object that deploy-web applied: the
// fields that managers other than deploy-web set and deploy-web does not
// own (objrules.Drift, the console's model: Kubernetes' own writes are not
// drift). An object deploy-web never applied has none (it is not yet
// managed: everything on it was set by someone else), and neither has a
// Secret (its managed fields are never kept).
//
// A Deployment or StatefulSet scaled through the scale subresource while
// no one owned its count has no manager to show (objrules.UnrecordedScale):
// it is drift too, unless autoscaled (an HPA the render holds targets it).
func objectDrift(live *unstructured.Unstructured, autoscaled bool) []objrules.DriftField {
	if live == nil || isSecret(live) {
		return nil
	}
	applied := false
	for _, e := range live.GetManagedFields() {
		if e.Manager == FieldManager {
			applied = true
			break
		}
	}
	if !applied {
		return nil
	}
	drift := objrules.Drift(live.GetKind(), live.GetManagedFields(), func() map[string]any { return live.Object },
		objrules.DriftRules{OperatorManagers: []string{FieldManager}})
	if d, ok := objrules.UnrecordedScale(live.GetKind(), live.GetManagedFields(), live.Object, autoscaled); ok {
		drift = append(drift, d)
	}
	return drift
}

// autoscaledTargets names ("Kind/name") the objects a rendered
// HorizontalPodAutoscaler scales.
func autoscaledTargets(objs []*unstructured.Unstructured) map[string]bool {
	out := map[string]bool{}
	for _, o := range objs {
		if o.GetKind() != "HorizontalPodAutoscaler" || o.GroupVersionKind().Group != "autoscaling" {
			continue
		}
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "scaleTargetRef", "kind")
		name, _, _ := unstructured.NestedString(o.Object, "spec", "scaleTargetRef", "name")
		if kind != "" && name != "" {
			out[kind+"/"+name] = true
		}
	}
	return out
}

// hpaResource is autoscaling/v2's HorizontalPodAutoscalers.
var hpaResource = schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}

// liveAutoscalers maps the objects ("Kind/name") the live
// HorizontalPodAutoscalers of namespace ns target to the HPA's name: an
// HPA that left the render but is still live (an orphan until pruned)
// still sets its target's replica count, which is then no hand drift. A
// list that fails gives none (the drift then stays as it reads).
func (c *clients) liveAutoscalers(ctx context.Context, ns string) map[string]string {
	out := map[string]string{}
	list, err := c.dyn.Resource(hpaResource).Namespace(ns).List(ctx, metav1.ListOptions{Limit: 500})
	if err != nil {
		return out
	}
	for i := range list.Items {
		o := &list.Items[i]
		kind, _, _ := unstructured.NestedString(o.Object, "spec", "scaleTargetRef", "kind")
		name, _, _ := unstructured.NestedString(o.Object, "spec", "scaleTargetRef", "name")
		if kind != "" && name != "" {
			out[kind+"/"+name] = o.GetName()
		}
	}
	return out
}

// leftRenderAutoscaled marks in autoscaled (the targets of the rendered
// HPAs) each rendered object whose replica count a live
// HorizontalPodAutoscaler that left the render still sets (hpas: target
// "Kind/name" to the HPA's name, liveAutoscalers), so its count is not
// hand drift, and returns the plan's warning for each, naming the HPA.
func leftRenderAutoscaled(objs []*unstructured.Unstructured, autoscaled map[string]bool, hpas map[string]string) []string {
	rendered := map[string]bool{}
	for _, o := range objs {
		rendered[ObjectRef(o)] = true
	}
	var warnings []string
	for _, ref := range slices.Sorted(maps.Keys(hpas)) {
		if hpa := hpas[ref]; !autoscaled[ref] && rendered[ref] {
			autoscaled[ref] = true
			warnings = append(warnings, leftRenderScale(ref, hpa))
		}
	}
	return warnings
}

// leftRenderScale is the warning of a plan whose object ref's replica
// count is set by HorizontalPodAutoscaler hpa, live but no longer
// rendered: the count is the autoscaler's, not a hand change.
func leftRenderScale(ref, hpa string) string {
	return fmt.Sprintf("%s: its replica count is set by HorizontalPodAutoscaler/%s, which is live but not rendered (left the render: an orphan that apply --prune removes); the count is the autoscaler's, not a hand change, and stays until an apply sets one (set replicas in the manifest)", ref, hpa)
}
