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
	// DesiredYAML is the normalised desired manifest, the left side of Diff.
	DesiredYAML string
	// LiveYAML is the normalised live manifest restricted to the fields the
	// desired manifest sets, the right side of Diff. Without a desired
	// state it is the whole normalised live manifest.
	LiveYAML string
	// LiveFullYAML is the whole normalised live manifest, defaulted fields
	// included, for a "live manifest" view.
	LiveFullYAML string
	// Diff is the line diff of DesiredYAML and LiveYAML.
	Diff Diff
	// NoDesired reports that there is no desired state (desired was nil):
	// Diff is empty and not Equal, and only the live manifest can be shown.
	NoDesired bool
	// NoLive reports that the object does not exist (live was nil): Diff
	// shows every desired line as deleted.
	NoLive bool
}

// Manifests compares one object's desired and live manifests: it normalises
// both ([Normalize]), restricts the live one to the fields the desired one
// sets ([RestrictToDesired]), renders both as YAML ([YAML]) and diffs the
// two texts ([Compute]). A nil desired means there is no desired state, a
// nil live that the object is missing. Neither argument is mutated.
// Manifests returns [ErrSecret] if either manifest is a core v1 Secret.
func Manifests(desired, live map[string]any) (ManifestDiff, error) {
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
	if md.LiveYAML, err = renderYAML(RestrictToDesired(nd, nl)); err != nil {
		return ManifestDiff{}, fmt.Errorf("diffrender: live manifest: %w", err)
	}
	md.Diff = Compute(md.DesiredYAML, md.LiveYAML)
	return md, nil
}

// isSecret reports whether obj is a core (v1) Secret.
func isSecret(obj map[string]any) bool {
	return obj != nil && obj["kind"] == "Secret" && obj["apiVersion"] == "v1"
}
