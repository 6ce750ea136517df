package templates

import (
	"time"

	"github.com/hanzoai/deploy-web/kubeview"
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
}

// PromoteLink is a "Promote to" control of a cell.
type PromoteLink struct {
	Target, URL string
}

// row returns a cell's App row for the version chips.
func (c MatrixCell) row() kubeview.AppRow {
	return kubeview.AppRow{Version: c.Version, Running: c.Running}
}
