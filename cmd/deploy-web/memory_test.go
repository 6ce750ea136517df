package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestReleaseSyncPeak waits for the caches to sync, then returns the free
// heap to the operating system once and says so; it gives up with its
// context.
func TestReleaseSyncPeak(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	var calls atomic.Int32
	synced := func() bool { return calls.Add(1) >= 3 }
	done := make(chan struct{})
	go func() {
		releaseSyncPeak(context.Background(), synced, log)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("releaseSyncPeak did not return after the caches synced")
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("synced asked %d times, want 3 (until it said yes)", n)
	}
	if out := buf.String(); !strings.Contains(out, "memory of the initial fill returned") || !strings.Contains(out, "heap_in_use_mb=") {
		t.Errorf("log = %q, want the release reported", out)
	}

	buf.Reset()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	releaseSyncPeak(ctx, func() bool { return false }, log)
	if buf.Len() != 0 {
		t.Errorf("log after a cancelled wait = %q, want nothing", buf.String())
	}
}
