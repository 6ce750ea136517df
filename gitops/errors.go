package gitops

import (
	"errors"
	"fmt"

	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/cmstore"
	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/writeback"
)

// Kind is what sort of refusal or failure an Error is: the HTTP layer
// answers each kind with one status (handlers' workflowError).
type Kind int

const (
	// KindInternal is a failure of the server (500).
	KindInternal Kind = iota
	// KindInvalid is a request the caller can correct (400).
	KindInvalid
	// KindForbidden is a write beyond the caller's role (403).
	KindForbidden
	// KindNotFound is something the request names that does not exist
	// (or that the caller may not see) (404).
	KindNotFound
	// KindConflict is a state of the environment, its repository or a
	// freeze that refuses the write now (409).
	KindConflict
	// KindUnprocessable is a write the repository's layout or catalog
	// refuses (422).
	KindUnprocessable
	// KindUpstream is a repository or cluster that failed (502).
	KindUpstream
	// KindUnavailable is a part of deploy-web that is not configured or
	// cannot be read (503).
	KindUnavailable
	// KindTooMany is a caller over a cap of their own (429).
	KindTooMany
)

// Error is a workflow's refusal or failure: its kind, a machine-readable
// reason, and the public text a user may read. Err, the cause, is for the
// server log and never shown.
type Error struct {
	Kind   Kind
	Reason string
	Public string
	Err    error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return "gitops: " + e.Public + ": " + e.Err.Error()
	}
	return "gitops: " + e.Public
}

func (e *Error) Unwrap() error { return e.Err }

func refuse(kind Kind, reason, format string, a ...any) *Error {
	return &Error{Kind: kind, Reason: reason, Public: fmt.Sprintf(format, a...)}
}

// ReasonFrozen is the reason of a write refused by a freeze.
const ReasonFrozen = "frozen"

// FreezeError maps a freeze refusal to its Error: a conflict with reason
// ReasonFrozen and the freeze's words (who, why, the ticket, when it
// opens); a break-glass that is not a superadmin's is the same refusal,
// saying so; freezes that cannot be read are unavailable (writes wait for
// them). Any other error is returned as it is.
func FreezeError(err error) error {
	var fe *freeze.FrozenError
	switch {
	case errors.Is(err, freeze.ErrBreakGlassDenied) && errors.As(err, &fe):
		return &Error{Kind: KindConflict, Reason: ReasonFrozen, Err: err,
			Public: "only a superadmin may break the glass: " + fe.Message() + "; nothing was touched"}
	case errors.As(err, &fe):
		msg := fe.Message() + "; nothing was touched"
		var re *freeze.BreakGlassReasonError
		if errors.As(err, &re) {
			msg = "break-glass needs a reason (one line, at most 500 bytes): " + msg
		}
		return &Error{Kind: KindConflict, Reason: ReasonFrozen, Err: err, Public: msg}
	case errors.Is(err, freeze.ErrUnreadable):
		if te, ok := cmstore.IsTampered(err); ok {
			return &Error{Kind: KindUnavailable, Reason: "FreezesTampered", Err: err,
				Public: "writes are refused as if frozen: " + te.Public() + "; nothing was touched"}
		}
		return &Error{Kind: KindUnavailable, Reason: "FreezesUnreadable", Err: err,
			Public: "the deploy freezes could not be read, so writes are refused until they can; nothing was touched"}
	}
	return err
}

// requestLimitError is the refusal of a promotion request over a cap:
// the requester's own (KindTooMany) or the environment's (KindUnprocessable).
func requestLimitError(err error) error {
	var le *promotion.LimitError
	if !errors.As(err, &le) {
		return err
	}
	kind := KindUnprocessable
	if le.Per == promotion.LimitRequester {
		kind = KindTooMany
	}
	return &Error{Kind: kind, Reason: "TooManyPendingRequests", Public: le.Public() + "; nothing was requested", Err: err}
}

// PublicOf is an error's text a user may read: an *Error's Public, else
// fallback.
func PublicOf(err error, fallback string) string {
	var e *Error
	if errors.As(err, &e) && e.Public != "" {
		return e.Public
	}
	return fallback
}

// publicText is what a user may read of err: the Public text of the
// first error in its chain that carries one (a typed error of deployplan,
// writeback, autosync, promotion, envconfig), else fallback. The text of
// any other error is for the log only.
func publicText(err error, fallback string) string {
	var p interface{ Public() string }
	if errors.As(err, &p) {
		return p.Public()
	}
	return fallback
}

// locateError is Locate's refusal to find the edit (the App is in no file,
// a patch would override the edit): the repository's layout, not a
// failure of the server.
type locateError struct{ err error }

func (e *locateError) Error() string { return e.err.Error() }
func (e *locateError) Unwrap() error { return e.err }

// checkError is an edited tree that does not render the App at the
// target version.
type checkError struct{ msg string }

func (e *checkError) Error() string { return e.msg }

// catalogError is a version change the environment's catalog would block:
// the plan of the commit would not be ready, so nothing is committed.
type catalogError struct{ msg string }

func (e *catalogError) Error() string { return e.msg }

// sharedFileError is an edit of a file outside the environment's own
// folder (a base every environment renders).
type sharedFileError struct{ msg string }

func (e *sharedFileError) Error() string { return e.msg }

// writeBackError maps a write-back's failure to its Error. Nothing was
// pushed in any of them.
func writeBackError(env string, err error) *Error {
	var (
		authErr  *writeback.AuthError
		refused  *writeback.RefusedError
		conflict *writeback.ConflictError
		exists   *writeback.BranchExistsError
		edit     *writeback.EditError
		large    *writeback.TooLargeError
		loc      *locateError
		chk      *checkError
		shared   *sharedFileError
		catalog  *catalogError
		own      *Error
	)
	e := &Error{Kind: KindUpstream, Reason: "WriteBackFailed", Err: err,
		Public: "the commit to environment " + env + "'s repository failed: see the server log; nothing was pushed or applied"}
	switch {
	case errors.As(err, &own):
		return own
	case errors.As(err, &authErr):
		e.Reason, e.Public = "WriteBackAuth", fmt.Sprintf("the repository refused deploy-web's credentials (HTTP %d): check writeBack.credentials of environment %s; nothing was pushed or applied", authErr.Status, env)
	case errors.As(err, &refused):
		e.Kind, e.Reason = KindConflict, "PushRefused"
		e.Public = fmt.Sprintf("the repository refused the push to %s (%s)", refused.Branch, refused.Status)
		if refused.Remote != "" {
			e.Public += ": the server says: " + refused.Remote
		}
		e.Public += "; nothing was applied. A protected branch takes writeBack.mode: branch"
	case errors.As(err, &conflict):
		e.Kind, e.Reason = KindConflict, "PushConflict"
		e.Public = fmt.Sprintf("branch %s moved during the push twice: nothing was forced or applied; try again once the other writer is done", conflict.Branch)
	case errors.As(err, &exists):
		e.Kind, e.Reason = KindConflict, "BranchExists"
		e.Public = fmt.Sprintf("the review branch %s already exists: merge or delete it, then try again; nothing was pushed", exists.Branch)
	case errors.As(err, &edit):
		e.Kind, e.Reason = KindUnprocessable, "EditError"
		e.Public = fmt.Sprintf("the edit of %s cannot be made: %s; nothing was pushed", edit.File, edit.Reason)
	case errors.As(err, &large):
		e.Kind, e.Reason = KindUnprocessable, "TooLarge"
		e.Public = "the repository is over a write-back limit: " + large.Public() + "; nothing was pushed"
	case errors.As(err, &loc):
		e.Kind, e.Reason = KindUnprocessable, "EditError"
		e.Public = publicText(loc.err, "the App's image could not be located in the repository (see the server log)") + "; nothing was pushed"
	case errors.As(err, &chk):
		e.Kind, e.Reason = KindUnprocessable, "EditError"
		e.Public = chk.msg
	case errors.As(err, &catalog):
		e.Kind, e.Reason = KindUnprocessable, "CatalogRefuses"
		e.Public = catalog.msg
	case errors.As(err, &shared):
		e.Kind, e.Reason = KindUnprocessable, "SharedFile"
		e.Public = shared.msg
	}
	return e
}
