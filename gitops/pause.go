package gitops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/envconfig"
)

// PauseRequest is a pause of Env's auto-sync for Reason until Until (RFC
// 3339) or For (a Go duration such as "8h"), exactly one of them, by Who;
// Cluster names the cluster Env deploys to in the audit record.
type PauseRequest struct {
	Env        *envconfig.Environment
	Cluster    string
	Reason     string
	Until, For string
	Who        Person
}

// Pause pauses the auto-sync of req.Env and records it (refused attempts
// included). The bounds of the pause (in the future, at most
// autosync.MaxPause) are the store's.
func (s *Service) Pause(ctx context.Context, req PauseRequest) (autosync.Pause, error) {
	start := time.Now()
	reason := strings.TrimSpace(req.Reason)
	var p autosync.Pause
	until, err := PauseUntil(req.Until, req.For, s.opts.Now())
	switch {
	case err != nil: // PauseUntil's *Error: the request's own fields
	case s.opts.AutoSync == nil:
		err = noAutoSync(req.Env.Name)
	default:
		p, err = s.opts.AutoSync.Pause(ctx, req.Env.Name, reason, until, req.Who.Actor.String())
		if err != nil {
			err = pauseError(err)
		}
	}
	s.recordPause(ctx, audit.VerbPause, req.Env, req.Cluster, req.Who, start, reason, p, err)
	return p, err
}

// ResumeRequest is the end of a pause of Env's auto-sync, by Who.
type ResumeRequest struct {
	Env     *envconfig.Environment
	Cluster string
	Who     Person
}

// Resume resumes the auto-sync of req.Env and records it.
func (s *Service) Resume(ctx context.Context, req ResumeRequest) (autosync.Pause, error) {
	start := time.Now()
	if s.opts.AutoSync == nil {
		return autosync.Pause{}, noAutoSync(req.Env.Name)
	}
	p, err := s.opts.AutoSync.Resume(ctx, req.Env.Name, req.Who.Actor.String())
	if err != nil {
		err = pauseError(err)
	}
	s.recordPause(ctx, audit.VerbResume, req.Env, req.Cluster, req.Who, start, p.Reason, p, err)
	return p, err
}

// NoAutoSync is the refusal of a pause or resume of environment env,
// which has no auto-sync.
func noAutoSync(env string) *Error {
	return refuse(KindConflict, "NoAutoSync", "environment %s has no auto-sync (autoSync.enabled in the environments file): there is nothing to pause or resume", env)
}

// NoAutoSync is noAutoSync for the handlers, which refuse before the
// request is read.
func NoAutoSync(env string) *Error { return noAutoSync(env) }

// PauseUntil decides a pause's end from until (RFC 3339) or forText (a
// Go duration), exactly one of them, at now.
func PauseUntil(until, forText string, now time.Time) (time.Time, error) {
	until, forText = strings.TrimSpace(until), strings.TrimSpace(forText)
	switch {
	case until != "" && forText != "":
		return time.Time{}, refuse(KindInvalid, "BadRequest", "give until or for, not both")
	case until != "":
		t, err := time.Parse(time.RFC3339, until)
		if err != nil {
			return time.Time{}, refuse(KindInvalid, "BadRequest", "until %q: want a time such as 2026-12-02T18:00:00Z", until)
		}
		return t, nil
	case forText != "":
		d, err := time.ParseDuration(forText)
		if err != nil || d <= 0 {
			return time.Time{}, refuse(KindInvalid, "BadRequest", "for %q: want a duration such as 8h (at most %s)", forText, autosync.MaxPause)
		}
		return now.Add(d), nil
	}
	return time.Time{}, refuse(KindInvalid, "BadRequest", "give the pause's end: until (RFC 3339) or for (a duration such as 8h, at most 168h)")
}

// pauseError maps the store's refusal of a pause or resume.
func pauseError(err error) error {
	switch {
	case errors.Is(err, autosync.ErrNotPaused):
		return &Error{Kind: KindConflict, Reason: "NotPaused", Public: "the environment is not paused", Err: err}
	case errors.As(err, new(*autosync.PauseError)):
		// validate's refusals: the request's own fields.
		return &Error{Kind: KindUnprocessable, Reason: "BadPause", Public: publicText(err, "the pause is refused"), Err: err}
	}
	return &Error{Kind: KindUpstream, Reason: "ClusterError", Public: "the pauses could not be written to the cluster; nothing changed", Err: err}
}

// recordPause writes the audit record of a pause or resume.
func (s *Service) recordPause(ctx context.Context, verb audit.Verb, env *envconfig.Environment, cluster string, who Person, start time.Time, reason string, p autosync.Pause, err error) {
	rec := audit.Record{Time: start, Duration: audit.Duration(time.Since(start)), Actor: who.Actor, Verb: verb,
		Cluster: cluster, Environment: env.Name, Namespace: env.Namespace, Blockers: []string{}, Outcome: audit.OutcomeSucceeded}
	switch verb {
	case audit.VerbPause:
		rec.Message = PauseMessage(env.Name, p.Until, reason)
	default:
		rec.Message = fmt.Sprintf("auto-sync of %s resumed (paused by %s: %s)", env.Name, p.By, reason)
	}
	var e *Error
	if errors.As(err, &e) {
		rec.Outcome, rec.Message = audit.OutcomeRefused, e.Public
		if e.Kind == KindUpstream || e.Kind == KindInternal || e.Kind == KindUnavailable {
			rec.Outcome = audit.OutcomeFailed
		}
	}
	s.record(ctx, rec)
}

// PausedUntilWords join the environment and the end in the message of a
// pause's record (PauseMessage), which the timeline reads back.
const PausedUntilWords = " paused until "

// PauseMessage is the message of the record of a pause of env until
// until, for reason.
func PauseMessage(env string, until time.Time, reason string) string {
	return "auto-sync of " + env + PausedUntilWords + until.UTC().Format(time.RFC3339) + ": " + reason
}
