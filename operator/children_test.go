package operator

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/hanzoai/deploy-web/appcr"
)

func TestChildAction(t *testing.T) {
	const uid = types.UID("app-uid")
	const applied = `{"kind":"Service"}`
	live := func(owner types.UID, lastApplied string) metav1.Object {
		m := metav1.ObjectMeta{Name: "web", Namespace: "ns", Annotations: map[string]string{appcr.LastAppliedAnnotation: lastApplied}}
		if owner != "" {
			m.OwnerReferences = []metav1.OwnerReference{{Kind: "App", Name: "web", UID: owner, Controller: ptr.To(true)}}
		}
		lean, err := leanChild(&corev1.Service{ObjectMeta: m})
		if err != nil {
			t.Fatal(err)
		}
		return lean.(metav1.Object)
	}
	tests := []struct {
		name    string
		live    metav1.Object
		present bool
		force   bool
		want    action
	}{
		{"missing child is created", nil, true, false, actionApply},
		{"unchanged child is left alone", live(uid, applied), true, false, actionNone},
		{"unchanged child is applied on a sync request", live(uid, applied), true, true, actionApply},
		{"changed rendering is applied", live(uid, `{"kind":"Service","spec":{}}`), true, false, actionApply},
		{"child without the annotation is applied", live(uid, ""), true, false, actionApply},
		{"child of another App (same name, new uid) is applied", live("old-uid", applied), true, false, actionApply},
		{"child without an owner is adopted", live("", applied), true, false, actionApply},
		{"child no longer asked for is deleted", live(uid, applied), false, false, actionDelete},
		{"absent child not asked for: nothing", nil, false, false, actionNone},
		{"absent child not asked for, sync request: nothing", nil, false, true, actionNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := applied
			if !tt.present {
				l = ""
			}
			if got := childAction(tt.live, uid, tt.present, l, tt.force); got != tt.want {
				t.Errorf("childAction = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestRenderedLastAppliedMatchesCache checks the loop the quiet reconcile
// depends on: the last-applied text Render puts on each child, once cached
// through leanChild, is recognised as unchanged by a second Render of the
// same App.
func TestRenderedLastAppliedMatchesCache(t *testing.T) {
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hanzo.ai/v1", "kind": "App",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "uid": "u1"},
		"spec": map[string]any{"image": "r/web:1.0.0", "host": "web.example", "minAvailable": int64(1),
			"env": []any{map[string]any{"name": "A", "value": "b"}}, "autoscaling": map[string]any{"maxReplicas": int64(3)}},
	}}
	spec, err := ParseSpec(app)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := Render(app, spec)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Render(app, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind       string
		rendered   any
		rerendered any
	}{
		{kindDeployment, r1.Deployment, r2.Deployment}, {kindService, r1.Service, r2.Service},
		{kindConfigMap, r1.ConfigMap, r2.ConfigMap}, {kindIngress, r1.Ingress, r2.Ingress},
		{kindHPA, r1.HPA, r2.HPA}, {kindPDB, r1.PDB, r2.PDB},
	} {
		la := lastAppliedOf(c.rendered)
		if la == "" {
			t.Errorf("%s: rendered without a last-applied annotation", c.kind)
			continue
		}
		lean, err := leanChild(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{
			Annotations:     map[string]string{appcr.LastAppliedAnnotation: la},
			OwnerReferences: []metav1.OwnerReference{{Kind: "App", Name: "web", UID: "u1", Controller: ptr.To(true)}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if got := childAction(lean.(metav1.Object), "u1", true, lastAppliedOf(c.rerendered), false); got != actionNone {
			t.Errorf("%s: second render of the same App: childAction = %s, want none", c.kind, got)
		}
	}
	if got := lastAppliedOf((*corev1.Service)(nil)); got != "" {
		t.Errorf("lastAppliedOf(unknown type) = %q, want empty", got)
	}
}

func TestLeanChildDropsBodies(t *testing.T) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "ns", UID: "s1", ResourceVersion: "7",
			Annotations:   map[string]string{appcr.LastAppliedAnnotation: "{}", "other": "x"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}},
		},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10", Ports: []corev1.ServicePort{{Port: 80}}},
	}
	out, err := leanChild(svc)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Service)
	if got.Spec.ClusterIP != "" || len(got.Spec.Ports) != 0 || len(got.ManagedFields) != 0 {
		t.Errorf("leanChild kept the body or managed fields: %+v", got)
	}
	if got.Name != "web" || got.Namespace != "ns" || got.UID != "s1" || got.ResourceVersion != "7" {
		t.Errorf("leanChild lost the identity: %+v", got.ObjectMeta)
	}
	if want := map[string]string{appliedHashAnnotation: hashOf("{}")}; len(got.Annotations) != 1 || got.Annotations[appliedHashAnnotation] != want[appliedHashAnnotation] {
		t.Errorf("leanChild annotations = %v, want %v", got.Annotations, want)
	}
	dep := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(3))}, Status: appsv1.DeploymentStatus{ReadyReplicas: 2}}
	out, err = leanChild(dep)
	if err != nil {
		t.Fatal(err)
	}
	if d := out.(*appsv1.Deployment); *d.Spec.Replicas != 3 || d.Status.ReadyReplicas != 2 {
		t.Errorf("leanChild(Deployment) lost spec or status: %+v", d)
	}
}

// TestRetryBackoffIsPerApp checks the retry policy: each App backs off on
// its own failures, exponentially, up to the cap, and an App that succeeds
// starts over; there is no queue-wide rate.
func TestRetryBackoffIsPerApp(t *testing.T) {
	rl := newRateLimiter(time.Second, 8*time.Second)
	a := types.NamespacedName{Namespace: "ns", Name: "a"}
	b := types.NamespacedName{Namespace: "ns", Name: "b"}
	var got []time.Duration
	for range 6 {
		got = append(got, rl.When(a))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("retry %d of a = %s, want %s (all: %v)", i+1, got[i], want[i], got)
		}
	}
	if d := rl.When(b); d != time.Second {
		t.Errorf("first retry of b after a failed 6 times = %s, want 1s", d)
	}
	// Many Apps failing at once: each still waits only its own first step.
	for i := range 1000 {
		if d := rl.When(types.NamespacedName{Namespace: "ns", Name: "x" + string(rune('a'+i%26)) + string(rune(i))}); d != time.Second {
			t.Fatalf("first retry of the %dth failing App = %s, want 1s (a queue-wide limit?)", i, d)
		}
	}
	rl.Forget(a)
	if d := rl.When(a); d != time.Second {
		t.Errorf("retry of a after Forget = %s, want 1s", d)
	}
}

func TestNewRejectsInvertedRetryBounds(t *testing.T) {
	_, err := New(nil, nil, nil, Options{Namespaces: []string{"ns"}, RetryBase: time.Minute, RetryMax: time.Second})
	if err == nil {
		t.Fatal("New with RetryMax < RetryBase: no error")
	}
}

func TestSyncPending(t *testing.T) {
	mk := func(ann, status string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{}}}
		if ann != "" {
			u.SetAnnotations(map[string]string{appcr.SyncRequestedAnnotation: ann})
		}
		if status != "" {
			u.Object["status"] = map[string]any{"syncRequestedAt": status}
		}
		return u
	}
	tests := []struct {
		name        string
		ann, status string
		want        bool
	}{
		{"no request", "", "", false},
		{"new request", "t1", "", true},
		{"answered", "t1", "t1", false},
		{"newer request", "t2", "t1", true},
	}
	for _, tt := range tests {
		if got := syncPending(mk(tt.ann, tt.status)); got != tt.want {
			t.Errorf("%s: syncPending = %v, want %v", tt.name, got, tt.want)
		}
	}
}
