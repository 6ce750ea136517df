package kubeview

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// decodedString is s in bytes of its own, as a decoder makes it.
func decodedString(s string) string { return string([]byte(s)) }

// TestInternSharesRepeatedStrings checks that two pods decoded apart share
// their namespace, label value, owner and image after interning, that a
// string longer than the bound keeps its own bytes, and that the table
// never holds more than its bound.
func TestInternSharesRepeatedStrings(t *testing.T) {
	long := strings.Repeat("r", internMaxLen+1) + ":1"
	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: decodedString("shop"), Labels: map[string]string{"app.kubernetes.io/instance": decodedString("web")},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: decodedString("apps/v1"), Kind: decodedString("ReplicaSet"), Name: decodedString("web-5d8f")}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: decodedString("web"), Image: decodedString("r/web:1")},
				{Name: decodedString("proxy"), Image: decodedString(long)},
			}},
			Status: corev1.PodStatus{Phase: corev1.PodPhase(decodedString("Running")),
				ContainerStatuses: []corev1.ContainerStatus{{Name: decodedString("web"), Image: decodedString("r/web:1")}}},
		}
	}
	in := newInterner()
	a, b := pod("web-1"), pod("web-2")
	in.object(a)
	in.object(b)
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	for _, tt := range []struct {
		what string
		x, y string
	}{
		{"namespace", a.Namespace, b.Namespace},
		{"instance label", a.Labels["app.kubernetes.io/instance"], b.Labels["app.kubernetes.io/instance"]},
		{"owner name", a.OwnerReferences[0].Name, b.OwnerReferences[0].Name},
		{"owner kind", a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind},
		{"image", a.Spec.Containers[0].Image, b.Spec.Containers[0].Image},
		{"status image", a.Spec.Containers[0].Image, b.Status.ContainerStatuses[0].Image},
		{"phase", string(a.Status.Phase), string(b.Status.Phase)},
	} {
		if !same(tt.x, tt.y) {
			t.Errorf("%s %q: two copies after interning, want one", tt.what, tt.x)
		}
	}
	if reflect.ValueOf(a.Labels).UnsafePointer() != reflect.ValueOf(b.Labels).UnsafePointer() {
		t.Errorf("labels %v: two maps after interning, want one", a.Labels)
	}
	c := pod("web-3")
	c.Labels = map[string]string{"app.kubernetes.io/instance": "web", "other": "x"}
	in.object(c)
	if shared := reflect.ValueOf(c.Labels).UnsafePointer() == reflect.ValueOf(a.Labels).UnsafePointer(); shared || len(c.Labels) != 2 {
		t.Errorf("labels of two entries = %v, shared %v; want their own", c.Labels, shared)
	}
	if x, y := a.Spec.Containers[1].Image, b.Spec.Containers[1].Image; same(x, y) || x != long {
		t.Errorf("image of %d bytes: shared %v, equal %v; want its own bytes, unchanged", len(long), same(x, y), x == long)
	}

	for i := range internMaxEntries + 10 {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "n" + strconv.Itoa(i),
			Labels: map[string]string{"app.kubernetes.io/instance": "a" + strconv.Itoa(i)}}}
		in.object(p)
		if len(in.m) > internMaxEntries || len(in.maps) > internMaxEntries {
			t.Fatalf("after %d namespaces and labels: %d strings and %d maps interned, want at most %d each", i+1, len(in.m), len(in.maps), internMaxEntries)
		}
	}
}
