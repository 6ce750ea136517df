package deployplan

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestCaptureRecord: a capture is restorable in the environment whose
// apply recorded it, not in another one of the same namespace, and not
// once it fell out of the newest MaxCaptureRecords; a record edited into
// something else is an error naming it.
func TestCaptureRecord(t *testing.T) {
	ctx := t.Context()
	kube := fake.NewClientset()
	rec := func(i int) captureRecord {
		return captureRecord{Digest: fmt.Sprintf("sha256:%064d", i), Time: "2026-01-01T00:00:00Z", Holder: "me", Capture: fmt.Sprintf("/r/pre-apply-%d", i)}
	}
	if got, err := captureRecorded(ctx, kube, "dev", "dev", rec(0).Digest); err != nil || got != nil {
		t.Fatalf("captureRecorded without a record = %v, %v; want nil, nil", got, err)
	}
	for i := 0; i <= MaxCaptureRecords; i++ {
		if err := recordCapture(ctx, kube, "dev", "dev", rec(i)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		env    string
		i      int
		wanted bool
	}{
		{"dev", MaxCaptureRecords, true},
		{"dev", 1, true},
		{"dev", 0, false}, // the oldest, dropped
		{"prod", MaxCaptureRecords, false},
	}
	for _, tt := range tests {
		got, err := captureRecorded(ctx, kube, "dev", tt.env, rec(tt.i).Digest)
		if err != nil || (got != nil) != tt.wanted || got != nil && *got != rec(tt.i) {
			t.Errorf("captureRecorded(%s, capture %d) = %+v, %v; want recorded %t", tt.env, tt.i, got, err, tt.wanted)
		}
	}
	cm, _ := kube.CoreV1().ConfigMaps("dev").Get(ctx, CaptureRecordName, metav1.GetOptions{})
	if ReservedName(newObj("v1", "ConfigMap", "dev", cm.Name)) == "" {
		t.Errorf("the capture record %s is not a reserved name", CaptureRecordName)
	}
	cm.Data["dev"] = "not json\n"
	kube.CoreV1().ConfigMaps("dev").Update(ctx, cm, metav1.UpdateOptions{})
	if _, err := captureRecorded(ctx, kube, "dev", "dev", rec(1).Digest); err == nil {
		t.Error("captureRecorded of a garbled record = nil error, want one naming it")
	}
}
