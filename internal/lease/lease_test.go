package lease

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestRunOneHolderWaitsAndReleases: of two replicas one leads; Run
// returns only after lead returned; the Lease is released only then, and
// the other, which watches the Lease, takes over long before its next
// RetryPeriod (20s) or the Lease's expiry (60s).
func TestRunOneHolderWaitsAndReleases(t *testing.T) {
	kube := fake.NewClientset()
	ids := []string{"a", "b"}
	var leading [2]atomic.Int32
	var ended [2]atomic.Bool
	// finish lets a lead return after its term ended.
	finish := []chan struct{}{make(chan struct{}), make(chan struct{})}
	termOver := []chan struct{}{make(chan struct{}, 1), make(chan struct{}, 1)}
	cancels := make([]context.CancelFunc, 2)
	done := make([]chan error, 2)
	for i := range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		cancels[i], done[i] = cancel, make(chan error, 1)
		c := Config{Namespace: "ns", Name: "test-lease", Identity: ids[i],
			LeaseDuration: time.Minute, RenewDeadline: 30 * time.Second, RetryPeriod: 20 * time.Second}
		go func() {
			done[i] <- Run(ctx, kube.CoordinationV1(), c, func(ctx context.Context) {
				leading[i].Add(1)
				<-ctx.Done()
				termOver[i] <- struct{}{}
				<-finish[i] // work that finishes after the term
				ended[i].Store(true)
				leading[i].Add(-1)
			})
		}()
		defer cancel()
	}
	waitFor(t, "a holder", func() bool { return leading[0].Load()+leading[1].Load() > 0 })
	first := 0
	if leading[1].Load() == 1 {
		first = 1
	}
	if n := leading[1-first].Load(); n != 0 {
		t.Fatalf("both replicas lead")
	}
	cancels[first]()
	<-termOver[first]
	if h := holder(t, kube); h != ids[first] {
		t.Fatalf("Lease holder while the stopped holder's work runs = %q, want %q (not released before its work ended)", h, ids[first])
	}
	close(finish[first])
	if err := <-done[first]; err != nil {
		t.Fatal(err)
	}
	if !ended[first].Load() {
		t.Fatal("Run returned before lead did")
	}
	waitFor(t, "the other to take over", func() bool { return leading[1-first].Load() == 1 })
	if h := holder(t, kube); h != ids[1-first] {
		t.Errorf("Lease holder after the handover = %q, want %q", h, ids[1-first])
	}
	close(finish[1-first])
	if err := Run(context.Background(), kube.CoordinationV1(), Config{Name: "x"}, func(context.Context) {}); err == nil {
		t.Error("Run without a namespace and identity = nil, want an error")
	}
}

func holder(t *testing.T, kube *fake.Clientset) string {
	t.Helper()
	l, err := kube.CoordinationV1().Leases("ns").Get(context.Background(), "test-lease", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// waitFor waits for cond; its deadline (15s) is shorter than the
// RetryPeriod of the test above, so a takeover that waited for it fails.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
