package autosync

import (
	"errors"
	"time"

	"github.com/hanzoai/deploy-web/freeze"
)

// Trigger names why a run was started; it is the run's actor.
type Trigger string

// The triggers of the loop's runs.
const (
	TriggerAutoSync Trigger = "auto-sync"
	TriggerSelfHeal Trigger = "self-heal"
)

// Outcome is how a run ended.
type Outcome string

// The outcomes of a run. OutcomeError is the loop's own: Deploy returned
// an error, so nothing is known of the run.
const (
	OutcomeApplied Outcome = "applied"
	OutcomeBlocked Outcome = "blocked"
	OutcomeFailed  Outcome = "failed"
	OutcomeRefused Outcome = "refused"
	OutcomeError   Outcome = "error"
	// OutcomeInterrupted: the replica stopped during the run, which
	// stopped before its next write (recorded with what it wrote); the
	// next leader checks the head again.
	OutcomeInterrupted Outcome = "interrupted"
)

// envState is what the loop remembers of one environment between checks
// (in memory, for the term of the Lease holder).
type envState struct {
	// failures counts the errors in a row; retryAt is when the next
	// check may run after them.
	failures int
	retryAt  time.Time
	// blockedHead is the head whose auto-sync was blocked at blockedAt:
	// it is not tried again until the head moves or a person acts (an
	// apply or a resume after blockedAt, or Reset).
	blockedHead string
	blockedAt   time.Time
	// lastHeal is when self-heal last ran.
	lastHeal time.Time
}

// inputs is what one check read.
type inputs struct {
	// err is set when reading the head, the live commit, the drift or the
	// pauses failed: nothing else is known.
	err        error
	paused     bool
	head, live string
	drifted    []DriftedObject
	// actedAt is the last time the environment was applied or its pause
	// resumed, by anyone.
	actedAt time.Time
}

// actionKind is what a check does.
type actionKind int

const (
	// actNever: the loop never acts on the environment (not enabled or
	// protected).
	actNever actionKind = iota
	// actWait: nothing to do before next.
	actWait
	// actFail: the check failed (inputs.err); wait before the next one,
	// longer after each failure in a row.
	actFail
	// actDeploy: deploy the head (auto-sync).
	actDeploy
	// actHeal: deploy the live commit again to put drifted objects back.
	actHeal
)

// action is decide's answer.
type action struct {
	kind actionKind
	// commit to deploy (actDeploy, actHeal).
	commit string
	// objects that drifted past the grace period (actHeal).
	objects []string
	// next is when to check again after a wait (actWait, actFail).
	next time.Time
	// actedAt is inputs.actedAt, which a blocked run must not count as a
	// person acting after it, whatever the clocks' skew (actDeploy,
	// actHeal).
	actedAt time.Time
	// why is a few words for the log and the tests.
	why string
}

// trigger is the trigger of a deploying action.
func (a action) trigger() Trigger {
	if a.kind == actHeal {
		return TriggerSelfHeal
	}
	return TriggerAutoSync
}

// decide is the loop's one decision: what to do for environment e, whose
// remembered state is st, given what this check read, at now.
func decide(e Environment, st envState, in inputs, now time.Time) action {
	switch {
	case e.Protected:
		return action{kind: actNever, why: "protected"}
	case !e.Enabled:
		return action{kind: actNever, why: "auto-sync off"}
	case now.Before(st.retryAt):
		return action{kind: actWait, next: st.retryAt, why: "backing off after errors"}
	case in.err != nil:
		return action{kind: actFail, next: now.Add(backoff(e.Interval, st.failures+1)), why: "check failed"}
	case in.paused:
		return action{kind: actWait, next: now.Add(e.Interval), why: "paused"}
	case in.head != in.live && in.head != st.blockedHead:
		return action{kind: actDeploy, commit: in.head, actedAt: in.actedAt, why: "head moved"}
	case in.head != in.live && in.actedAt.After(st.blockedAt):
		return action{kind: actDeploy, commit: in.head, actedAt: in.actedAt, why: "a person acted since the head was blocked"}
	}
	next := now.Add(e.Interval)
	why := "in sync"
	if in.head != in.live {
		why = "head blocked: waiting for a new commit or a person"
	}
	if !e.SelfHeal || in.live == "" {
		return action{kind: actWait, next: next, why: why}
	}
	var overdue []string
	for _, d := range in.drifted {
		due := d.Since.Add(e.Grace)
		if !now.Before(due) {
			overdue = append(overdue, d.Ref)
		} else if due.Before(next) {
			next, why = due, "drift within grace"
		}
	}
	if len(overdue) == 0 {
		return action{kind: actWait, next: next, why: why}
	}
	if window := st.lastHeal.Add(e.Grace); !st.lastHeal.IsZero() && now.Before(window) {
		return action{kind: actWait, next: window, why: "healed within the grace window"}
	}
	return action{kind: actHeal, commit: in.live, objects: overdue, actedAt: in.actedAt, why: "drift past grace"}
}

// settle returns st after a deploying action a ended at now with res, or
// with err when Deploy failed.
func settle(e Environment, st envState, a action, res Result, err error, now time.Time) envState {
	if a.kind == actHeal {
		st.lastHeal = now
		if st.blockedHead != "" {
			st.blockedAt = latest(now, a.actedAt) // the heal's own apply is not a person acting
		}
	}
	switch {
	case err == nil && res.Outcome == OutcomeApplied:
		st.failures, st.retryAt = 0, time.Time{}
		if a.kind == actDeploy {
			st.blockedHead, st.blockedAt = "", time.Time{}
		}
	case err == nil && res.Outcome == OutcomeBlocked:
		st.failures, st.retryAt = 0, time.Time{}
		if a.kind == actDeploy {
			st.blockedHead, st.blockedAt = a.commit, latest(now, a.actedAt)
		}
	case !frozenUntil(err).IsZero():
		// A freeze refused it: ask again when it opens (or, a freeze
		// ended early by hand aside, after the longest back-off), not
		// at every interval, each refusal a record.
		st.failures = 0
		st.retryAt = now.Add(maxBackoffFactor * e.Interval)
		if opens := frozenUntil(err); opens.Before(st.retryAt) {
			st.retryAt = opens
		}
		if !st.retryAt.After(now) {
			st.retryAt = now.Add(e.Interval)
		}
	default: // an error, a failed apply, a refusal (a lock): try again later
		st = failed(e, st, now)
	}
	return st
}

// frozenUntil is when the freeze that refused a run opens (zero when err
// is not a freeze's refusal).
func frozenUntil(err error) time.Time {
	var fe *freeze.FrozenError
	if errors.As(err, &fe) {
		return fe.OpensAt
	}
	return time.Time{}
}

// failed returns st after a failed check or run at now.
func failed(e Environment, st envState, now time.Time) envState {
	st.failures++
	st.retryAt = now.Add(backoff(e.Interval, st.failures))
	return st
}

// backoff is the wait after n failures in a row: the interval, doubling
// with each failure, at most maxBackoffFactor intervals.
func backoff(interval time.Duration, n int) time.Duration {
	d := interval
	for i := 1; i < n && d < maxBackoffFactor*interval; i++ {
		d *= 2
	}
	return min(d, maxBackoffFactor*interval)
}

// latest returns the later of a and b.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
