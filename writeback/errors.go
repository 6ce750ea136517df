package writeback

import "fmt"

// EditError is an edit that cannot be made: the file at fault and why.
// Nothing was pushed.
type EditError struct {
	// File is the edit's file, relative to the repository root.
	File string
	// Reason says what is wrong and what to do.
	Reason string
}

func (e *EditError) Error() string {
	return fmt.Sprintf("writeback: edit %s: %s", e.File, e.Reason)
}

// AuthError is a push or a fetch the server refused for the credentials:
// missing, wrong, expired or without write access. It never holds the
// token.
type AuthError struct {
	// Repo is the repository URL (without credentials).
	Repo string
	// Status is the HTTP status (401 or 403).
	Status int
}

func (e *AuthError) Error() string {
	if e.Status == 403 {
		return fmt.Sprintf("writeback: %s refused the credentials write access (HTTP 403): give the token push rights on the repository", e.Repo)
	}
	return fmt.Sprintf("writeback: %s did not accept the credentials (HTTP 401): check writeBack.credentials (the token may be wrong or expired)", e.Repo)
}

// RefusedError is a push the server refused for a reason of its own: a
// hook (a protected branch, a required review), a rule of the forge.
type RefusedError struct {
	Repo, Branch string
	// Status is the server's status of the update ("pre-receive hook
	// declined").
	Status string
	// Remote is what the server printed (its "remote:" lines), one line,
	// capped; "" when it printed nothing.
	Remote string
}

func (e *RefusedError) Error() string {
	msg := fmt.Sprintf("writeback: %s refused the push to %s (%s)", e.Repo, e.Branch, e.Status)
	if e.Remote != "" {
		msg += ": the server says: " + e.Remote
	}
	return msg + ": the branch may be protected; use writeBack.mode: branch to push a review branch instead"
}

// ConflictError is a push rejected twice because the branch moved: once
// after the first attempt, and again after the edit was re-applied on the
// new head. Nothing was forced.
type ConflictError struct {
	Repo, Branch string
	// Reason is the second rejection's status.
	Reason string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("writeback: %s: branch %s moved during the push twice (%s): nothing was forced; try again once the other writer is done", e.Repo, e.Branch, e.Reason)
}

// BranchExistsError is a review branch that is already on the server:
// deploy-web never moves a branch it did not just create.
type BranchExistsError struct {
	Repo, Branch string
}

func (e *BranchExistsError) Error() string {
	return fmt.Sprintf("writeback: %s already has the review branch %s: merge or delete it, then try again", e.Repo, e.Branch)
}
