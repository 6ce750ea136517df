package cmcas

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var key = Key{Owner: "test", Namespace: "ns", Name: "cm", Key: "k", Labels: map[string]string{"l": "v"}, FieldManager: "deploy-web"}

// appendTo is a change that appends s to the value.
func appendTo(s string) func(string, bool) (string, error) {
	return func(v string, _ bool) (string, error) { return v + s, nil }
}

func TestUpdateCreatesThenUpdates(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	if _, ok, err := Get(ctx, cs.CoreV1(), key); ok || err != nil {
		t.Fatalf("Get() on no ConfigMap = ok %v, %v; want false, nil", ok, err)
	}
	for _, s := range []string{"a", "b"} {
		if err := Update(ctx, cs.CoreV1(), key, appendTo(s)); err != nil {
			t.Fatal(err)
		}
	}
	if err := Update(ctx, cs.CoreV1(), key, func(string, bool) (string, error) { return "", ErrUnchanged }); err != nil {
		t.Fatalf("Update(unchanged) = %v, want nil", err)
	}
	v, ok, err := Get(ctx, cs.CoreV1(), key)
	if v != "ab" || !ok || err != nil {
		t.Errorf("Get() = %q, %v, %v; want ab, true, nil", v, ok, err)
	}
	cm, _ := cs.CoreV1().ConfigMaps("ns").Get(ctx, "cm", metav1.GetOptions{})
	if cm.Labels["l"] != "v" {
		t.Errorf("labels = %v, want l=v", cm.Labels)
	}
}

// TestUpdateRetriesOnConflict: a write that lost reads again and applies
// its change to what the winner wrote, so nothing is lost.
func TestUpdateRetriesOnConflict(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns"}, Data: map[string]string{"k": "a"}})
	gvr := corev1.SchemeGroupVersion.WithResource("configmaps")
	conflicts := 0
	cs.PrependReactor("update", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts == 2 {
			return false, nil, nil
		}
		conflicts++
		obj, err := cs.Tracker().Get(gvr, "ns", "cm")
		if err != nil {
			t.Fatal(err)
		}
		cm := obj.(*corev1.ConfigMap).DeepCopy()
		cm.Data["k"] += "x" // the other writer
		if err := cs.Tracker().Update(gvr, cm, "ns"); err != nil {
			t.Fatal(err)
		}
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "cm", errors.New("changed"))
	})
	if err := Update(ctx, cs.CoreV1(), key, appendTo("b")); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := Get(ctx, cs.CoreV1(), key); v != "axxb" || conflicts != 2 {
		t.Errorf("after %d conflicts, value = %q, want axxb", conflicts, v)
	}
}

func TestUpdateGivesUp(t *testing.T) {
	cs := fake.NewClientset()
	calls := 0
	cs.PrependReactor("create", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, "cm")
	})
	err := Update(context.Background(), cs.CoreV1(), key, func(v string, _ bool) (string, error) { calls++; return v, nil })
	if err == nil || !strings.Contains(err.Error(), "test: ConfigMap ns/cm changed under 16 writes in a row") || calls != MaxAttempts {
		t.Errorf("Update under endless races = %v after %d changes, want a bounded give-up after %d", err, calls, MaxAttempts)
	}
}
