// Package diffrender compares the desired and the live state of one
// Kubernetes object and models the difference for display, side by side
// (ArgoCD / GitHub style) or inline.
//
// The pipeline, which [Manifests] runs for one object, has three steps:
//
//  1. [Normalize] drops the fields the server owns (status, managedFields,
//     resourceVersion, ...) from both manifests.
//  2. [RestrictToDesired] keeps of the live manifest only the fields the
//     desired manifest sets, so that fields the API server or a controller
//     defaulted do not show as differences, while a hand edit of a field
//     the desired state sets does.
//  3. [YAML] renders both with a stable key order and [Compute] diffs the
//     two texts line by line (Myers' algorithm) into aligned side-by-side
//     rows ([Row]), which [Diff.Hunks] groups for the compact view,
//     [Diff.Unified] orders for the inline view and [Diff.UnifiedText]
//     writes as a unified diff.
//
// One direction everywhere, ArgoCD's and kubectl diff's: the live object
// is the left side, "before", and the desired state the right side,
// "after". A line only in the desired state is an [Insert] (green, "+":
// a sync or an apply adds it), a line only in the live object a [Delete]
// (red, "-"), and Added and Removed count those. The resource panel, the
// JSON API's unified text and an environment plan's per-object diffs all
// read a diff this way; nothing downstream swaps the sides.
//
// The package is pure: it does no I/O, knows nothing of HTTP, the cluster or
// HTML, and never mutates its arguments. Manifests are the JSON-shaped values
// that encoding/json, sigs.k8s.io/yaml and unstructured.Unstructured hold:
// map[string]any, []any, string, bool, nil and numbers.
package diffrender
