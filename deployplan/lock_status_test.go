package deployplan

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestLockStatus: nobody holds the lock without a Lease or past its
// expiry (the next apply takes it over); within it, the holder, since
// when and until when.
func TestLockStatus(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	lease := func(renewed time.Time) *coordinationv1.Lease {
		holder, secs := "ci [apply 1]", int32(120)
		acquired, renew := metav1.NewMicroTime(now.Add(-10*time.Minute)), metav1.NewMicroTime(renewed)
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: LockName, Namespace: "shop"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &acquired, RenewTime: &renew}}
	}
	for _, tc := range []struct {
		name  string
		lease *coordinationv1.Lease
		want  *LockHeldError
	}{
		{"no Lease", nil, nil},
		{"renewed a minute ago", lease(now.Add(-time.Minute)), &LockHeldError{Namespace: "shop", Holder: "ci [apply 1]", Since: now.Add(-10 * time.Minute), Expires: now.Add(time.Minute)}},
		{"expired", lease(now.Add(-2 * time.Minute)), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kube := fake.NewClientset()
			if tc.lease != nil {
				if _, err := kube.CoordinationV1().Leases("shop").Create(context.Background(), tc.lease, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := LockStatus(context.Background(), kube, "shop", now)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == nil && got != nil:
				t.Errorf("LockStatus = %+v, want nobody", got)
			case tc.want != nil && (got == nil || got.Holder != tc.want.Holder || !got.Since.Equal(tc.want.Since) || !got.Expires.Equal(tc.want.Expires)):
				t.Errorf("LockStatus = %+v, want %+v", got, tc.want)
			}
		})
	}
}
