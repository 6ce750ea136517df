package freeze

import (
	"errors"
	"fmt"
	"time"

	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// NoEnvironment is the Target.Environment of an App that no environment
// deploys (an App CR written by hand or by another tool): an empty
// Environment would mean "every environment" and put it under every
// environment's freeze; this name is no environment's, so only a freeze
// whose environments include '*' (or that names none) holds it.
const NoEnvironment = "(none)"

// Action is what a freeze may refuse.
type Action string

// The actions a freeze decides on.
const (
	Plan     Action = "plan"
	Apply    Action = "apply"
	Sync     Action = "sync"
	Rollback Action = "rollback"
	Promote  Action = "promote"
	AutoSync Action = "auto-sync"
	// Operate is a day-2 action on an object of an App's tree (restart,
	// scale, suspend, resume, delete a pod), refused as a rollback is.
	Operate Action = "operate"
)

// Refused reports whether a freeze refuses a: every write does (apply,
// sync, rollback, promote, auto-sync, and any action this package does not
// know, failing closed); a plan, which writes nothing, does not.
func (a Action) Refused() bool { return a != Plan }

// FrozenError is the refusal of an action by a freeze.
type FrozenError struct {
	Action Action
	Target Target
	Freeze Freeze
	// OpensAt is when the target opens again.
	OpensAt time.Time
}

// Message is the refusal in a user's words: "frozen until 2026-12-03 18:00
// UTC by alice@example.com: release week".
func (e *FrozenError) Message() string {
	until := Stamp(e.OpensAt)
	if loc, err := e.Freeze.location(); err == nil && loc != time.UTC {
		until += " (" + e.OpensAt.In(loc).Format("15:04 ") + loc.String() + ")"
	}
	msg := fmt.Sprintf("frozen until %s by %s: %s", until, e.Freeze.Author, e.Freeze.Reason)
	if e.Freeze.Ticket != "" {
		msg += " (" + e.Freeze.Ticket + ")"
	}
	return msg
}

func (e *FrozenError) Error() string {
	return fmt.Sprintf("freeze: %s at %s refused: %s", e.Action, e.Target, e.Message())
}

// Check is the decision for a at t at now: nil when a may go ahead, a
// *FrozenError when a freeze refuses it.
func (l List) Check(now time.Time, a Action, t Target) error {
	if !a.Refused() {
		return nil
	}
	f, opens, ok := l.Active(now, t)
	if !ok {
		return nil
	}
	return &FrozenError{Action: a, Target: t, Freeze: *f, OpensAt: opens}
}

// BreakGlass is a request to override the freezes for one action.
type BreakGlass struct {
	// Reason is required: why this cannot wait until the freeze opens.
	Reason string
	// Superadmin is the caller's role decision for this person and target
	// (roles: Allow(principal, roles.BreakGlass, target).Allowed).
	Superadmin bool
	By         Author
}

// Override is the record of a break-glass: the caller writes it to the
// audit trail before it acts.
type Override struct {
	Action  Action    `json:"action"`
	Target  Target    `json:"target"`
	Freeze  Freeze    `json:"freeze"`
	OpensAt time.Time `json:"opensAt"`
	Reason  string    `json:"reason"`
	By      Author    `json:"by"`
	At      time.Time `json:"at"`
}

// ErrBreakGlassDenied is wrapped, with the *FrozenError, when a person who
// is not a superadmin asks to break the glass.
var ErrBreakGlassDenied = errors.New("freeze: only a superadmin may override a freeze")

// BreakGlassReasonError is a break-glass refused for its reason (missing,
// too long, not one line): Problem says which, Frozen is the refusal it
// was to override (which it wraps).
type BreakGlassReasonError struct {
	Problem error
	Frozen  *FrozenError
}

func (e *BreakGlassReasonError) Error() string {
	return "freeze: " + e.Problem.Error() + ": " + e.Frozen.Error()
}

// Unwrap is the refusal the break-glass was to override.
func (e *BreakGlassReasonError) Unwrap() error { return e.Frozen }

// BreakGlass decides a at t at now with an override: nil, nil when no
// freeze refuses a (nothing to override, nothing to record); the Override
// to record when bg is a superadmin's with a reason; otherwise an error
// that wraps the *FrozenError (and ErrBreakGlassDenied, or is a
// *BreakGlassReasonError).
func (l List) BreakGlass(now time.Time, a Action, t Target, bg BreakGlass) (*Override, error) {
	err := l.Check(now, a, t)
	var fe *FrozenError
	if !errors.As(err, &fe) {
		return nil, err
	}
	if !bg.Superadmin {
		return nil, fmt.Errorf("%w: %w", ErrBreakGlassDenied, fe)
	}
	// Typed text others read: without format characters (bidi controls,
	// zero-width); a line break stays, to be refused.
	bg.Reason = textfmt.Clean(bg.Reason, true)
	if err := checkText("break-glass reason", bg.Reason, true); err != nil {
		return nil, &BreakGlassReasonError{Problem: err, Frozen: fe}
	}
	if bg.By.Subject == "" {
		return nil, fmt.Errorf("freeze: break-glass by: the subject is required: %w", fe)
	}
	return &Override{Action: a, Target: t, Freeze: fe.Freeze, OpensAt: fe.OpensAt, Reason: bg.Reason, By: bg.By, At: now}, nil
}

// Note is what the audit record of the action o let through says of it:
// "break-glass by root@example.com: CVE fix (overrode freeze fz-1a2b3c4d,
// frozen until ... by alice@example.com: release week)".
func (o *Override) Note() string {
	if o == nil {
		return ""
	}
	return "break-glass by " + o.By.String() + ": " + o.Reason + " (overrode freeze " + o.Freeze.ID + ", " +
		(&FrozenError{Freeze: o.Freeze, OpensAt: o.OpensAt}).Message() + ")"
}
