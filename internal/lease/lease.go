// Package lease runs a piece of work on the one replica holding a
// Kubernetes Lease (client-go leaderelection), and returns only once that
// work ended. Auto-sync and notify's Sender use it; audit's Retainer holds
// its own copy of the same loop, to be moved here.
package lease

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Config names the Lease and its timings: the holder renews it every
// RetryPeriod and gives it up when it could not within RenewDeadline; a
// crashed holder is replaced within LeaseDuration. A holder that stops
// cleanly releases it at once.
type Config struct {
	Namespace, Name string
	// Identity is this replica's (its pod name).
	Identity string
	// Labels are set on the Lease.
	Labels                                    map[string]string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Run contends for the Lease until ctx ends. Each time this replica
// takes it, lead runs with a context that ends with the term (the Lease
// lost, or ctx ended); Run does not contend again, nor return, before
// lead returned. Ending ctx releases the Lease.
func Run(ctx context.Context, leases coordinationv1client.LeasesGetter, c Config, lead func(ctx context.Context)) error {
	if c.Namespace == "" || c.Name == "" || c.Identity == "" {
		return errors.New("lease: the Lease needs a namespace, a name and this replica's identity")
	}
	for ctx.Err() == nil {
		// le.Run starts OnStartedLeading in a goroutine and returns
		// without waiting for it: wait here.
		var started atomic.Bool
		termDone := make(chan struct{})
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: &resourcelock.LeaseLock{
				LeaseMeta:  metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace},
				Client:     leases,
				LockConfig: resourcelock.ResourceLockConfig{Identity: c.Identity},
				Labels:     c.Labels,
			},
			LeaseDuration:   c.LeaseDuration,
			RenewDeadline:   c.RenewDeadline,
			RetryPeriod:     c.RetryPeriod,
			ReleaseOnCancel: true,
			Name:            c.Name,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(lctx context.Context) {
					started.Store(true)
					defer close(termDone)
					if lctx.Err() == nil { // a term that ended before it began does nothing
						lead(lctx)
					}
				},
				OnStoppedLeading: func() {},
			},
		})
		if err != nil {
			return fmt.Errorf("lease: %s/%s: %w", c.Namespace, c.Name, err)
		}
		le.Run(ctx)
		if started.Load() {
			<-termDone
		}
	}
	return nil
}
