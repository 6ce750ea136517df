package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// Op is a day-2 action on one object of an App's tree (an "operation"):
// restart, scale, suspend, resume, or delete.
type Op string

// The operations.
const (
	// OpRestart bumps the pod template's appcr.RestartedAtAnnotation (as
	// `kubectl rollout restart` does) of a Deployment, StatefulSet or
	// DaemonSet.
	OpRestart Op = "restart"
	// OpScale sets the replicas of a Deployment, a StatefulSet or the App
	// itself, through the scale subresource.
	OpScale Op = "scale"
	// OpSuspend and OpResume set a CronJob's spec.suspend.
	OpSuspend Op = "suspend"
	OpResume  Op = "resume"
	// OpDelete deletes a Pod (its controller makes a new one).
	OpDelete Op = "delete"
)

// Ops returns every operation, in the order of the constants.
func Ops() []Op { return []Op{OpRestart, OpScale, OpSuspend, OpResume, OpDelete} }

// Limits of an operation's input.
const (
	// MaxReplicas is the most replicas a scale may ask for (the App CRD's
	// own maximum).
	MaxReplicas = 1000
	// MaxReasonBytes bounds an operation's reason (after cleaning).
	MaxReasonBytes = 1 << 10
)

// ReasonOperate is the reason of the Event an operation writes on the
// object it changed.
const ReasonOperate = "OperationRequested"

// The kinds of refusal of an operation (errors.Is), inside a
// *RefusalError like the others.
var (
	// ErrNotOperable: the operation does not apply to the object's kind.
	ErrNotOperable = errors.New("release: operation not allowed on this kind")
	// ErrBadInput: replicas out of range, a reason too long, an unknown
	// operation.
	ErrBadInput = errors.New("release: bad operation input")
)

// Target is the object an operation acts on, as the App's tree names it.
// App says it is the App itself (Group and Kind are then the App's).
type Target struct {
	Group, Version, Kind, Resource string
	Namespace, Name                string
	// UID is the object's uid as the tree saw it: a delete is
	// conditional on it (a Pod recreated under the same name since is
	// not deleted).
	UID string
	App bool
}

// GVR is the target's resource.
func (t Target) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: t.Group, Version: t.Version, Resource: t.Resource}
}

// GroupKind is "apps/Deployment", or "Pod" for the core group.
func (t Target) GroupKind() string {
	if t.Group == "" {
		return t.Kind
	}
	return t.Group + "/" + t.Kind
}

// Operation is one day-2 action asked for: Op on Target, an object of
// App's tree (App names the App, in Target's namespace), Replicas for a
// scale, and the person's Reason (optional; see CleanReason).
type Operation struct {
	Op       Op
	App      string
	Target   Target
	Replicas int
	Reason   string
}

// OperationResult is what an operation changed: Before and After are the
// value it changed, in words ("3 replicas", "suspended", a restartedAt
// time, "running"/"deleted").
type OperationResult struct {
	Op        Op     `json:"action"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Before    string `json:"before"`
	After     string `json:"after"`
	Reason    string `json:"reason,omitempty"`
	Changed   bool   `json:"changed"`
}

// operable lists the kinds each operation applies to ("group/Kind"; the
// App itself is allowed to scale apart, by Target.App).
func operable(op Op) []string {
	switch op {
	case OpRestart:
		return []string{"apps/Deployment", "apps/StatefulSet", "apps/DaemonSet"}
	case OpScale:
		return []string{"apps/Deployment", "apps/StatefulSet"}
	case OpSuspend, OpResume:
		return []string{"batch/CronJob"}
	case OpDelete:
		return []string{"Pod"}
	}
	return nil
}

// Applies reports whether op applies to the kind of t: the one rule the
// handler, the panel's buttons and Operate share.
func Applies(op Op, t Target) bool {
	if t.App {
		return op == OpScale
	}
	for _, gk := range operable(op) {
		if gk == t.GroupKind() {
			return true
		}
	}
	return false
}

// OpsFor lists the operations that apply to t, in the order of Ops.
func OpsFor(t Target) []Op {
	var out []Op
	for _, op := range Ops() {
		if Applies(op, t) {
			out = append(out, op)
		}
	}
	return out
}

// CleanReason is a reason as an operation keeps it: cleaned of control
// and format characters (textfmt.Clean, lines kept), surrounding space
// trimmed; longer than MaxReasonBytes is a refusal.
func CleanReason(reason string) (string, error) {
	reason = strings.TrimSpace(textfmt.Clean(reason, true))
	if len(reason) > MaxReasonBytes {
		return "", &RefusalError{Err: ErrBadInput, Public: fmt.Sprintf("reason: at most %d bytes", MaxReasonBytes)}
	}
	return reason, nil
}

// CheckOperation is the pure part of the decision on o: a known
// operation, one that applies to the target's kind, replicas within
// 0..MaxReplicas for a scale, a reason within bounds. A refusal is a
// *RefusalError (ErrBadInput or ErrNotOperable).
func CheckOperation(o Operation) error {
	known := false
	for _, op := range Ops() {
		known = known || op == o.Op
	}
	if !known {
		return &RefusalError{Err: ErrBadInput, Public: fmt.Sprintf("unknown action %q: use one of restart, scale, suspend, resume, delete", string(o.Op))}
	}
	if !Applies(o.Op, o.Target) {
		return &RefusalError{Err: ErrNotOperable, Public: fmt.Sprintf("%s does not apply to a %s", o.Op, o.Target.Kind)}
	}
	if o.Op == OpScale && (o.Replicas < 0 || o.Replicas > MaxReplicas) {
		return &RefusalError{Err: ErrBadInput, Public: fmt.Sprintf("replicas: %d is out of range 0-%d", o.Replicas, MaxReplicas)}
	}
	if _, err := CleanReason(o.Reason); err != nil {
		return err
	}
	return nil
}

// Operate performs o (after CheckOperation) with deploy-web's field
// manager, and records an Event on the object naming user (and the reason).
// The caller has checked that the target is in the App's tree. A target
// that is gone is ErrNotFound; a scale that raced another change is
// ErrConflict.
func (r *Releaser) Operate(ctx context.Context, o Operation, user string) (res OperationResult, err error) {
	t := o.Target
	res = OperationResult{Op: o.Op, Kind: t.Kind, Namespace: t.Namespace, Name: t.Name}
	defer func() {
		outcome := "accepted"
		if err != nil {
			outcome = "refused"
		}
		r.log.Info("operate", "user", user, "action", string(o.Op), "kind", t.GroupKind(), "namespace", t.Namespace, "name", t.Name,
			"before", res.Before, "after", res.After, "outcome", outcome, "err", errString(err))
	}()
	if err := CheckOperation(o); err != nil {
		return res, err
	}
	res.Reason, _ = CleanReason(o.Reason)
	if t.App {
		t.Group, t.Version, t.Resource = r.appGVR.Group, r.appGVR.Version, r.appGVR.Resource
	}
	client := r.dyn.Resource(t.GVR()).Namespace(t.Namespace)
	var obj *unstructured.Unstructured
	switch o.Op {
	case OpRestart:
		obj, err = r.restart(ctx, t, &res)
	case OpScale:
		obj, err = r.scale(ctx, t, o.Replicas, &res)
	case OpSuspend, OpResume:
		obj, err = r.suspend(ctx, t, o.Op == OpSuspend, &res)
	case OpDelete:
		obj, err = client.Get(ctx, t.Name, metav1.GetOptions{})
		if err == nil && t.UID != "" && string(obj.GetUID()) != t.UID {
			err = apierrors.NewNotFound(t.GVR().GroupResource(), t.Name)
		}
		if err == nil {
			res.Before, res.After = podPhase(obj), "deleted"
			uid := obj.GetUID()
			err = client.Delete(ctx, t.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			res.Changed = err == nil
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		return res, &RefusalError{Err: ErrNotFound, Public: t.Kind + " " + t.Name + " not found"}
	case apierrors.IsConflict(err):
		return res, refusedConflict
	case err != nil:
		return res, fmt.Errorf("release: %s %s %s: %w", o.Op, t.GroupKind(), t.Name, err)
	}
	msg := fmt.Sprintf("%s: %s of %s %s: %s -> %s%s", user, o.Op, t.Kind, t.Name, res.Before, res.After, r.inCluster())
	if res.Reason != "" {
		msg += ": " + res.Reason
	}
	r.event(ctx, obj, ReasonOperate, msg)
	return res, nil
}

// restart sets the pod template's appcr.RestartedAtAnnotation to now.
func (r *Releaser) restart(ctx context.Context, t Target, res *OperationResult) (*unstructured.Unstructured, error) {
	client := r.dyn.Resource(t.GVR()).Namespace(t.Namespace)
	cur, err := client.Get(ctx, t.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	before, _, _ := unstructured.NestedString(cur.Object, "spec", "template", "metadata", "annotations", appcr.RestartedAtAnnotation)
	now := r.now().UTC().Format(time.RFC3339)
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
		"annotations": map[string]any{appcr.RestartedAtAnnotation: now}}}}})
	if err != nil {
		return nil, err
	}
	obj, err := client.Patch(ctx, t.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: appcr.FieldManager})
	if err != nil {
		return nil, err
	}
	res.Before, res.After, res.Changed = textfmt.OrDash(before), now, true
	return obj, nil
}

// scale sets the replicas through the scale subresource, guarded by the
// resourceVersion it read (so the record's "before" is what it replaced).
// A controller's status write moves that version on between the read
// and the patch, so a conflict reads and tries again, a few times.
func (r *Releaser) scale(ctx context.Context, t Target, replicas int, res *OperationResult) (obj *unstructured.Unstructured, err error) {
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err = r.scaleOnce(ctx, t, replicas, res)
		return err
	})
	return obj, err
}

func (r *Releaser) scaleOnce(ctx context.Context, t Target, replicas int, res *OperationResult) (*unstructured.Unstructured, error) {
	client := r.dyn.Resource(t.GVR()).Namespace(t.Namespace)
	sc, err := client.Get(ctx, t.Name, metav1.GetOptions{}, "scale")
	if err != nil {
		return nil, err
	}
	before, _, _ := unstructured.NestedInt64(sc.Object, "spec", "replicas")
	res.Before, res.After = replicasText(before), replicasText(int64(replicas))
	if before == int64(replicas) {
		obj, err := client.Get(ctx, t.Name, metav1.GetOptions{})
		return obj, err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": sc.GetResourceVersion()}, "spec": map[string]any{"replicas": replicas}})
	if err != nil {
		return nil, err
	}
	if _, err := client.Patch(ctx, t.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: appcr.FieldManager}, "scale"); err != nil {
		return nil, err
	}
	res.Changed = true
	return client.Get(ctx, t.Name, metav1.GetOptions{})
}

// suspend sets a CronJob's spec.suspend, guarded and retried as scale.
func (r *Releaser) suspend(ctx context.Context, t Target, on bool, res *OperationResult) (obj *unstructured.Unstructured, err error) {
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err = r.suspendOnce(ctx, t, on, res)
		return err
	})
	return obj, err
}

func (r *Releaser) suspendOnce(ctx context.Context, t Target, on bool, res *OperationResult) (*unstructured.Unstructured, error) {
	client := r.dyn.Resource(t.GVR()).Namespace(t.Namespace)
	cur, err := client.Get(ctx, t.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	was, _, _ := unstructured.NestedBool(cur.Object, "spec", "suspend")
	res.Before, res.After = suspendText(was), suspendText(on)
	if was == on {
		return cur, nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": cur.GetResourceVersion()}, "spec": map[string]any{"suspend": on}})
	if err != nil {
		return nil, err
	}
	obj, err := client.Patch(ctx, t.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: appcr.FieldManager})
	if err != nil {
		return nil, err
	}
	res.Changed = true
	return obj, nil
}

func replicasText(n int64) string {
	if n == 1 {
		return "1 replica"
	}
	return strconv.FormatInt(n, 10) + " replicas"
}

func suspendText(on bool) string {
	if on {
		return "suspended"
	}
	return "scheduling"
}

// podPhase is a Pod's phase in lower case ("pending" when it has none).
func podPhase(p *unstructured.Unstructured) string {
	phase, _, _ := unstructured.NestedString(p.Object, "status", "phase")
	if phase == "" {
		return "pending"
	}
	return strings.ToLower(phase)
}
