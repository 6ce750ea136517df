package promotion

import (
	"fmt"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/objrules"

	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// GateID names a gate.
type GateID string

// The gates of a promotion, in the order they are shown.
const (
	// GateSoak: the source App is Healthy and not drifted now, its
	// version was deployed at least the soak time ago, and the timeline
	// shows it Healthy and undrifted over the whole soak window.
	GateSoak GateID = "source-soaked"
	// GateChecks: every promotion check (metrics) held over its window
	// in the source.
	GateChecks GateID = "source-checks"
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
	// PromotableAt is, for a soak gate that failed because the soak is
	// not over, when it passes at the earliest (zero otherwise): what
	// "why" says of an App waiting for its soak.
	PromotableAt time.Time `json:"-"`
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
	// History is the timeline's record of the source App over the soak
	// window.
	History History
	// Checks are the target's promotion checks, evaluated against the
	// source.
	Checks Checks
}

// Checks are the promotion checks' outcomes for the checks gate: the
// caller evaluates them (package promcheck), this package decides.
type Checks struct {
	// Configured is false when the target has no promotion.checks.
	Configured bool
	// Results has one entry per check, in the file's order.
	Results []CheckResult
}

// CheckResult is one check's outcome.
type CheckResult struct {
	Name string
	// Held: every sample over the window held the threshold.
	Held bool
	// Message says the check, the query as run, the value and the
	// threshold (promcheck.Result.Message).
	Message string
}

// History is what the timeline recorded of the source App, for the soak
// gate: the handlers read it from the timeline (their soakHistory), so
// this package decides on plain values.
type History struct {
	// Configured is false when no timeline is kept: no soak can be
	// proven.
	Configured bool
	// CoveredSince is since when the record of the App is unbroken
	// (timeline.Store.Coverage); zero when it has none.
	CoveredSince time.Time
	// Unsettled are the spans of the soak window in which the App was not
	// Healthy or was drifted, in any order.
	Unsettled []Interval
	// Err is set when the history could not be read: the gate fails
	// closed.
	Err error
}

// Interval is a span [From, To) in which the source was not settled;
// State says how ("Degraded", "drifted", "flapping Healthy/Degraded").
type Interval struct {
	From, To time.Time
	State    string
}

// Gates evaluates every gate of a promotion of one App, in order.
func Gates(in GateInput) []Gate {
	return []Gate{soakGate(in), ChecksGate(in), freezeGate(in), roleGate(in), secondPersonGate(in)}
}

// soakGate: the soak window is [Now-soak, Now]. The source passes when it
// is Healthy and undrifted now, its version was deployed before the
// window, the timeline's record of it covers the whole window and shows
// no unsettled span inside it. A window the record does not cover fails
// (the history is missing), never passes silently.
func soakGate(in GateInput) Gate {
	g := Gate{ID: GateSoak, State: Failed}
	s, soak, h := in.Source, in.Target.Soak, in.History
	start := in.Now.Add(-soak)
	at := func(t time.Time) string { return clock(t, in.Now) }
	switch {
	case !s.Present:
		g.Message = fmt.Sprintf("%s does not run this App: there is nothing to promote", in.SourceEnv)
	case s.Health.Status != objrules.HealthHealthy:
		g.Message = fmt.Sprintf("%s is %s in %s: only a Healthy source is promoted", s.Version, s.Health.Status, in.SourceEnv)
	case s.Drift > 0:
		g.Message = fmt.Sprintf("%s has %d drifted object(s) in %s: what runs is not what was deployed; put it back first", s.Version, s.Drift, in.SourceEnv)
	case s.DeployedAt.IsZero():
		g.Message = fmt.Sprintf("the deploy time of %s in %s is unknown, so its soak of %s cannot be proven", s.Version, in.SourceEnv, soak)
	case s.DeployedAt.After(start):
		g.PromotableAt = s.DeployedAt.Add(soak)
		g.Message = fmt.Sprintf("%s has run in %s for %s of the %s soak: promotable at %s", s.Version, in.SourceEnv,
			in.Now.Sub(s.DeployedAt).Truncate(time.Second), soak, at(g.PromotableAt))
	case h.Err != nil:
		g.Message = fmt.Sprintf("the timeline of %s in %s could not be read, so its soak cannot be proven: refused until it can", s.Version, in.SourceEnv)
	case !h.Configured:
		g.Message = fmt.Sprintf("deploy-web keeps no timeline (it has no namespace of its own, docs/timeline.md), so the %s soak of %s in %s cannot be proven", soak, s.Version, in.SourceEnv)
	case h.CoveredSince.IsZero():
		g.Message = fmt.Sprintf("history is missing: the timeline has not recorded %s in %s yet, so its %s soak cannot be proven", s.Version, in.SourceEnv, soak)
	case h.CoveredSince.After(start):
		g.PromotableAt = h.CoveredSince.Add(soak)
		g.Message = fmt.Sprintf("history is missing: the timeline has recorded %s in %s only since %s, not the whole %s soak (since %s): promotable at %s at the earliest",
			s.Version, in.SourceEnv, at(h.CoveredSince), soak, at(start), at(g.PromotableAt))
	default:
		if b, ok := lastUnsettled(h.Unsettled, start, in.Now); ok {
			g.PromotableAt = b.To.Add(soak)
			g.Message = fmt.Sprintf("%s was %s in %s at %s for %s: promotable at %s (soak %s)", s.Version, b.State, in.SourceEnv,
				at(b.From), b.To.Sub(b.From).Round(time.Second), at(g.PromotableAt), soak)
			return g
		}
		g.State = Passed
		g.Message = fmt.Sprintf("%s has run Healthy and undrifted in %s over the whole %s soak (deployed %s ago; recorded since %s)", s.Version, in.SourceEnv,
			soak, in.Now.Sub(s.DeployedAt).Truncate(time.Second), at(h.CoveredSince))
	}
	return g
}

// lastUnsettled is the unsettled interval of the window [start, now]
// that ends last (it sets when the source is promotable), clipped to the
// window; false when none overlaps the window.
func lastUnsettled(bands []Interval, start, now time.Time) (Interval, bool) {
	var last Interval
	found := false
	for _, b := range bands {
		if !b.To.After(start) || b.From.After(now) {
			continue
		}
		if b.From.Before(start) {
			b.From = start
		}
		if !found || b.To.After(last.To) {
			last, found = b, true
		}
	}
	return last, found
}

// clock is t as a gate says it: the time of day when t falls on now's
// day (UTC), else the date too.
func clock(t, now time.Time) string {
	t, now = t.UTC(), now.UTC()
	if t.YearDay() == now.YearDay() && t.Year() == now.Year() {
		return t.Format("15:04:05 UTC")
	}
	return t.Format("2006-01-02 15:04:05 UTC")
}

// ChecksGate is the checks gate (also alone: "why" shows it). It
// passes when every check held; a check that failed or could
// not be evaluated fails it, and the message names each such check.
// Configured checks without results (none evaluated) fail closed.
func ChecksGate(in GateInput) Gate {
	c := in.Checks
	if !c.Configured {
		return Gate{ID: GateChecks, State: NotConfigured, Message: in.Target.Env + " has no promotion checks"}
	}
	if len(c.Results) == 0 {
		return Gate{ID: GateChecks, State: Failed, Message: "the promotion checks of " + in.Target.Env + " were not evaluated: refused until they are"}
	}
	var failed, held []string
	for _, r := range c.Results {
		if r.Held {
			held = append(held, r.Message)
		} else {
			failed = append(failed, r.Message)
		}
	}
	if len(failed) > 0 {
		return Gate{ID: GateChecks, State: Failed, Message: strings.Join(failed, "; ")}
	}
	return Gate{ID: GateChecks, State: Passed, Message: strings.Join(held, "; ")}
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
	return Gate{ID: GateSecondPerson, State: Passed, Message: "approved by " + in.Approver.String()}
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
