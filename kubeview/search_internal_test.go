package kubeview

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// TestLabelStoreBounded: the search's labels are bounded per object
// (count, key and value length), one map per distinct set, dropped with
// its last object (also through a tombstone).
func TestLabelStoreBounded(t *testing.T) {
	s := newLabelStore()
	pod := func(uid string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Labels: labels}}
	}
	many := map[string]string{"long": strings.Repeat("v", maxSearchLabelValue+1), strings.Repeat("k", maxSearchLabelKey+1): "x"}
	for i := range 50 {
		many["l"+strconv.Itoa(100+i)] = "v"
	}
	s.set(pod("big", many))
	got := s.get("big")
	if len(got) != maxSearchLabels {
		t.Errorf("labels of an object with 52 = %d kept, want %d", len(got), maxSearchLabels)
	}
	if _, ok := got["long"]; ok {
		t.Error("a value over the bound was kept")
	}

	same := map[string]string{"app": "web", "pod-template-hash": "5d8f"}
	s.set(pod("p1", same))
	s.set(pod("p2", map[string]string{"app": "web", "pod-template-hash": "5d8f"}))
	if reflect.ValueOf(s.get("p1")).UnsafePointer() != reflect.ValueOf(s.get("p2")).UnsafePointer() {
		t.Error("two pods with the same labels hold two maps, want one shared")
	}
	if len(s.sets) != 2 {
		t.Errorf("%d label sets, want 2", len(s.sets))
	}
	s.set(pod("p1", map[string]string{"app": "web", "pod-template-hash": "6e9a"})) // relabelled
	if s.get("p1")["pod-template-hash"] != "6e9a" || s.get("p2")["pod-template-hash"] != "5d8f" {
		t.Errorf("after relabelling p1: p1 %v, p2 %v", s.get("p1"), s.get("p2"))
	}
	s.forget(pod("p1", nil))
	s.forget(cache.DeletedFinalStateUnknown{Obj: pod("p2", nil)})
	s.forget(pod("big", nil))
	if len(s.byUID) != 0 || len(s.sets) != 0 {
		t.Errorf("after forgetting every object: %d objects, %d sets; want none", len(s.byUID), len(s.sets))
	}
	var none *labelStore
	none.set(pod("x", same)) // a Cache built by hand has no store
}
