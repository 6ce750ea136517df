package devcluster

import (
	"context"
	"testing"
	"time"
)

// ForTest starts a cluster for one test (or, from TestMain's helpers, one
// package) and stops it in t.Cleanup, whether the test passed or failed.
// Without the binaries it fails with the command that builds them.
func ForTest(t testing.TB, opts Options) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	c, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("devcluster.Start: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("devcluster: process logs are in %s", c.Dir)
		}
		c.Stop()
	})
	return c
}
