// Package release is the one seam that turns "pin app X to version V" into a
// patch of the App CR, "sync app X" into the sync-request annotation, and
// a day-2 operation (restart, scale, suspend, resume, delete a pod; see
// Operate) into the one patch or delete of an object of the App's tree. The
// HTTP handlers and the plan engine both go through it, so the gate, the
// idempotence, the optimistic concurrency and the audit trail are the same
// everywhere.
package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/hanzoai/deploy-web/appcr"
)

// Event reasons written on the App.
const (
	ReasonRollback = "RollbackRequested"
	ReasonSync     = "SyncRequested"
)

// IsCleanSemver reports whether v is a clean semver version (see
// appcr.IsCleanSemver).
func IsCleanSemver(v string) bool { return appcr.IsCleanSemver(v) }

// The kinds of refusal a caller maps to answers (errors.Is). Rollback, Sync
// and Gate return each one inside a *RefusalError, which carries the text a
// user may see.
var (
	ErrInvalidVersion = errors.New("release: not a clean semver version")
	ErrNotInHistory   = errors.New("release: version not in the app's history")
	ErrConflict       = errors.New("release: the app changed while it was being patched")
	ErrNotFound       = errors.New("release: app not found")
)

// RefusalError is a request the release seam refuses: Err is the kind
// (ErrInvalidVersion, ErrNotInHistory, ErrConflict or ErrNotFound), Public
// says why in words a user may read, as it is. Callers map the kind to a
// status and show Public; they never cut up Error().
type RefusalError struct {
	Err    error
	Public string
}

func (e *RefusalError) Error() string { return "release: " + e.Public }

func (e *RefusalError) Unwrap() error { return e.Err }

// notInHistoryHint ends every ErrNotInHistory refusal.
const notInHistoryHint = ": roll back only to a version this app has run"

// Refusals whose text never varies.
var (
	refusedConflict = &RefusalError{Err: ErrConflict, Public: "the app changed while it was being patched; reload and try again"}
	refusedNotFound = &RefusalError{Err: ErrNotFound, Public: "app not found"}
)

// Gate checks a requested version against the app's history: it must be a
// clean semver (MAJOR.MINOR.PATCH, optional v) and a tag the app has run.
func Gate(version string, history []string) error {
	if !IsCleanSemver(version) {
		return &RefusalError{Err: ErrInvalidVersion, Public: fmt.Sprintf("not a clean semver version: %q (want MAJOR.MINOR.PATCH, e.g. 1.2.0)", version)}
	}
	return InHistory(version, history)
}

// InHistory checks that version is a tag the app has run (history), the
// half of Gate a caller with its own rule of which tags may be asked for
// uses (a commit tag, in a commit-mode catalog's rollback through git).
func InHistory(version string, history []string) error {
	if !slices.Contains(history, version) {
		return &RefusalError{Err: ErrNotInHistory, Public: "version not in the app's history: " + version + notInHistoryHint}
	}
	return nil
}

// ImagePatch builds the merge patch that pins the App's image to tag,
// keeping the repository, guarded by resourceVersion (optimistic
// concurrency: the apiserver refuses it if the App changed since).
func ImagePatch(image, tag, resourceVersion string) ([]byte, error) {
	return json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": resourceVersion},
		"spec":     map[string]any{"image": appcr.WithTag(image, tag)},
	})
}

// HistorySource returns the images an App has run (from its ReplicaSets),
// newest first.
type HistorySource func(namespace, name string) ([]string, error)

// Releaser patches Apps and records what it did.
type Releaser struct {
	apps dynamic.NamespaceableResourceInterface
	// dyn and appGVR reach the objects of an App's tree (Operate).
	dyn     dynamic.Interface
	appGVR  schema.GroupVersionResource
	events  typedcorev1.EventsGetter
	history HistorySource
	log     *slog.Logger
	now     func() time.Time
	// cluster names the cluster in the audit Events and log lines ("":
	// none named).
	cluster string
}

// New returns a Releaser for the App resource gvr.
func New(dyn dynamic.Interface, events typedcorev1.EventsGetter, gvr schema.GroupVersionResource, history HistorySource, log *slog.Logger) *Releaser {
	return &Releaser{apps: dyn.Resource(gvr), dyn: dyn, appGVR: gvr, events: events, history: history, log: log.With("component", "release"), now: time.Now}
}

// InCluster returns a Releaser like r whose audit Events and log lines
// name the cluster it writes to.
func (r *Releaser) InCluster(name string) *Releaser {
	c := *r
	c.cluster = name
	c.log = r.log.With("cluster", name)
	return &c
}

// inCluster is the suffix of an Event message naming the cluster.
func (r *Releaser) inCluster() string {
	if r.cluster == "" {
		return ""
	}
	return " in cluster " + r.cluster
}

// Result is the outcome of a rollback.
type Result struct {
	App       string `json:"app"`
	Namespace string `json:"namespace"`
	From      string `json:"from"`
	To        string `json:"to"`
	Changed   bool   `json:"changed"`
}

// Rollback pins app namespace/name to version. It is idempotent (the
// declared version already equal: Changed false, nothing patched). On a
// conflict it re-reads the App and tries once more, then answers
// ErrConflict. A refusal is a *RefusalError. Every attempt is logged; an accepted one also writes an
// Event on the App naming the user.
func (r *Releaser) Rollback(ctx context.Context, namespace, name, version, user string) (res Result, err error) {
	res = Result{App: name, Namespace: namespace, To: version}
	defer func() {
		outcome := "accepted"
		switch {
		case err != nil:
			outcome = "refused"
		case !res.Changed:
			outcome = "unchanged"
		}
		r.log.Info("rollback", "user", user, "app", name, "namespace", namespace, "from", res.From, "to", version, "outcome", outcome, "err", errString(err))
	}()
	images, err := r.history(namespace, name)
	if err != nil {
		return res, err
	}
	history := make([]string, len(images))
	for i, img := range images {
		history[i] = appcr.ImageTag(img)
	}
	if err := Gate(version, history); err != nil {
		return res, err
	}
	for attempt := 0; ; attempt++ {
		app, err := r.apps.Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return res, refusedNotFound
		}
		if err != nil {
			return res, fmt.Errorf("release: get app: %w", err)
		}
		image, _, _ := unstructured.NestedString(app.Object, "spec", "image")
		res.From = appcr.ImageTag(image)
		if res.From == version {
			return res, nil
		}
		// Only the tag changes; the repository stays. Refuse when that image
		// never ran (the app moved repositories since V).
		if err := ranBefore(images, image, version); err != nil {
			return res, err
		}
		patch, err := ImagePatch(image, version, app.GetResourceVersion())
		if err != nil {
			return res, err
		}
		_, err = r.apps.Namespace(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: appcr.FieldManager})
		if apierrors.IsConflict(err) && attempt == 0 {
			continue
		}
		if apierrors.IsConflict(err) {
			return res, refusedConflict
		}
		if err != nil {
			return res, fmt.Errorf("release: patch app: %w", err)
		}
		res.Changed = true
		r.event(ctx, app, ReasonRollback, fmt.Sprintf("%s rolled %s back from %s to %s%s", user, name, res.From, version, r.inCluster()))
		return res, nil
	}
}

// SyncResult is the outcome of a sync request.
type SyncResult struct {
	App         string `json:"app"`
	Namespace   string `json:"namespace"`
	RequestedAt string `json:"requestedAt"`
}

// Sync asks the operator to reconcile: it bumps the sync-requested-at
// annotation to now and records an Event naming the user.
func (r *Releaser) Sync(ctx context.Context, namespace, name, user string) (res SyncResult, err error) {
	res = SyncResult{App: name, Namespace: namespace, RequestedAt: r.now().UTC().Format(time.RFC3339Nano)}
	defer func() {
		outcome := "accepted"
		if err != nil {
			outcome = "refused"
		}
		r.log.Info("sync", "user", user, "app", name, "namespace", namespace, "requested_at", res.RequestedAt, "outcome", outcome, "err", errString(err))
	}()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{appcr.SyncRequestedAnnotation: res.RequestedAt}}})
	if err != nil {
		return res, err
	}
	app, err := r.apps.Namespace(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: appcr.FieldManager})
	if apierrors.IsNotFound(err) {
		return res, refusedNotFound
	}
	if err != nil {
		return res, fmt.Errorf("release: patch app: %w", err)
	}
	r.event(ctx, app, ReasonSync, fmt.Sprintf("%s requested a sync of %s%s", user, name, r.inCluster()))
	return res, nil
}

// event records an audit Event on the App (or, for an operation, the
// object it changed). A failure to record is logged,
// not returned: the change itself already happened.
func (r *Releaser) event(ctx context.Context, app *unstructured.Unstructured, reason, message string) {
	now := metav1.NewTime(r.now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: app.GetName() + ".", Namespace: app.GetNamespace()},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: app.GetAPIVersion(), Kind: app.GetKind(), Name: app.GetName(), Namespace: app.GetNamespace(),
			UID: app.GetUID(), ResourceVersion: app.GetResourceVersion(),
		},
		Reason: reason, Message: message, Type: corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: "deploy-web"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
		ReportingController: "hanzo.ai/deploy-web", ReportingInstance: "deploy-web",
	}
	if _, err := r.events.Events(app.GetNamespace()).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		r.log.Error("audit event not recorded", "app", app.GetName(), "namespace", app.GetNamespace(), "reason", reason, "err", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// ranBefore checks that the image the rollback would declare (the current
// repository at tag version) is one the app has run.
func ranBefore(images []string, current, version string) error {
	want := appcr.WithTag(current, version)
	var ranAs string
	for _, h := range images {
		if appcr.ImageTag(h) != version {
			continue
		}
		if appcr.WithTag(h, version) == want {
			return nil
		}
		ranAs = h
	}
	return &RefusalError{Err: ErrNotInHistory, Public: fmt.Sprintf("version not in the app's history: %s ran as %s, but the app now declares the repository of %s; change the image by hand", version, ranAs, current) + notInHistoryHint}
}
