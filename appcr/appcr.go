// Package appcr holds the App CR contract of DESIGN.md that the dashboard and
// the reference operator share: the default resource, the labels and
// annotations, and how a declared version is read from an image reference.
package appcr

import (
	"regexp"

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
	// RestartedAtAnnotation on a pod template asks for its pods to be
	// replaced (its value is a time): the one `kubectl rollout restart`
	// and deploy-web's restart set. A restart request, never drift.
	RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"
)

// Field managers of the contract: the names under which deploy-web and the
// reference operator write (server-side apply, patches, creates), so
// managedFields tell their fields apart and from everyone else's. Each is
// also the app.kubernetes.io/managed-by value of the objects its writer
// manages.
const (
	// FieldManager is deploy-web's field manager: applies, rollbacks,
	// syncs, its own ConfigMaps and Leases.
	FieldManager = "deploy-web"
	// OperatorManager is the reference operator's field manager (the
	// default of --operator-managers).
	OperatorManager = "hanzo-operator"
)

// cleanSemver is MAJOR.MINOR.PATCH with an optional leading v: no
// pre-release, no build metadata, no leading zeros, nothing around it.
var cleanSemver = regexp.MustCompile(`^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

// IsCleanSemver reports whether a version (an image tag) is a clean semver,
// the only kind rollback accepts.
func IsCleanSemver(v string) bool { return cleanSemver.MatchString(v) }
