package main

import (
	"context"
	"log/slog"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/audit/recordfeed"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/freeze/freezewatch"
)

// startFreezeWatch puts scheduled freeze windows on record
// (freeze/freezewatch): an audit record as each window of a stored freeze
// starts and ends by itself, which the notifications (freeze-start,
// freeze-end) and the timeline read. It runs on every replica and acts
// only while active says so: the notification sender's Lease, the one
// single-replica loop that needs these records (no third Lease); it
// subscribes to the records' feed on every replica, so the one that takes
// over knows the windows on record. Nothing without freezes or an audit
// trail.
func startFreezeWatch(ctx context.Context, g *freeze.Gate, records *audit.Store, feed *recordfeed.Feed, active func() bool, log *slog.Logger) {
	if g == nil || records == nil || feed == nil {
		return
	}
	w := &freezewatch.Watcher{Freezes: gateSnapshot{g}, Records: records, Feed: feed, Active: active, Log: log.With("component", "freezewatch")}
	go w.Run(ctx)
}

// gateSnapshot lists the freezes from the gate's snapshot (at most a few
// seconds old, shared with every write check) rather than a read of the
// ConfigMap on every step of the watcher.
type gateSnapshot struct{ g *freeze.Gate }

func (s gateSnapshot) List(ctx context.Context) (freeze.List, error) {
	l, _, err := s.g.Snapshot(ctx)
	return l, err
}
