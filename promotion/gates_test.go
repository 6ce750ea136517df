package promotion

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/kubeview"
)

func TestGates(t *testing.T) {
	healthy := Cell{Present: true, Version: "1.5.0", Health: kubeview.Health{Status: kubeview.HealthHealthy}, DeployedAt: t0}
	staging := Column{Env: "staging", After: "dev", Soak: 10 * time.Minute}
	prod := Column{Env: "prod", After: "staging", Soak: 10 * time.Minute, Protected: true}
	alice := audit.Actor{Email: "alice@example.com", Subject: "a1"}
	bob := audit.Actor{Email: "bob@example.com", Subject: "b1"}
	aliceUpper := audit.Actor{Email: "ALICE@example.com", Subject: "other"}
	base := func(f func(*GateInput)) GateInput {
		in := GateInput{Now: t0.Add(11 * time.Minute), Source: healthy, SourceEnv: "dev", Target: staging,
			Freeze: Freeze{Configured: true}, MayPromote: true, Requester: alice}
		if f != nil {
			f(&in)
		}
		return in
	}
	tests := []struct {
		name string
		in   GateInput
		// states are the gates' states in order: soak, freeze, role, second person.
		states   []State
		decision Decision
		// msg is a substring of the first gate not passed.
		msg string
	}{
		{"all pass", base(nil), []State{Passed, Passed, Passed, NotConfigured}, Perform, ""},
		{"younger than the soak", base(func(in *GateInput) { in.Now = t0.Add(9 * time.Minute) }),
			[]State{Failed, Passed, Passed, NotConfigured}, Refuse, "for 9m0s of the 10m0s soak: promotable at 2026-12-01T12:10:00Z"},
		{"exactly the soak", base(func(in *GateInput) { in.Now = t0.Add(10 * time.Minute) }),
			[]State{Passed, Passed, Passed, NotConfigured}, Perform, ""},
		{"degraded source", base(func(in *GateInput) { in.Source.Health.Status = kubeview.HealthDegraded }),
			[]State{Failed, Passed, Passed, NotConfigured}, Refuse, "1.5.0 is Degraded in dev"},
		{"drifted source", base(func(in *GateInput) { in.Source.Drift = 2 }),
			[]State{Failed, Passed, Passed, NotConfigured}, Refuse, "2 drifted object(s)"},
		{"absent source", base(func(in *GateInput) { in.Source = Cell{} }),
			[]State{Failed, Passed, Passed, NotConfigured}, Refuse, "dev does not run this App"},
		{"unknown deploy time", base(func(in *GateInput) { in.Source.DeployedAt = time.Time{} }),
			[]State{Failed, Passed, Passed, NotConfigured}, Refuse, "cannot be proven"},
		{"no freezes configured", base(func(in *GateInput) { in.Freeze = Freeze{} }),
			[]State{Passed, NotConfigured, Passed, NotConfigured}, Perform, ""},
		{"frozen", base(func(in *GateInput) {
			in.Freeze = Freeze{Configured: true, Frozen: true, Reason: "<b>release week</b>", Until: t0.Add(48 * time.Hour)}
		}), []State{Passed, Failed, Passed, NotConfigured}, Refuse, "staging is frozen until 2026-12-03T12:00:00Z: <b>release week</b>"},
		{"freezes unreadable", base(func(in *GateInput) { in.Freeze = Freeze{Configured: true, Err: errors.New("boom")} }),
			[]State{Passed, Failed, Passed, NotConfigured}, Refuse, "could not be read"},
		{"not a deployer", base(func(in *GateInput) { in.MayPromote, in.Because = false, "viewer of staging only" }),
			[]State{Passed, Passed, Failed, NotConfigured}, Refuse, "viewer of staging only"},
		{"protected: a request", base(func(in *GateInput) { in.Target = prod }),
			[]State{Passed, Passed, Passed, Pending}, NeedsApproval, "the promotion is a request"},
		{"protected: approved by another", base(func(in *GateInput) { in.Target, in.Approver = prod, &bob }),
			[]State{Passed, Passed, Passed, Passed}, Perform, ""},
		{"protected: approved by the requester", base(func(in *GateInput) { in.Target, in.Approver = prod, &alice }),
			[]State{Passed, Passed, Passed, Failed}, Refuse, "cannot approve their own"},
		{"protected: the requester's email in capitals", base(func(in *GateInput) { in.Target, in.Approver = prod, &aliceUpper }),
			[]State{Passed, Passed, Passed, Failed}, Refuse, "cannot approve their own"},
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
