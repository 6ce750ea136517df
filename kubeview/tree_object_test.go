package kubeview_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/kubeview"
)

// TestObjectReadsTheLiveObject: the resource panel's object comes from the
// apiserver, whole (the cache keeps only what the pages need), without
// managedFields; an object that is gone or was replaced by another of the
// same name is not in the tree; any other failure is an error.
func TestObjectReadsTheLiveObject(t *testing.T) {
	f := fixApp{ns: "shop", name: "web", each: fatten, app: fattenApp}
	env := newTestEnv(t, []string{"shop"}, f)
	ctx := t.Context()
	depRef := kubeview.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "web"}

	u, node, err := env.cache.Object(ctx, "shop", "web", depRef)
	if err != nil {
		t.Fatalf("Object(%s) = %v", depRef, err)
	}
	if node.Ref != depRef.String() || node.Kind != "Deployment" {
		t.Errorf("Object(%s) node = %s %s, want the Deployment's", depRef, node.Ref, node.Kind)
	}
	if u.GetAPIVersion() != "apps/v1" || u.GetKind() != "Deployment" {
		t.Errorf("Object(%s) = %s %s, want apps/v1 Deployment", depRef, u.GetAPIVersion(), u.GetKind())
	}
	if u.GetAnnotations()[appcr.LastAppliedAnnotation] == "" {
		t.Errorf("Object(%s) has no last-applied annotation: the panel's diff needs it", depRef)
	}
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 || cs[0].(map[string]any)["env"] == nil || cs[0].(map[string]any)["readinessProbe"] == nil {
		t.Errorf("Object(%s) containers = %v, want the whole container (env, probe)", depRef, cs)
	}
	if u.GetManagedFields() != nil {
		t.Errorf("Object(%s) has managedFields, want none", depRef)
	}

	appRef := kubeview.Ref{Group: "hanzo.ai", Kind: "App", Namespace: "shop", Name: "web"}
	if app, _, err := env.cache.Object(ctx, "shop", "web", appRef); err != nil || app.GetAnnotations()[appcr.LastAppliedAnnotation] == "" {
		t.Errorf("Object(%s) = %v, want the live App with its last-applied annotation", appRef, err)
	}

	react := func(ret k8sruntime.Object, err error) {
		env.cs.PrependReactor("get", "deployments", func(k8stesting.Action) (bool, k8sruntime.Object, error) { return true, ret, err })
	}
	replaced := &appsv1.Deployment{}
	replaced.Name, replaced.Namespace, replaced.UID = "web", "shop", "another-uid"
	react(replaced, nil)
	if _, _, err := env.cache.Object(ctx, "shop", "web", depRef); !errors.Is(err, kubeview.ErrNotInTree) {
		t.Errorf("Object(%s) of a replaced object = %v, want ErrNotInTree", depRef, err)
	}
	react(nil, apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web"))
	if _, _, err := env.cache.Object(ctx, "shop", "web", depRef); !errors.Is(err, kubeview.ErrNotInTree) {
		t.Errorf("Object(%s) of a deleted object = %v, want ErrNotInTree", depRef, err)
	}
	react(nil, apierrors.NewInternalError(errors.New("etcd timeout")))
	if _, _, err := env.cache.Object(ctx, "shop", "web", depRef); err == nil || errors.Is(err, kubeview.ErrNotInTree) {
		t.Errorf("Object(%s) with a failing apiserver = %v, want an error other than ErrNotInTree", depRef, err)
	}
	other := kubeview.Ref{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "other"}
	if _, _, err := env.cache.Object(ctx, "shop", "web", other); !errors.Is(err, kubeview.ErrNotInTree) {
		t.Errorf("Object(%s) outside the tree = %v, want ErrNotInTree", other, err)
	}
}

// TestEventsReadPerRequest: the events of an object are read from the
// apiserver per request, only that object's (whatever the server returns),
// newest first; a failing apiserver is an error, not an empty list.
func TestEventsReadPerRequest(t *testing.T) {
	f := fixApp{ns: "shop", name: "web"}
	apps, objs := fixObjects([]fixApp{f})
	ev := func(name, uid, reason string, last time.Time, count int32) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
			InvolvedObject: corev1.ObjectReference{Kind: "Deployment", Namespace: "shop", Name: "web", UID: k8stypes.UID(uid)},
			Reason:         reason, Message: reason + " <script>", Type: corev1.EventTypeNormal, Count: count, LastTimestamp: metav1.NewTime(last)}
	}
	depUID := string(f.uid("Deployment"))
	objs = append(objs,
		ev("a", depUID, "ScalingReplicaSet", fixT0, 2),
		ev("b", depUID, "Rollback", fixT0.Add(time.Minute), 0),
		ev("c", "another-uid", "NotMine", fixT0.Add(2*time.Minute), 1))
	cs := newTestClientset(objs...)
	env := startCache(t.Context(), t, cs, newTestDynamic(apps...), []string{"shop"})
	got, err := env.cache.Events(t.Context(), "shop", depUID)
	if err != nil {
		t.Fatal(err)
	}
	want := []kubeview.Event{
		{Type: "Normal", Reason: "Rollback", Message: "Rollback <script>", Count: 1, Last: fixT0.Add(time.Minute)},
		{Type: "Normal", Reason: "ScalingReplicaSet", Message: "ScalingReplicaSet <script>", Count: 2, Last: fixT0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Events(shop, %s) (-want +got):\n%s", depUID, diff)
	}
	if got, err := env.cache.Events(t.Context(), "elsewhere", depUID); err != nil || len(got) != 0 {
		t.Errorf("Events(elsewhere, ...) = %v, %v, want nothing: not a platform namespace", got, err)
	}
	cs.PrependReactor("list", "events", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		return true, nil, apierrors.NewInternalError(errors.New("etcd timeout"))
	})
	if _, err := env.cache.Events(t.Context(), "shop", depUID); err == nil {
		t.Errorf("Events with a failing apiserver = nil error, want one")
	}
}
