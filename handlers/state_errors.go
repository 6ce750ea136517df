package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/internal/cmstore"
)

// stateError is the answer to an error of deploy-web's stores that
// carries its own public text (docs/security.md): signed state changed
// outside deploy-web (503: nothing is decided on it), too many refusals
// (429 with Retry-After). nil for any other error. (A cap on pending
// promotion requests is the promotion workflow's refusal: gitops.)
func stateError(err error) *httpError {
	var rl *audit.RateLimitedError
	switch {
	case errors.As(err, &rl):
		return &httpError{Status: http.StatusTooManyRequests, Reason: "TooManyRefusals", Public: rl.Public(), Err: err, RetryAfter: rl.RetryAfter}
	}
	if te, ok := cmstore.IsTampered(err); ok {
		return &httpError{Status: http.StatusServiceUnavailable, Reason: "StateTampered", Public: te.Public() + "; nothing was changed", Err: err}
	}
	return nil
}

// Refusals says how long a person whose writes were refused too often
// must wait (audit.Limiter, which the audit store feeds).
type Refusals interface {
	Wait(a audit.Actor) time.Duration
}

// refusalWait is the error of a write by the request's person while they
// must wait (nil otherwise, and for reads).
func (s *Server) refusalWait(r *http.Request) error {
	if s.opts.Refusals == nil || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return nil
	}
	if d := s.opts.Refusals.Wait(auditActor(r.Context())); d > 0 {
		return &audit.RateLimitedError{RetryAfter: d}
	}
	return nil
}

// retryAfter is the Retry-After header's value for d: whole seconds,
// at least 1.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int((d+time.Second-1)/time.Second)))
}
