// Package appcr holds the App CR contract of DESIGN.md that the dashboard and
// the reference operator share: the default resource, the labels and
// annotations, and how a declared version is read from an image reference.
package appcr

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The default App resource (group hanzo.ai, version v1, kind App).
var (
	GroupVersion = schema.GroupVersion{Group: "hanzo.ai", Version: "v1"}
	Resource     = GroupVersion.WithResource("apps")
	Kind         = GroupVersion.WithKind("App")
)

// Labels and annotations of the contract.
const (
	// InstanceLabel names the App on every child the operator renders.
	InstanceLabel = "app.kubernetes.io/instance"
	// NameLabel, ManagedByLabel and VersionLabel are the other recommended
	// labels the reference operator sets.
	NameLabel      = "app.kubernetes.io/name"
	ManagedByLabel = "app.kubernetes.io/managed-by"
	VersionLabel   = "app.kubernetes.io/version"
	// SyncRequestedAnnotation on the App asks the operator to reconcile; its
	// value is an RFC 3339 time.
	SyncRequestedAnnotation = "hanzo.ai/sync-requested-at"
	// LastAppliedAnnotation carries the rendered (desired) manifest of a child.
	LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
)

// ImageTag returns the tag of an image reference: "1.2.0" for
// "ghcr.io/acme/web:1.2.0". It is "" when the reference has no tag (a bare
// name or only a digest).
func ImageTag(image string) string {
	ref := image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	slash := strings.LastIndex(ref, "/")
	colon := strings.LastIndex(ref, ":")
	if colon > slash {
		return ref[colon+1:]
	}
	return ""
}

// WithTag returns image with its tag replaced by tag (added when missing),
// keeping the repository and dropping any digest.
func WithTag(image, tag string) string {
	ref := image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	slash := strings.LastIndex(ref, "/")
	if colon := strings.LastIndex(ref, ":"); colon > slash {
		ref = ref[:colon]
	}
	return ref + ":" + tag
}

// cleanSemver is MAJOR.MINOR.PATCH with an optional leading v: no
// pre-release, no build metadata, no leading zeros, nothing around it.
var cleanSemver = regexp.MustCompile(`^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

// IsCleanSemver reports whether a version (an image tag) is a clean semver,
// the only kind rollback accepts.
func IsCleanSemver(v string) bool { return cleanSemver.MatchString(v) }
