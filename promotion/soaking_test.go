package promotion

import (
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/objrules"
)

// TestSoakPromotableAt: the soak gate gives its promotable time exactly
// when it fails because the soak is not over (too young, history
// recorded for part of the window, an unsettled span in it), the time
// its message says; passed, or failed for another reason, none.
func TestSoakPromotableAt(t *testing.T) {
	healthy := Cell{Present: true, Version: "1.5.0", Health: objrules.Health{Status: objrules.HealthHealthy}, DeployedAt: t0}
	base := func(f func(*GateInput)) GateInput {
		in := GateInput{Now: t0.Add(11 * time.Minute), Source: healthy, SourceEnv: "dev", Target: Column{Env: "staging", After: "dev", Soak: 10 * time.Minute},
			History: History{Configured: true, CoveredSince: t0.Add(-time.Hour)}}
		if f != nil {
			f(&in)
		}
		return in
	}
	for _, tt := range []struct {
		name string
		in   GateInput
		want time.Time // zero: none
	}{
		{"passed", base(nil), time.Time{}},
		{"younger than the soak", base(func(in *GateInput) { in.Now = t0.Add(9 * time.Minute) }), t0.Add(10 * time.Minute)},
		{"history for part of the window", base(func(in *GateInput) { in.History.CoveredSince = t0.Add(3 * time.Minute) }), t0.Add(13 * time.Minute)},
		{"Degraded inside the window", base(func(in *GateInput) {
			in.History.Unsettled = []Interval{{From: t0.Add(8 * time.Minute), To: t0.Add(9 * time.Minute), State: "Degraded"}}
		}), t0.Add(19 * time.Minute)},
		{"Degraded now", base(func(in *GateInput) { in.Source.Health.Status = objrules.HealthDegraded }), time.Time{}},
		{"no timeline", base(func(in *GateInput) { in.History = History{} }), time.Time{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := soakGate(tt.in)
			if !g.PromotableAt.Equal(tt.want) {
				t.Errorf("soakGate().PromotableAt = %v, want %v (%s)", g.PromotableAt, tt.want, g.Message)
			}
			if !tt.want.IsZero() && (g.State != Failed || !containsClock(g.Message, tt.want, tt.in.Now)) {
				t.Errorf("soakGate() = %s %q, want failed naming %s", g.State, g.Message, clock(tt.want, tt.in.Now))
			}
		})
	}
}

func containsClock(msg string, at, now time.Time) bool { return strings.Contains(msg, clock(at, now)) }
