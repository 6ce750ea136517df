package templates

import (
	"time"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/promcheck"
	"github.com/hanzoai/deploy-web/promotion"
)

// MatrixProps is the matrix of /environments: Apps (rows) by environments
// (columns, in promotion order).
type MatrixProps struct {
	Columns []MatrixColumn
	Rows    []MatrixRow
	// Query is the filters shown (and kept in every URL of the fragment).
	Query MatrixQuery
	// PollURL refreshes the fragment; JSONURL is the same matrix as JSON.
	PollURL, JSONURL string
	// Total is the number of Apps before the filters.
	Total int
	Now   time.Time
	// Pending are the promotion requests waiting for a second person, in
	// the environments the person may view.
	Pending []PendingPromotion
}

// PendingPromotion is a request waiting for approval, linked to its
// dialog (where an approver decides it).
type PendingPromotion struct {
	ID, Source, Target, Versions, Requester, URL string
}

// MatrixQuery is the matrix's bookmarkable filters.
type MatrixQuery struct {
	Search  string
	Health  string
	Differs bool
}

// MatrixColumn is one environment of the matrix.
type MatrixColumn struct {
	promotion.Column
	// URL is the environment's page.
	URL string
	// Promote offers "Promote all to <env>": every App of this
	// environment, for each environment promoted from it that the person
	// may promote to.
	Promote []PromoteLink
}

// MatrixRow is one App across the environments.
type MatrixRow struct {
	App   string
	Cells []MatrixCell
}

// MatrixCell is one App in one environment.
type MatrixCell struct {
	promotion.Cell
	Env string
	// Unavailable: the environment's Apps could not be read.
	Unavailable bool
	// AppURL is the App's page in its cluster ("" when absent).
	AppURL string
	// PrevEnv is the environment this one is promoted from; DiffURL
	// compares the App there and here ("" when either runs none).
	PrevEnv, DiffURL string
	// Promote offers "Promote to <env>", one per environment promoted
	// from this one that the person may promote to.
	Promote []PromoteLink
	// Checks load the soak and checks state of this version's promotion
	// into each environment promoted from this one that has
	// promotion.checks and runs another release (MatrixChecks, a
	// fragment: the matrix's paint does not wait for Prometheus).
	Checks []PromoteLink
}

// MatrixChecksProps is the soak and checks state of promoting App from
// Source into Target, from the promotion's own gates (the dialog's).
type MatrixChecksProps struct {
	Target, Source, App string
	// Soak and Gate are the soak gate and the checks gate; Checks the
	// checks' results the checks gate decided on.
	Soak, Gate promotion.Gate
	Checks     []promcheck.Result
	// Error says why the gates could not be evaluated ("" when they
	// were).
	Error string
	// URL is the promotion dialog.
	URL string
}

// PromoteLink is a "Promote to" control of a cell.
type PromoteLink struct {
	Target, URL string
}

// row returns a cell's App row for the version chips.
func (c MatrixCell) row() kubeview.AppRow {
	return kubeview.AppRow{Version: c.Version, Running: c.Running}
}

// checkText is a check's state in a few words: held, the value against
// the threshold, or why it was not evaluated.
func checkText(r promcheck.Result) string {
	switch r.State() {
	case promcheck.StateHeld:
		return "held (" + r.Threshold + ")"
	case promcheck.StateFailing:
		v := "no value"
		if r.HasValue {
			v = promcheck.FormatValue(r.Value)
		}
		return v + ", threshold " + r.Threshold
	}
	return r.Problem
}

// soakText is the soak gate's state in a word.
func soakText(g promotion.Gate) string {
	if g.State == promotion.Passed {
		return "soaked"
	}
	return "soaking"
}
