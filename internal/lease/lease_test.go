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
// returns only after lead returned; the Lease is released and the other
// takes over.
func TestRunOneHolderWaitsAndReleases(t *testing.T) {
	kube := fake.NewClientset()
	var leading [2]atomic.Int32
	var ended [2]atomic.Bool
	cancels := make([]context.CancelFunc, 2)
	done := make([]chan error, 2)
	for i := range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		cancels[i], done[i] = cancel, make(chan error, 1)
		c := Config{Namespace: "ns", Name: "test-lease", Identity: []string{"a", "b"}[i],
			LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 50 * time.Millisecond}
		go func() {
			done[i] <- Run(ctx, kube.CoordinationV1(), c, func(ctx context.Context) {
				leading[i].Add(1)
				<-ctx.Done()
				time.Sleep(200 * time.Millisecond) // work that finishes after the term
				ended[i].Store(true)
				leading[i].Add(-1)
			})
		}()
		defer cancel()
	}
	waitFor(t, "a holder", func() bool { return leading[0].Load()+leading[1].Load() > 0 })
	time.Sleep(300 * time.Millisecond)
	if n := leading[0].Load() + leading[1].Load(); n != 1 {
		t.Fatalf("%d replicas lead, want 1", n)
	}
	first := 0
	if leading[1].Load() == 1 {
		first = 1
	}
	cancels[first]()
	if err := <-done[first]; err != nil {
		t.Fatal(err)
	}
	if !ended[first].Load() {
		t.Fatal("Run returned before lead did")
	}
	lease, err := kube.CoordinationV1().Leases("ns").Get(context.Background(), "test-lease", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := lease.Spec.HolderIdentity; h != nil && *h != "" && *h != []string{"a", "b"}[1-first] {
		t.Errorf("Lease holder after stop = %q, want released or taken by the other", *h)
	}
	waitFor(t, "the other to take over", func() bool { return leading[1-first].Load() == 1 })
	if err := Run(context.Background(), kube.CoordinationV1(), Config{Name: "x"}, func(context.Context) {}); err == nil {
		t.Error("Run without a namespace and identity = nil, want an error")
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
