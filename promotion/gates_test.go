package promotion

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/objrules"
)

func TestGates(t *testing.T) {
	healthy := Cell{Present: true, Version: "1.5.0", Health: objrules.Health{Status: objrules.HealthHealthy}, DeployedAt: t0}
	staging := Column{Env: "staging", After: "dev", Soak: 10 * time.Minute}
	prod := Column{Env: "prod", After: "staging", Soak: 10 * time.Minute, Protected: true}
	alice := audit.Actor{Email: "alice@example.com", Subject: "a1"}
	bob := audit.Actor{Email: "bob@example.com", Subject: "b1"}
	aliceUpper := audit.Actor{Email: "ALICE@example.com", Subject: "other"}
	base := func(f func(*GateInput)) GateInput {
		in := GateInput{Now: t0.Add(11 * time.Minute), Source: healthy, SourceEnv: "dev", Target: staging,
			Freeze: Freeze{Configured: true}, MayPromote: true, Requester: alice,
			History: History{Configured: true, CoveredSince: t0.Add(-time.Hour)}}
		if f != nil {
			f(&in)
		}
		return in
	}
	tests := []struct {
		name string
		in   GateInput
		// states are the gates' states in order: soak, checks, freeze, role, second person.
		states   []State
		decision Decision
		// msg is a substring of the first gate not passed.
		msg string
	}{
		{"all pass", base(nil), []State{Passed, NotConfigured, Passed, Passed, NotConfigured}, Perform, ""},
		{"younger than the soak", base(func(in *GateInput) { in.Now = t0.Add(9 * time.Minute) }),
			[]State{Failed, NotConfigured, Passed, Passed, NotConfigured}, Refuse, "for 9m0s of the 10m0s soak: promotable at 12:10:00 UTC"},
		{"exactly the soak", base(func(in *GateInput) { in.Now = t0.Add(10 * time.Minute) }),
			[]State{Passed, NotConfigured, Passed, Passed, NotConfigured}, Perform, ""},
		{"degraded source", base(func(in *GateInput) { in.Source.Health.Status = objrules.HealthDegraded }),
			[]State{Failed, NotConfigured, Passed, Passed, NotConfigured}, Refuse, "1.5.0 is Degraded in dev"},
		{"drifted source", base(func(in *GateInput) { in.Source.Drift = 2 }),
			[]State{Failed, NotConfigured, Passed, Passed, NotConfigured}, Refuse, "2 drifted object(s)"},
		{"absent source", base(func(in *GateInput) { in.Source = Cell{} }),
			[]State{Failed, NotConfigured, Passed, Passed, NotConfigured}, Refuse, "dev does not run this App"},
		{"unknown deploy time", base(func(in *GateInput) { in.Source.DeployedAt = time.Time{} }),
			[]State{Failed, NotConfigured, Passed, Passed, NotConfigured}, Refuse, "cannot be proven"},
		// The soak window is [12:01, 12:11]: the history of it decides.
		{"Degraded two minutes ago, recovered", base(func(in *GateInput) {
			in.History.Unsettled = []Interval{{From: t0.Add(8*time.Minute + 20*time.Second), To: t0.Add(9 * time.Minute), State: "Degraded"}}
		}), []State{Failed, NotConfigured, Passed, Passed, NotConfigured}, Refuse, "1.5.0 was Degraded in dev at 12:08:20 UTC for 40s: promotable at 12:19:00 UTC (soak 10m0s)"},
		{"the band that ends last sets the time", base(func(in *GateInput) {
			in.History.Unsettled = []Interval{{From: t0.Add(5 * time.Minute), To: t0.Add(6 * time.Minute), State: "drifted"},
				{From: t0.Add(2 * time.Minute), To: t0.Add(3 * time.Minute), State: "Progressing"}}
		}), []State{Failed, NotConfigured, Passed, Passed, NotConfigured}, Refuse, "was drifted in dev at 12:05:00 UTC for 1m0s: promotable at 12:16:00 UTC"},
		{"a band across the window's start counts from it", base(func(in *GateInput) {
			in.History.Unsettled = []Interval{{From: t0.Add(30 * time.Second), To: t0.Add(90 * time.Second), State: "flapping Healthy/Degraded"}}
		}), []State{Failed, NotConfigured, Passed, Passed, NotConfigured}, Refuse, "was flapping Healthy/Degraded in dev at 12:01:00 UTC for 30s: promotable at 12:11:30 UTC"},
		{"a band before the window", base(func(in *GateInput) {
			in.History.Unsettled = []Interval{{From: t0.Add(-time.Minute), To: t0.Add(time.Minute), State: "Degraded"}}
		}), []State{Passed, NotConfigured, Passed, Passed, NotConfigured}, Perform, ""},
		{"history from the window's start", base(func(in *GateInput) { in.History.CoveredSince = t0.Add(time.Minute) }),
			[]State{Passed, NotConfigured, Passed, Passed, NotConfigured}, Perform, ""},
		{"history missing: recorded for 8 minutes only", base(func(in *GateInput) { in.History.CoveredSince = t0.Add(3 * time.Minute) }),
			[]State{Failed, NotConfigured, Passed, Passed, NotConfigured}, Refuse,
			"history is missing: the timeline has recorded 1.5.0 in dev only since 12:03:00 UTC, not the whole 10m0s soak (since 12:01:00 UTC): promotable at 12:13:00 UTC at the earliest"},
		{"history missing: not recorded at all", base(func(in *GateInput) { in.History.CoveredSince = time.Time{} }),
			[]State{Failed, NotConfigured, Passed, Passed, NotConfigured}, Refuse, "the timeline has not recorded 1.5.0 in dev yet"},
		{"no timeline", base(func(in *GateInput) { in.History = History{} }),
			[]State{Failed, NotConfigured, Passed, Passed, NotConfigured}, Refuse, "deploy-web keeps no timeline"},
		{"timeline unreadable", base(func(in *GateInput) { in.History.Err = errors.New("not loaded") }),
			[]State{Failed, NotConfigured, Passed, Passed, NotConfigured}, Refuse, "could not be read, so its soak cannot be proven"},
		{"no freezes configured", base(func(in *GateInput) { in.Freeze = Freeze{} }),
			[]State{Passed, NotConfigured, NotConfigured, Passed, NotConfigured}, Perform, ""},
		{"frozen", base(func(in *GateInput) {
			in.Freeze = Freeze{Configured: true, Frozen: true, Reason: "<b>release week</b>", Until: t0.Add(48 * time.Hour)}
		}), []State{Passed, NotConfigured, Failed, Passed, NotConfigured}, Refuse, "staging is frozen until 2026-12-03T12:00:00Z: <b>release week</b>"},
		{"freezes unreadable", base(func(in *GateInput) { in.Freeze = Freeze{Configured: true, Err: errors.New("boom")} }),
			[]State{Passed, NotConfigured, Failed, Passed, NotConfigured}, Refuse, "could not be read"},
		{"not a deployer", base(func(in *GateInput) { in.MayPromote, in.Because = false, "viewer of staging only" }),
			[]State{Passed, NotConfigured, Passed, Failed, NotConfigured}, Refuse, "viewer of staging only"},
		{"protected: a request", base(func(in *GateInput) { in.Target = prod }),
			[]State{Passed, NotConfigured, Passed, Passed, Pending}, NeedsApproval, "the promotion is a request"},
		{"protected: approved by another", base(func(in *GateInput) { in.Target, in.Approver = prod, &bob }),
			[]State{Passed, NotConfigured, Passed, Passed, Passed}, Perform, ""},
		{"protected: approved by the requester", base(func(in *GateInput) { in.Target, in.Approver = prod, &alice }),
			[]State{Passed, NotConfigured, Passed, Passed, Failed}, Refuse, "cannot approve their own"},
		{"checks held", base(func(in *GateInput) {
			in.Checks = Checks{Configured: true, Results: []CheckResult{{Name: "error-rate", Held: true, Message: "check error-rate held"}, {Name: "p99", Held: true, Message: "check p99 held"}}}
		}), []State{Passed, Passed, Passed, Passed, NotConfigured}, Perform, ""},
		{"a check failed", base(func(in *GateInput) {
			in.Checks = Checks{Configured: true, Results: []CheckResult{{Name: "p99", Held: true, Message: "check p99 held"},
				{Name: "error-rate", Message: `check error-rate failed: 0.08 at 12:10:00 UTC breaks the threshold <= 0.05 (query max(e{app="api"}))`}}}
		}), []State{Passed, Failed, Passed, Passed, NotConfigured}, Refuse, `check error-rate failed: 0.08 at 12:10:00 UTC breaks the threshold <= 0.05 (query max(e{app="api"}))`},
		{"a check not evaluated", base(func(in *GateInput) {
			in.Checks = Checks{Configured: true, Results: []CheckResult{{Name: "error-rate", Message: "check error-rate could not be evaluated: Prometheus at https://p is unreachable"}}}
		}), []State{Passed, Failed, Passed, Passed, NotConfigured}, Refuse, "Prometheus at https://p is unreachable"},
		{"checks configured, none evaluated", base(func(in *GateInput) { in.Checks = Checks{Configured: true} }),
			[]State{Passed, Failed, Passed, Passed, NotConfigured}, Refuse, "were not evaluated"},
		{"protected: the requester's email in capitals", base(func(in *GateInput) { in.Target, in.Approver = prod, &aliceUpper }),
			[]State{Passed, NotConfigured, Passed, Passed, Failed}, Refuse, "cannot approve their own"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gates := Gates(tt.in)
			var states []State
			for _, g := range gates {
				states = append(states, g.State)
			}
			if diff := cmp.Diff(tt.states, states); diff != "" {
				t.Errorf("Gates() states (-want +got):\n%s", diff)
			}
			if got := Decide(gates); got != tt.decision {
				t.Errorf("Decide(Gates()) = %s, want %s", got, tt.decision)
			}
			if tt.msg != "" {
				for _, g := range gates {
					if g.State != Passed && g.State != NotConfigured {
						if !strings.Contains(g.Message, tt.msg) {
							t.Errorf("gate %s message = %q, want it to contain %q", g.ID, g.Message, tt.msg)
						}
						break
					}
				}
			}
		})
	}
	// A passed soak says what was proven: the whole window, not the time
	// since the deploy.
	want := "1.5.0 has run Healthy and undrifted in dev over the whole 10m0s soak (deployed 11m0s ago; recorded since 11:00:00 UTC)"
	if g := soakGate(base(nil)); g.Message != want {
		t.Errorf("soakGate(all pass).Message = %q, want %q", g.Message, want)
	}
}

func TestClock(t *testing.T) {
	tests := []struct {
		t    time.Time
		want string
	}{
		{t0.Add(90 * time.Second), "12:01:30 UTC"},
		{t0.Add(-13 * time.Hour), "2026-11-30 23:00:00 UTC"},
		{time.Date(2025, 12, 1, 12, 0, 0, 0, time.UTC), "2025-12-01 12:00:00 UTC"},
	}
	for _, tt := range tests {
		if got := clock(tt.t, t0); got != tt.want {
			t.Errorf("clock(%v, %v) = %q, want %q", tt.t, t0, got, tt.want)
		}
	}
}

func TestSamePerson(t *testing.T) {
	tests := []struct {
		a, b audit.Actor
		want bool
	}{
		{audit.Actor{Subject: "s"}, audit.Actor{Subject: "s"}, true},
		{audit.Actor{Subject: "s", Email: "a@x"}, audit.Actor{Subject: "t", Email: "A@X"}, true},
		{audit.Actor{Subject: "s", Email: "a@x"}, audit.Actor{Subject: "t", Email: "b@x"}, false},
		{audit.Actor{}, audit.Actor{}, false},
		{audit.Actor{Email: "a@x"}, audit.Actor{Subject: "a@x"}, false},
	}
	for _, tt := range tests {
		if got := SamePerson(tt.a, tt.b); got != tt.want {
			t.Errorf("SamePerson(%+v, %+v) = %t, want %t", tt.a, tt.b, got, tt.want)
		}
	}
}
