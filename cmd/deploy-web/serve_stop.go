package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// leaseStopTimeout bounds, once the runs drained, the wait for the Lease
// holders (auto-sync, notify, timeline, audit retention) to end their
// term's work and release their Leases.
const leaseStopTimeout = 10 * time.Second

// drainRecordReserve is what a stop takes past --shutdown-grace at most:
// the interrupted runs' records (envrun's bound, 15s) and the Leases'
// release (leaseStopTimeout). The Deployment's
// terminationGracePeriodSeconds covers preStop + grace + this
// (TestDeploymentGraceCoversTheStop).
const drainRecordReserve = 15*time.Second + leaseStopTimeout

// leaseHolders are the goroutines of this replica that hold a Lease while
// they run (lease.Run); a stop cancels their context once the runs
// drained and waits for them, so that each Lease is released before the
// process exits and a peer takes it over at once.
type leaseHolders struct{ wg sync.WaitGroup }

// Go runs f as a Lease holder.
func (h *leaseHolders) Go(f func()) { h.wg.Go(f) }

// wait waits for the holders to return, at most timeout; false when some
// had not.
func (h *leaseHolders) wait(timeout time.Duration) bool {
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// drainer is envrun.Runner's Drain.
type drainer interface {
	Drain(ctx context.Context) (int, error)
}

// stopServing is serve's stop on SIGTERM, in order: the HTTP server
// stops accepting and the runs stop being taken (runs nil: none), both
// given grace (requests in flight, a plan or an apply under way, finish);
// a run still going when grace ends is interrupted before its next write
// and recorded; then the Lease holders' context ends (stopLeases) and
// each releases its Lease once its work returned. Auto-sync keeps its
// Lease while the runs drain, so no peer starts a run into the
// environment lock a draining apply holds.
func stopServing(hs *http.Server, grace time.Duration, runs drainer, stopLeases context.CancelFunc, held *leaseHolders, log *slog.Logger) error {
	if grace <= 0 {
		grace = defaultShutdownGrace
	}
	start := time.Now()
	var httpErr, runErr error
	var wg sync.WaitGroup
	wg.Go(func() { httpErr = shutdown(hs, grace, log) })
	if runs != nil {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), grace)
			defer cancel()
			n, err := runs.Drain(ctx)
			if n > 0 {
				log.Warn("runs interrupted at the end of the grace period: recorded as interrupted", "runs", n)
			}
			runErr = err
		})
	}
	wg.Wait()
	stopLeases()
	var leaseErr error
	if !held.wait(leaseStopTimeout) {
		leaseErr = fmt.Errorf("shutdown: Lease holders still running %s after the stop; their Leases expire by themselves", leaseStopTimeout)
	}
	log.Info("stopped: runs drained, Leases released", "took_ms", time.Since(start).Milliseconds())
	return errors.Join(httpErr, runErr, leaseErr)
}
