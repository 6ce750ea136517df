package templates

import (
	"time"

	"github.com/hanzoai/deploy-web/promotion"
)

// PromoteProps is /environments/{env}/promote: the gates of promoting
// Source's versions into Target, each with its state, and the form that
// requests or performs it (enabled only when no gate failed); the
// target's promotion requests below.
type PromoteProps struct {
	Layout         LayoutProps
	Target, Source string
	// App is the one App promoted ("" for every App of Source).
	App       string
	Protected bool
	Apps      []PromoteApp
	// Decision is promotion.Decide's answer over every gate ("" when
	// Error is set).
	Decision promotion.Decision
	// CanSubmit draws the button enabled; Button is its text.
	CanSubmit bool
	Button    string
	CSRF      string
	// Error says why no gates are shown.
	Error string
	// Result is what a submitted promotion did.
	Result *PromoteResult
	// Requests are the target's promotion requests, newest first.
	Requests []PromoteRequest
	// RequestsError says why the requests are not shown.
	RequestsError string
	Now           time.Time
}

// PromoteApp is one App of a promotion with its gates.
type PromoteApp struct {
	App, From, To, Digest string
	Gates                 []promotion.Gate
}

// PromoteResult is what a promotion, an approval or a rejection did.
type PromoteResult struct {
	// Refused is the refusal's text (nothing was written).
	Refused string
	// RequestID is a stored request waiting for a second person.
	RequestID string
	// Branch, CompareURL and Commit are the commit written.
	Branch, CompareURL, Commit string
	// RunURL is the plan started after the commit; RunError why none was.
	RunURL, RunError string
	// Rejected says the request was rejected.
	Rejected bool
}

// PromoteRequest is one stored request.
type PromoteRequest struct {
	promotion.Request
	// Versions is its Apps and versions in one line.
	Versions string
	// CanDecide draws Approve and Reject: the person is an approver of the
	// target and not the requester, and the request is pending.
	CanDecide bool
	// NotYours says why a pending request shows no buttons.
	NotYours string
}

// gateStateText is a gate's state as the dialog shows it.
func gateStateText(s promotion.State) string {
	switch s {
	case promotion.Passed:
		return "✓ passed"
	case promotion.Failed:
		return "✗ failed"
	case promotion.Pending:
		return "… needs approval"
	}
	return "– not configured"
}

// gateName is a gate's name in words.
func gateName(id promotion.GateID) string {
	switch id {
	case promotion.GateSoak:
		return "Source healthy and soaked"
	case promotion.GateChecks:
		return "Metrics checks held"
	case promotion.GateNotFrozen:
		return "Target not frozen"
	case promotion.GateRole:
		return "You may promote"
	case promotion.GateSecondPerson:
		return "Second person"
	}
	return string(id)
}
