package diffrender

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
)

// LastAppliedAnnotation is the annotation in which kubectl apply records the
// manifest it applied; [LastApplied] reads it as the desired state.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// droppedMetadata lists the metadata fields [Normalize] removes: all are
// written by the API server, none by the author of a manifest.
var droppedMetadata = []string{
	"managedFields",
	"resourceVersion",
	"uid",
	"generation",
	"creationTimestamp",
	"selfLink",
}

// droppedAnnotations lists the annotations [Normalize] removes: the applied
// manifest itself (large, and the desired side of the diff already) and the
// Deployment controller's rollout counter.
var droppedAnnotations = []string{
	LastAppliedAnnotation,
	"deployment.kubernetes.io/revision",
}

// Normalize returns a deep copy of obj prepared for display and comparison.
// It removes
//
//   - status;
//   - metadata.managedFields, metadata.resourceVersion, metadata.uid,
//     metadata.generation, metadata.creationTimestamp and metadata.selfLink;
//   - the annotations kubectl.kubernetes.io/last-applied-configuration and
//     deployment.kubernetes.io/revision;
//   - metadata.annotations and metadata.labels when they are empty or null
//     (after the removals above).
//
// Everything else is kept, including metadata.namespace, ownerReferences and
// deletionTimestamp, which say something about the object. Normalize never
// mutates obj, and the result shares no maps or slices with it. Normalize(nil)
// is nil.
func Normalize(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	out := copyMap(obj)
	delete(out, "status")
	md, ok := out["metadata"].(map[string]any)
	if !ok {
		return out
	}
	for _, k := range droppedMetadata {
		delete(md, k)
	}
	if ann, ok := md["annotations"].(map[string]any); ok {
		for _, k := range droppedAnnotations {
			delete(ann, k)
		}
	}
	for _, k := range []string{"annotations", "labels"} {
		if v, ok := md[k]; ok && isEmptyMap(v) {
			delete(md, k)
		}
	}
	return out
}

// isEmptyMap reports whether v is null or a map with no entries.
func isEmptyMap(v any) bool {
	if v == nil {
		return true
	}
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// LastApplied returns the desired manifest kubectl apply recorded in obj's
// kubectl.kubernetes.io/last-applied-configuration annotation, or nil and
// no error when obj has no such annotation (the object was created some
// other way). Numbers decode as json.Number, so large integers stay exact.
func LastApplied(obj map[string]any) (map[string]any, error) {
	md, _ := obj["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	raw, ok := ann[LastAppliedAnnotation]
	if !ok || raw == nil {
		return nil, nil
	}
	s, ok := raw.(string)
	if !ok {
		return nil, fmt.Errorf("diffrender: annotation %s is a %T, not a string", LastAppliedAnnotation, raw)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var desired map[string]any
	if err := dec.Decode(&desired); err != nil {
		return nil, fmt.Errorf("diffrender: decode %s: %w", LastAppliedAnnotation, err)
	}
	return desired, nil
}

// mergeKeys are the element keys, tried in order, by which
// [RestrictToDesired] pairs the elements of two lists of objects. They cover
// the patch merge keys of the core workload types: name (containers, env,
// volumes, volumeMounts, named ports, ...), containerPort (unnamed container
// ports), port (unnamed Service ports), mountPath, devicePath, type
// (conditions, readiness gates) and ip (hostAliases).
var mergeKeys = []string{"name", "containerPort", "port", "mountPath", "devicePath", "type", "ip"}

// quantityParents are the map keys whose values are resource quantities
// (a ResourceRequirements' limits and requests, a ResourceQuota's hard), and
// quantityKeys the keys that hold one quantity. The API server canonicalises
// quantities (cpu: 0.5 becomes "500m", memory: 1 becomes "1"), so
// [RestrictToDesired] compares them by value.
var (
	quantityParents = map[string]bool{"limits": true, "requests": true, "hard": true}
	quantityKeys    = map[string]bool{"sizeLimit": true, "storage": true}
)

// RestrictToDesired returns live restricted to the fields that desired sets,
// the way a three-way or server-side-apply diff ignores the fields the API
// server or a controller defaulted (strategy, imagePullPolicy,
// terminationMessagePath, clusterIP, ...):
//
//   - maps recurse key by key: keys desired lacks are dropped from live, and
//     keys live lacks stay absent, so a field desired sets that live lacks
//     shows as removed;
//   - lists of objects pair their elements by the first key in name,
//     containerPort, port, mountPath, devicePath, type, ip that every element
//     of both lists has with a scalar value unique within its list, else by
//     index; paired elements are restricted in turn, live elements with no
//     partner (a container added by hand) are kept whole, in live's order;
//   - scalars, lists of scalars and values whose type differs from desired's
//     are kept as live has them, except that a resource quantity (under
//     limits, requests or hard, or a sizeLimit or storage field) equal in
//     value to desired's takes desired's spelling ("500m" for 0.5).
//
// An object not changed since it was applied therefore shows no difference,
// while a hand edit of a field the desired manifest sets (replicas 3 -> 5, an
// image, an env value, a removed env var) does. Neither argument is mutated;
// the result shares no maps or slices with them. If desired or live is nil,
// the result is nil.
func RestrictToDesired(desired, live map[string]any) map[string]any {
	if desired == nil || live == nil {
		return nil
	}
	return restrictMap(desired, live)
}

func restrictMap(desired, live map[string]any) map[string]any {
	out := make(map[string]any, len(desired))
	for k, dv := range desired {
		lv, ok := live[k]
		if !ok {
			continue
		}
		switch {
		case quantityParents[k]:
			out[k] = restrictQuantities(dv, lv)
		case quantityKeys[k]:
			out[k] = sameQuantity(dv, lv)
		default:
			out[k] = restrict(dv, lv)
		}
	}
	return out
}

// restrict restricts the live value lv to the shape of the desired value dv.
func restrict(dv, lv any) any {
	switch d := dv.(type) {
	case map[string]any:
		if l, ok := lv.(map[string]any); ok {
			return restrictMap(d, l)
		}
	case []any:
		if l, ok := lv.([]any); ok {
			return restrictList(d, l)
		}
	}
	return copyValue(lv)
}

// restrictList pairs the elements of two lists of objects by merge key or
// by index; lists of scalars are atomic and kept as live has them.
func restrictList(desired, live []any) []any {
	if !allMaps(desired) || !allMaps(live) {
		return copySlice(live)
	}
	out := make([]any, len(live))
	if key, ok := listMergeKey(desired, live); ok {
		byKey := make(map[string]map[string]any, len(desired))
		for _, e := range desired {
			m := e.(map[string]any)
			byKey[scalarKey(m[key])] = m
		}
		for i, e := range live {
			l := e.(map[string]any)
			if d, ok := byKey[scalarKey(l[key])]; ok {
				out[i] = restrictMap(d, l)
			} else {
				out[i] = copyMap(l)
			}
		}
		return out
	}
	for i, e := range live {
		l := e.(map[string]any)
		if i < len(desired) {
			out[i] = restrictMap(desired[i].(map[string]any), l)
		} else {
			out[i] = copyMap(l)
		}
	}
	return out
}

func allMaps(s []any) bool {
	for _, e := range s {
		if _, ok := e.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// listMergeKey returns the first of mergeKeys that every element of both
// lists has, with a scalar value unique within its list.
func listMergeKey(desired, live []any) (string, bool) {
	for _, key := range mergeKeys {
		if uniqueScalarKey(desired, key) && uniqueScalarKey(live, key) {
			return key, true
		}
	}
	return "", false
}

func uniqueScalarKey(list []any, key string) bool {
	seen := make(map[string]bool, len(list))
	for _, e := range list {
		v, ok := e.(map[string]any)[key]
		if !ok || !isScalar(v) {
			return false
		}
		k := scalarKey(v)
		if seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}

// isScalar reports whether v is a JSON string, number or bool.
func isScalar(v any) bool {
	_, ok := scalarString(v)
	return ok
}

// scalarKey is the string form by which list elements are paired, so that
// a port decoded as float64 (encoding/json) pairs with the same port decoded
// as int64 (unstructured).
func scalarKey(v any) string {
	s, _ := scalarString(v)
	return s
}

// scalarString formats a JSON scalar; ok is false for anything else.
func scalarString(v any) (s string, ok bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return string(v), true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(v), 'f', -1, 32), true
	case int:
		return strconv.Itoa(v), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case int32:
		return strconv.FormatInt(int64(v), 10), true
	}
	return "", false
}

// restrictQuantities restricts a map of resource quantities (limits,
// requests, hard), comparing each quantity by value.
func restrictQuantities(dv, lv any) any {
	d, ok1 := dv.(map[string]any)
	l, ok2 := lv.(map[string]any)
	if !ok1 || !ok2 {
		return restrict(dv, lv)
	}
	out := make(map[string]any, len(d))
	for k, dq := range d {
		if lq, ok := l[k]; ok {
			out[k] = sameQuantity(dq, lq)
		}
	}
	return out
}

// sameQuantity returns desired's spelling of a quantity when live's is equal
// in value, and live's otherwise.
func sameQuantity(dv, lv any) any {
	ds, ok1 := scalarString(dv)
	ls, ok2 := scalarString(lv)
	if !ok1 || !ok2 {
		return restrict(dv, lv)
	}
	dq, err1 := resource.ParseQuantity(ds)
	lq, err2 := resource.ParseQuantity(ls)
	if err1 == nil && err2 == nil && dq.Cmp(lq) == 0 {
		return dv
	}
	return lv
}

// copyValue deep-copies maps and slices; other values are immutable or
// opaque and returned as they are.
func copyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return copyMap(v)
	case []any:
		return copySlice(v)
	}
	return v
}

func copyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

func copySlice(s []any) []any {
	if s == nil {
		return nil
	}
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = copyValue(v)
	}
	return out
}
