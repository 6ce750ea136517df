package handlers

import (
	"context"
	"sync"
	"testing"

	"k8s.io/client-go/metadata"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/internal/platformtest"
)

// realTrail is the audit store of the real control plane p (namespace
// deploy-web) and an envrun Record that appends each apply's record to
// it, remembering the last one's id.
type realTrail struct {
	store *audit.Store
	mu    sync.Mutex
	last  string
}

func newRealTrail(t *testing.T, p *platformtest.Env) *realTrail {
	t.Helper()
	store, err := audit.New(p.Kube.CoreV1(), metadata.NewForConfigOrDie(platformtest.AdminConfig(p.Cluster.Config)), audit.Options{Namespace: "deploy-web"})
	if err != nil {
		t.Fatal(err)
	}
	return &realTrail{store: store}
}

// record is envrun's Options.Record.
func (rt *realTrail) record(t *testing.T) func(context.Context, audit.Record) {
	return func(ctx context.Context, rec audit.Record) {
		rec.Cluster = "in-cluster"
		got, err := rt.store.Append(ctx, rec)
		if err != nil {
			t.Errorf("append the apply record: %v", err)
		}
		rt.mu.Lock()
		rt.last = got.ID
		rt.mu.Unlock()
	}
}

// lastID is the id of the last record appended.
func (rt *realTrail) lastID() string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.last
}
