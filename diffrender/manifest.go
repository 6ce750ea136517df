package diffrender

import (
	"errors"
	"fmt"
)

// ErrSecret is returned by [Manifests] for a core v1 Secret: deploy-web
// never shows a Secret's manifest or diff, and this package refuses to
// render one even if a caller's kind check fails.
var ErrSecret = errors.New("diffrender: refusing to render a Secret")

// ManifestDiff is the comparison of one object's desired and live states.
type ManifestDiff struct {
	// DesiredYAML is the normalised desired manifest, the right side
	// ("after") of Diff.
	DesiredYAML string
	// LiveYAML is the normalised live manifest restricted to the fields the
	// desired manifest sets, the left side ("before") of Diff. Without a
	// desired state it is the whole normalised live manifest.
	LiveYAML string
	// LiveFullYAML is the whole normalised live manifest, defaulted fields
	// included, for a "live manifest" view.
	LiveFullYAML string
	// Diff is the line diff from LiveYAML to DesiredYAML.
	Diff Diff
	// NoDesired reports that there is no desired state (desired was nil):
	// Diff is empty and not Equal, and only the live manifest can be shown.
	NoDesired bool
	// NoLive reports that the object does not exist (live was nil): Diff
	// shows every desired line as inserted.
	NoLive bool
}

// Manifests compares one object's desired and live manifests: it normalises
// both ([Normalize]), restricts the live one to the fields the desired one
// sets ([RestrictToDesired]), renders both as YAML ([YAML]) and diffs the
// two texts ([Compute]), live on the left and desired on the right. A nil desired means there is no desired state, a
// nil live that the object is missing. Neither argument is mutated.
// Manifests returns [ErrSecret] if either manifest is a core v1 Secret.
func Manifests(desired, live map[string]any) (ManifestDiff, error) {
	return ManifestsIncluding(desired, live, nil)
}

// ManifestsIncluding is [Manifests] that also keeps on the live side the
// fields of extra, a part of the live manifest that the desired one need
// not set: the fields changed outside the operator (drift). Each shows as a
// line only the live object has, as a hand edit of a desired field does.
// Only the fields of extra that live has, with live's values, are shown;
// extra's own values never reach the diff. A nil extra is [Manifests].
func ManifestsIncluding(desired, live, extra map[string]any) (ManifestDiff, error) {
	if isSecret(desired) || isSecret(live) {
		return ManifestDiff{}, ErrSecret
	}
	var md ManifestDiff
	nd, nl := Normalize(desired), Normalize(live)
	md.NoDesired, md.NoLive = desired == nil, live == nil

	var err error
	if md.LiveFullYAML, err = renderYAML(nl); err != nil {
		return ManifestDiff{}, fmt.Errorf("diffrender: live manifest: %w", err)
	}
	if md.NoDesired {
		md.LiveYAML = md.LiveFullYAML
		return md, nil
	}
	if md.DesiredYAML, err = renderYAML(nd); err != nil {
		return ManifestDiff{}, fmt.Errorf("diffrender: desired manifest: %w", err)
	}
	mask := nd
	if extra != nil {
		mask = unionFields(nd, Normalize(extra), "")
	}
	if md.LiveYAML, err = renderYAML(RestrictToDesired(mask, nl)); err != nil {
		return ManifestDiff{}, fmt.Errorf("diffrender: live manifest: %w", err)
	}
	md.Diff = Compute(md.LiveYAML, md.DesiredYAML)
	return md, nil
}

// isSecret reports whether obj is a core (v1) Secret.
func isSecret(obj map[string]any) bool {
	return obj != nil && obj["kind"] == "Secret" && obj["apiVersion"] == "v1"
}

// unionFields returns the fields of a and of b as one manifest, for
// [RestrictToDesired]: where both set a scalar, a's value is kept; maps
// merge key by key; lists of objects merge element by element, paired by
// merge key (or by index), b's unpaired elements appended. A quantity only
// b sets has no value in the result, so that the restriction keeps live's
// spelling of it, never b's. parent is the key that holds a and b ("" at
// the top). Neither argument is mutated and the result shares nothing with
// them.
func unionFields(a, b map[string]any, parent string) map[string]any {
	out := copyMap(a)
	if out == nil {
		out = make(map[string]any, len(b))
	}
	for k, bv := range b {
		av, ok := out[k]
		if !ok {
			out[k] = maskValue(parent, k, bv)
			continue
		}
		out[k] = unionValue(k, av, bv)
	}
	return out
}

func unionValue(k string, av, bv any) any {
	switch a := av.(type) {
	case map[string]any:
		if b, ok := bv.(map[string]any); ok {
			return unionFields(a, b, k)
		}
	case []any:
		if b, ok := bv.([]any); ok && allMaps(a) && allMaps(b) {
			return unionLists(k, a, b)
		}
	}
	return av
}

func unionLists(k string, a, b []any) []any {
	out := copySlice(a)
	if key, ok := listMergeKey(a, b); ok {
		at := make(map[string]int, len(a))
		for i, e := range a {
			at[scalarKey(e.(map[string]any)[key])] = i
		}
		for _, e := range b {
			m := e.(map[string]any)
			if i, ok := at[scalarKey(m[key])]; ok {
				out[i] = unionFields(out[i].(map[string]any), m, k)
			} else {
				out = append(out, maskValue(k, "", m))
			}
		}
		return out
	}
	for i, e := range b {
		if i < len(out) {
			out[i] = unionFields(out[i].(map[string]any), e.(map[string]any), k)
		} else {
			out = append(out, maskValue(k, "", e))
		}
	}
	return out
}

// maskValue copies the value v of key k (under parent) for the mask of
// [RestrictToDesired], with no value for a quantity: restrict then keeps
// live's value, as it does for every other scalar.
func maskValue(parent, k string, v any) any {
	if quantityParents[parent] || quantityKeys[k] {
		if isScalar(v) {
			return nil
		}
	}
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for kk, e := range v {
			out[kk] = maskValue(k, kk, e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = maskValue(k, "", e)
		}
		return out
	}
	return v
}
