// Package lease runs a piece of work on the one replica holding a
// Kubernetes Lease (client-go leaderelection), and returns only once that
// work ended and, on a clean stop, the Lease was released. Auto-sync,
// notify's Sender, the timeline and audit's Retainer use it.
package lease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Config names the Lease and its timings: the holder renews it every
// RetryPeriod and gives it up when it could not within RenewDeadline; a
// crashed holder is replaced within LeaseDuration. A holder that stops
// cleanly releases it once its work returned, and a waiting replica,
// which watches the Lease, takes it at once.
type Config struct {
	Namespace, Name string
	// Identity is this replica's (its pod name).
	Identity string
	// Labels are set on the Lease.
	Labels                                    map[string]string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// releaseTimeout bounds the release of the Lease on a clean stop.
const releaseTimeout = 5 * time.Second

// Run contends for the Lease until ctx ends. Each time this replica
// takes it, lead runs with a context that ends with the term (the Lease
// lost, or ctx ended); Run does not contend again, nor return, before
// lead returned. Ending ctx releases the Lease, after lead returned: the
// next holder never overlaps the work of this one (a sender's last
// delivery-log write, a timeline flush). While another replica holds the
// Lease, Run watches it and contends again the moment it is released,
// rather than at its next RetryPeriod.
func Run(ctx context.Context, leases coordinationv1client.LeasesGetter, c Config, lead func(ctx context.Context)) error {
	if c.Namespace == "" || c.Name == "" || c.Identity == "" {
		return errors.New("lease: the Lease needs a namespace, a name and this replica's identity")
	}
	for ctx.Err() == nil {
		lock := &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace},
			Client:     leases,
			LockConfig: resourcelock.ResourceLockConfig{Identity: c.Identity},
			Labels:     c.Labels,
		}
		// attempt ends this round of contending when the holder releases
		// the Lease (wake), never once this replica leads.
		attempt, stopAttempt := context.WithCancel(ctx)
		var mu sync.Mutex
		started := false
		termDone := make(chan struct{})
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:          lock,
			LeaseDuration: c.LeaseDuration,
			RenewDeadline: c.RenewDeadline,
			RetryPeriod:   c.RetryPeriod,
			// Released below, once lead returned: client-go's release
			// on cancel runs while lead may still be writing.
			ReleaseOnCancel: false,
			Name:            c.Name,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(lctx context.Context) {
					mu.Lock()
					started = true
					mu.Unlock()
					defer close(termDone)
					if lctx.Err() == nil { // a term that ended before it began does nothing
						lead(lctx)
					}
				},
				OnStoppedLeading: func() {},
			},
		})
		if err != nil {
			stopAttempt()
			return fmt.Errorf("lease: %s/%s: %w", c.Namespace, c.Name, err)
		}
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			watchRelease(attempt, leases, c, func() {
				mu.Lock()
				defer mu.Unlock()
				if !started {
					stopAttempt()
				}
			})
		}()
		le.Run(attempt)
		mu.Lock()
		led := started
		mu.Unlock()
		if led {
			<-termDone
		}
		stopAttempt()
		<-watched
		if led && ctx.Err() != nil {
			release(lock, c.Identity)
		}
	}
	return nil
}

// release gives up the Lease if this replica still holds it, as
// client-go's ReleaseOnCancel does (no holder, a 1s duration), with an
// update conditional on the Lease as read: a Lease another replica took
// meanwhile is left alone.
func release(lock *resourcelock.LeaseLock, identity string) {
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	rec, _, err := lock.Get(ctx)
	if err != nil || rec.HolderIdentity != identity {
		return
	}
	now := metav1.NewTime(time.Now())
	_ = lock.Update(ctx, resourcelock.LeaderElectionRecord{
		LeaderTransitions: rec.LeaderTransitions, LeaseDurationSeconds: 1, RenewTime: now, AcquireTime: now,
	})
}

// watchRelease calls wake each time the Lease is released (updated
// without a holder) or deleted, until ctx ends; the state the watch starts
// from is not a release (a free Lease is taken by the elector's first
// try). A watch that cannot be opened (no watch right) leaves contending
// to the RetryPeriod.
func watchRelease(ctx context.Context, leases coordinationv1client.LeasesGetter, c Config, wake func()) {
	for ctx.Err() == nil {
		opened := time.Now()
		w, err := leases.Leases(c.Namespace).Watch(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("metadata.name", c.Name).String()})
		if err == nil {
			watchEvents(ctx, w, c.Name, wake)
			w.Stop()
		}
		if time.Since(opened) < time.Second {
			select { // a watch refused or closed at once: not in a busy loop
			case <-ctx.Done():
			case <-time.After(c.RetryPeriod):
			}
		}
	}
}

// watchEvents reads w until it closes or ctx ends (a watcher need not
// close its channel when the context of its request ends), calling wake
// for each release of the Lease name.
func watchEvents(ctx context.Context, w watch.Interface, name string, wake func()) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			l, isLease := ev.Object.(*coordinationv1.Lease)
			if !isLease || l.Name != name {
				continue
			}
			free := l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == ""
			if ev.Type == watch.Deleted || (ev.Type == watch.Modified && free) {
				wake()
			}
		}
	}
}
