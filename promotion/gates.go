package promotion

import (
	"fmt"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/audit"

	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/kubeview"
)

// GateID names a gate.
type GateID string

// The gates of a promotion, in the order they are shown.
const (
	// GateSoak: the source App is Healthy, not drifted, and its version
	// has run for the soak time.
	GateSoak GateID = "source-soaked"
	// GateNotFrozen: no freeze covers the target.
	GateNotFrozen GateID = "target-not-frozen"
	// GateRole: the promoter is a deployer of the target.
	GateRole GateID = "promoter-role"
	// GateSecondPerson: a protected target needs an approver who is not
	// the requester.
	GateSecondPerson GateID = "second-person"
)

// State is a gate's state.
type State string

// The states. Passed and NotConfigured let a promotion through; Failed
// stops it; Pending (the second person) makes it a request to approve.
const (
	Passed        State = "passed"
	Failed        State = "failed"
	Pending       State = "pending"
	NotConfigured State = "not-configured"
)

// Gate is one gate with its state and the sentence that explains it.
type Gate struct {
	ID      GateID `json:"id"`
	State   State  `json:"state"`
	Message string `json:"message"`
}

// Freeze is what the freezes said of the target (Configured false: no
// freezes are configured).
type Freeze struct {
	Configured bool
	Frozen     bool
	Reason     string
	Until      time.Time
	// Err is set when the freezes could not be read: the gate fails
	// closed.
	Err error
}

// GateInput is everything the gates decide on.
type GateInput struct {
	Now time.Time
	// Source is the App's cell in the source environment, SourceEnv its
	// name; Target is the target's column.
	Source    Cell
	SourceEnv string
	Target    Column
	Freeze    Freeze
	// MayPromote is the roles decision for the promoter at the target;
	// Because says why not.
	MayPromote bool
	Because    string
	// Approver is the person approving a request of Requester (nil when
	// nobody approves yet).
	Requester audit.Actor
	Approver  *audit.Actor
}

// Gates evaluates every gate of a promotion of one App, in order. The
// source's soak is the time since its version was deployed (the App's
// last deploy), with the source Healthy and undrifted now.
func Gates(in GateInput) []Gate {
	return []Gate{soakGate(in), freezeGate(in), roleGate(in), secondPersonGate(in)}
}

func soakGate(in GateInput) Gate {
	g := Gate{ID: GateSoak, State: Failed}
	s, soak := in.Source, in.Target.Soak
	switch {
	case !s.Present:
		g.Message = fmt.Sprintf("%s does not run this App: there is nothing to promote", in.SourceEnv)
	case s.Health.Status != kubeview.HealthHealthy:
		g.Message = fmt.Sprintf("%s is %s in %s: only a Healthy source is promoted", s.Version, s.Health.Status, in.SourceEnv)
	case s.Drift > 0:
		g.Message = fmt.Sprintf("%s has %d drifted object(s) in %s: what runs is not what was deployed; put it back first", s.Version, s.Drift, in.SourceEnv)
	case s.DeployedAt.IsZero():
		g.Message = fmt.Sprintf("the deploy time of %s in %s is unknown, so its soak of %s cannot be proven", s.Version, in.SourceEnv, soak)
	default:
		age := in.Now.Sub(s.DeployedAt)
		if age < soak {
			g.Message = fmt.Sprintf("%s has run in %s for %s of the %s soak: promotable at %s", s.Version, in.SourceEnv,
				age.Truncate(time.Second), soak, s.DeployedAt.Add(soak).UTC().Format(time.RFC3339))
			return g
		}
		g.State = Passed
		g.Message = fmt.Sprintf("%s has run Healthy and undrifted in %s for %s (soak %s)", s.Version, in.SourceEnv, age.Truncate(time.Second), soak)
	}
	return g
}

func freezeGate(in GateInput) Gate {
	f := in.Freeze
	switch {
	case !f.Configured:
		return Gate{ID: GateNotFrozen, State: NotConfigured, Message: "no freezes are configured"}
	case f.Err != nil:
		return Gate{ID: GateNotFrozen, State: Failed, Message: "the freezes of " + in.Target.Env + " could not be read: refused until they can"}
	case f.Frozen:
		return Gate{ID: GateNotFrozen, State: Failed, Message: fmt.Sprintf("%s is frozen until %s: %s", in.Target.Env,
			f.Until.UTC().Format(time.RFC3339), textfmt.OrDash(f.Reason))}
	}
	return Gate{ID: GateNotFrozen, State: Passed, Message: in.Target.Env + " is not frozen"}
}

func roleGate(in GateInput) Gate {
	if !in.MayPromote {
		return Gate{ID: GateRole, State: Failed, Message: textfmt.OrDash(in.Because)}
	}
	return Gate{ID: GateRole, State: Passed, Message: "you may promote to " + in.Target.Env}
}

func secondPersonGate(in GateInput) Gate {
	switch {
	case !in.Target.Protected:
		return Gate{ID: GateSecondPerson, State: NotConfigured, Message: in.Target.Env + " is not protected: no second person is needed"}
	case in.Approver == nil:
		return Gate{ID: GateSecondPerson, State: Pending, Message: in.Target.Env + " is protected: the promotion is a request another person (an approver) approves"}
	case SamePerson(*in.Approver, in.Requester):
		return Gate{ID: GateSecondPerson, State: Failed, Message: "the requester cannot approve their own promotion: another approver must"}
	}
	return Gate{ID: GateSecondPerson, State: Passed, Message: "approved by " + actorName(*in.Approver)}
}

// Decision is what the gates allow.
type Decision string

// The decisions.
const (
	// Refuse: a gate failed.
	Refuse Decision = "refuse"
	// NeedsApproval: every gate passed but the second person's: the
	// promotion becomes a request to approve.
	NeedsApproval Decision = "request"
	// Perform: every gate passed; the promotion is written.
	Perform Decision = "perform"
)

// Decide is the one decision over the gates: any failed gate refuses, a
// pending one makes a request, otherwise the promotion is performed.
func Decide(gates []Gate) Decision {
	d := Perform
	for _, g := range gates {
		switch g.State {
		case Failed:
			return Refuse
		case Pending:
			d = NeedsApproval
		}
	}
	return d
}

// SamePerson reports whether two actors are one person, for the
// two-person rule: the same subject, or the same email in any letter case
// (folding more, never less, errs on the side of refusing).
func SamePerson(a, b audit.Actor) bool {
	return a.Subject != "" && a.Subject == b.Subject || a.Email != "" && strings.EqualFold(a.Email, b.Email)
}

// actorName is how a person reads in a gate: the email, else the subject.
func actorName(a audit.Actor) string {
	if a.Email != "" {
		return a.Email
	}
	return a.Subject
}
