package kubeview_test

import (
	"errors"
	"fmt"
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
	if diff := cmp.Diff(kubeview.EventList{Items: want, Total: 2}, got); diff != "" {
		t.Errorf("Events(shop, %s) (-want +got):\n%s", depUID, diff)
	}
	if got, err := env.cache.Events(t.Context(), "elsewhere", depUID); err != nil || len(got.Items) != 0 {
		t.Errorf("Events(elsewhere, ...) = %v, %v, want nothing: not a platform namespace", got, err)
	}
	cs.PrependReactor("list", "events", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		return true, nil, apierrors.NewInternalError(errors.New("etcd timeout"))
	})
	if _, err := env.cache.Events(t.Context(), "shop", depUID); err == nil {
		t.Errorf("Events with a failing apiserver = nil error, want one")
	}
}

// TestEventsKeepTheNewest: an object with more events than the cap keeps
// the newest, although the apiserver pages them in name order (here the
// first page by name holds the oldest): every page is read and the list
// says it is capped. Past the page bound the newest of those read are
// kept and the list says it is incomplete.
func TestEventsKeepTheNewest(t *testing.T) {
	f := fixApp{ns: "shop", name: "web"}
	apps, objs := fixObjects([]fixApp{f})
	depUID := string(f.uid("Deployment"))
	tests := []struct {
		name                       string
		n                          int // events of the object; e-00000 is the oldest
		wantPages                  int
		wantTotal                  int
		wantNewest, wantOldest     int // indices of the first and last event kept
		wantCapped, wantIncomplete bool
	}{
		{"under the cap", 300, 1, 300, 299, 0, false, false},
		{"at the cap", 500, 1, 500, 499, 0, false, false},
		{"over the cap", 1234, 3, 1234, 1233, 734, true, false},
		{"over the page bound", 10500, 20, 10000, 9999, 9500, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := newTestClientset(objs...)
			pages := 0
			// The apiserver's paging: name order, Limit items, a continue
			// token while more are left.
			cs.PrependReactor("list", "events", func(a k8stesting.Action) (bool, k8sruntime.Object, error) {
				opts := a.(k8stesting.ListActionImpl).GetListOptions()
				if opts.Limit <= 0 || opts.Limit > 500 {
					t.Errorf("events listed with limit %d, want 1 to 500", opts.Limit)
				}
				pages++
				start := 0
				if opts.Continue != "" {
					fmt.Sscanf(opts.Continue, "%d", &start)
				}
				end := min(start+int(opts.Limit), tt.n)
				list := &corev1.EventList{}
				for i := start; i < end; i++ {
					list.Items = append(list.Items, corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e-%05d", i), Namespace: "shop"},
						InvolvedObject: corev1.ObjectReference{UID: k8stypes.UID(depUID)}, Reason: fmt.Sprintf("R%05d", i), Type: corev1.EventTypeNormal,
						Count: 1, LastTimestamp: metav1.NewTime(fixT0.Add(time.Duration(i) * time.Second))})
				}
				if end < tt.n {
					list.Continue = fmt.Sprint(end)
				}
				return true, list, nil
			})
			env := startCache(t.Context(), t, cs, newTestDynamic(apps...), []string{"shop"})
			got, err := env.cache.Events(t.Context(), "shop", depUID)
			if err != nil {
				t.Fatal(err)
			}
			if pages != tt.wantPages {
				t.Errorf("read %d pages, want %d", pages, tt.wantPages)
			}
			if got.Total != tt.wantTotal || got.Capped != tt.wantCapped || got.Incomplete != tt.wantIncomplete {
				t.Errorf("Events = total %d, capped %v, incomplete %v; want %d, %v, %v", got.Total, got.Capped, got.Incomplete, tt.wantTotal, tt.wantCapped, tt.wantIncomplete)
			}
			if want := tt.wantNewest - tt.wantOldest + 1; len(got.Items) != want {
				t.Fatalf("Events kept %d, want %d", len(got.Items), want)
			}
			first, last := got.Items[0], got.Items[len(got.Items)-1]
			if first.Reason != fmt.Sprintf("R%05d", tt.wantNewest) || last.Reason != fmt.Sprintf("R%05d", tt.wantOldest) {
				t.Errorf("Events kept %s .. %s, want R%05d (newest) .. R%05d", first.Reason, last.Reason, tt.wantNewest, tt.wantOldest)
			}
			for i := 1; i < len(got.Items); i++ {
				if got.Items[i].Last.After(got.Items[i-1].Last) {
					t.Fatalf("Events not newest first at %d: %v after %v", i, got.Items[i].Last, got.Items[i-1].Last)
				}
			}
		})
	}
}
