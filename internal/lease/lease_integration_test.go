package lease

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/internal/platformtest"
)

// TestHandoverOnRealCluster: on the real control plane, a clean stop
// hands the Lease to the waiting replica long before its RetryPeriod
// (20s: the waiting replica watches the Lease; waitFor's deadline, 15s,
// is shorter), and a holder that crashed (a Lease renewed by nobody) is
// replaced once it expires, within its duration and a RetryPeriod.
func TestHandoverOnRealCluster(t *testing.T) {
	env := platformtest.Start(t, platformtest.Options{Namespaces: []string{"ns"}})
	leases := env.Kube.CoordinationV1()
	cfg := func(id string) Config {
		return Config{Namespace: "ns", Name: "test-lease", Identity: id,
			LeaseDuration: time.Minute, RenewDeadline: 30 * time.Second, RetryPeriod: 20 * time.Second}
	}
	t.Run("clean stop", func(t *testing.T) {
		var leading [2]atomic.Bool
		ctxA, stopA := context.WithCancel(context.Background())
		defer stopA()
		doneA := make(chan error, 1)
		go func() {
			doneA <- Run(ctxA, leases, cfg("a"), func(ctx context.Context) { leading[0].Store(true); <-ctx.Done(); leading[0].Store(false) })
		}()
		waitFor(t, "a to lead", leading[0].Load)
		ctxB, stopB := context.WithCancel(context.Background())
		defer stopB()
		go Run(ctxB, leases, cfg("b"), func(ctx context.Context) { leading[1].Store(true); <-ctx.Done(); leading[1].Store(false) })
		stopA()
		if err := <-doneA; err != nil {
			t.Fatal(err)
		}
		waitFor(t, "b to take the released Lease (before its RetryPeriod)", leading[1].Load)
		l, err := leases.Leases("ns").Get(context.Background(), "test-lease", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "b" {
			t.Errorf("Lease after the handover = %+v, %v; want held by b", l, err)
		}
	})
	t.Run("crash", func(t *testing.T) {
		holder, secs, now := "crashed", int32(3), metav1.NewMicroTime(time.Now())
		if _, err := leases.Leases("ns").Create(context.Background(), &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "crash-lease", Namespace: "ns"},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &now, RenewTime: &now},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var leading atomic.Bool
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		c := Config{Namespace: "ns", Name: "crash-lease", Identity: "b", LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond}
		go Run(ctx, leases, c, func(ctx context.Context) { leading.Store(true); <-ctx.Done() })
		waitFor(t, "b to take the expired Lease of a crashed holder", leading.Load)
	})
}
