package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// TestDeploymentGraceCoversTheStop: the base Deployment's
// terminationGracePeriodSeconds covers its preStop sleep, the grace its
// ConfigMap gives --shutdown-grace and what a stop takes after it
// (drainRecordReserve), so the kubelet never kills a replica that is
// still recording an interrupted apply or releasing its Leases; and that
// grace is the flag's default.
func TestDeploymentGraceCoversTheStop(t *testing.T) {
	b, err := os.ReadFile("../../deploy/base/deployment.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	spec := d.Spec.Template.Spec
	if spec.TerminationGracePeriodSeconds == nil {
		t.Fatal("deployment.yaml sets no terminationGracePeriodSeconds")
	}
	var preStop time.Duration
	for _, c := range spec.Containers {
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
			preStop = time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
		}
	}
	k, err := os.ReadFile("../../deploy/base/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	grace := time.Duration(0)
	for _, line := range strings.Split(string(k), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "- "+envName(envPrefix, "shutdown-grace")+"="); ok {
			if grace, err = time.ParseDuration(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if grace != defaultShutdownGrace {
		t.Errorf("kustomization's shutdown grace = %v, want the flag's default %v", grace, defaultShutdownGrace)
	}
	need := preStop + grace + drainRecordReserve
	if got := time.Duration(*spec.TerminationGracePeriodSeconds) * time.Second; got < need {
		t.Errorf("terminationGracePeriodSeconds = %v, want at least preStop %v + grace %v + %v = %v", got, preStop, grace, drainRecordReserve, need)
	}
}

// fakeDrain is a drainer whose run ends when release is closed, or is
// interrupted when Drain's context ends.
type fakeDrain struct {
	entered, release chan struct{}
	interrupted      atomic.Bool
}

func (f *fakeDrain) Drain(ctx context.Context) (int, error) {
	close(f.entered)
	select {
	case <-f.release:
		return 0, nil
	case <-ctx.Done():
		f.interrupted.Store(true)
		return 1, nil
	}
}

// TestStopServingOrder: the Lease holders' context ends only after the
// runs drained, and stopServing returns only after the holders did.
func TestStopServingOrder(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.NotFoundHandler()}
	go hs.Serve(ln)
	runs := &fakeDrain{entered: make(chan struct{}), release: make(chan struct{})}
	leaseCtx, stopLeases := context.WithCancel(context.Background())
	var held leaseHolders
	var holderDone atomic.Bool
	held.Go(func() {
		<-leaseCtx.Done()
		holderDone.Store(true)
	})
	done := make(chan error, 1)
	go func() {
		done <- stopServing(hs, time.Minute, runs, stopLeases, &held, slog.New(slog.DiscardHandler))
	}()
	// Drain is under way and has not returned: the Lease holders keep
	// their context.
	<-runs.entered
	if leaseCtx.Err() != nil {
		t.Fatal("the Lease holders were stopped before the runs drained")
	}
	close(runs.release)
	if err := <-done; err != nil {
		t.Fatalf("stopServing() = %v, want nil", err)
	}
	if !holderDone.Load() {
		t.Error("stopServing returned before the Lease holders did")
	}
	if runs.interrupted.Load() {
		t.Error("a run that ended within the grace was interrupted")
	}
	if _, err := http.Get("http://" + ln.Addr().String()); err == nil {
		t.Error("the HTTP server still accepts after the stop")
	}
}
