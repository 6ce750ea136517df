package kubeview

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStripObject: an Event keeps what the events tab shows and its index
// key, and loses the rest; any other object keeps everything the resource
// panel shows (it is the cached manifest) but its managedFields.
func TestStripObject(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-1.abc", Namespace: "shop", UID: "e1", ResourceVersion: "9", CreationTimestamp: now,
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}, Annotations: map[string]string{"a": "b"},
		},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "web-1", UID: "p1", APIVersion: "v1", ResourceVersion: "5", FieldPath: "spec.containers{web}"},
		Reason:         "BackOff", Message: "Back-off restarting failed container", Type: corev1.EventTypeWarning, Count: 7,
		FirstTimestamp: now, LastTimestamp: now,
		Source: corev1.EventSource{Component: "kubelet", Host: "node-0"},
		Series: &corev1.EventSeries{Count: 7}, ReportingController: "kubelet", ReportingInstance: "node-0",
	}
	got, err := stripObject(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web-1.abc", Namespace: "shop", UID: "e1", ResourceVersion: "9", CreationTimestamp: now},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "web-1", UID: "p1"},
		Reason:         "BackOff", Message: "Back-off restarting failed container", Type: corev1.EventTypeWarning, Count: 7,
		LastTimestamp: now,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stripObject(Event) (-want +got):\n%s", diff)
	}
	if key, _ := indexByInvolved(got); len(key) != 1 || key[0] != "p1" {
		t.Errorf("indexByInvolved(stripped event) = %v, want [p1]", key)
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
		Spec: corev1.PodSpec{
			Containers:  []corev1.Container{{Name: "web", Image: "r/web:1", Env: []corev1.EnvVar{{Name: "A", Value: "b"}}}},
			Volumes:     []corev1.Volume{{Name: "data"}},
			Tolerations: []corev1.Toleration{{Key: "k"}},
		},
	}
	wantPod := pod.DeepCopy()
	wantPod.ManagedFields = nil
	got, err = stripObject(pod)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantPod, got); diff != "" {
		t.Errorf("stripObject(Pod) (-want +got):\n%s", diff)
	}
}
