package handlers

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/timeline"
)

// TestUnsettled: the spans of the soak window the gate counts against
// the source: any health but Healthy, a flap through another state, and
// drift.
func TestUnsettled(t *testing.T) {
	at := func(m int) time.Time { return testNow.Add(time.Duration(m) * time.Minute) }
	e := func(m int, k timeline.Kind, from, to string) timeline.Entry {
		return timeline.Entry{Time: at(m), Kind: k, From: from, To: to, Count: 1}
	}
	flap := e(4, timeline.KindHealth, "Healthy", "Degraded")
	flap.Count, flap.Last = 5, at(6)
	flap.To = "Healthy" // Degraded -> Healthy folded: ends Healthy
	flap.From = "Degraded"
	healthy := promotion.Cell{Health: objrules.Health{Status: objrules.HealthHealthy}}
	tests := []struct {
		name    string
		entries []timeline.Entry
		cur     promotion.Cell
		want    []promotion.Interval
	}{
		{"Healthy throughout", []timeline.Entry{e(-20, timeline.KindHealth, "Progressing", "Healthy")}, healthy, nil},
		{"Progressing, then Healthy", []timeline.Entry{e(2, timeline.KindHealth, "Progressing", "Healthy")}, healthy,
			[]promotion.Interval{{From: at(0), To: at(2), State: "Progressing"}}},
		{"a Degraded band", []timeline.Entry{e(3, timeline.KindHealth, "Healthy", "Degraded"), e(5, timeline.KindHealth, "Degraded", "Healthy")}, healthy,
			[]promotion.Interval{{From: at(3), To: at(5), State: "Degraded"}}},
		{"a flap through Degraded", []timeline.Entry{flap}, healthy,
			[]promotion.Interval{{From: at(0), To: at(4), State: "Degraded"}, {From: at(4), To: at(6), State: "flapping Degraded/Healthy"}}},
		{"drift and back", []timeline.Entry{e(7, timeline.KindDrift, timeline.DriftClean, timeline.DriftDrifted), e(8, timeline.KindDrift, timeline.DriftDrifted, timeline.DriftClean)}, healthy,
			[]promotion.Interval{{From: at(7), To: at(8), State: "drifted"}}},
		{"no entry: the cell now", nil, promotion.Cell{Health: objrules.Health{Status: objrules.HealthDegraded}, Drift: 1},
			[]promotion.Interval{{From: at(0), To: at(10), State: "Degraded"}, {From: at(0), To: at(10), State: "drifted"}}},
		{"sync changes are not counted", []timeline.Entry{e(1, timeline.KindSync, "Synced", "OutOfSync")}, healthy, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := unsettled(tt.entries, tt.cur, at(0), at(10))
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("unsettled(%s) mismatch (-want +got):\n%s", tt.name, d)
			}
		})
	}
}
