package gitops

import (
	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/promotion"
)

// The promotion types the pages show (the matrix, the dialog, the
// requests), re-exported so that the handlers reach promotion through
// the service only.
type (
	Column           = promotion.Column
	Cell             = promotion.Cell
	Matrix           = promotion.Matrix
	MatrixQuery      = promotion.Query
	History          = promotion.History
	Interval         = promotion.Interval
	Freeze           = promotion.Freeze
	PromotionRequest = promotion.Request
	Decision         = promotion.Decision
)

// Request states and decisions the pages tell apart.
const (
	StatePending  = promotion.StatePending
	StateRejected = promotion.StateRejected
	Refuse        = promotion.Refuse
	NeedsApproval = promotion.NeedsApproval
	// GateSoak and GateChecks are the gates a matrix cell shows.
	GateSoak   = promotion.GateSoak
	GateChecks = promotion.GateChecks
)

// MaxReasonBytes bounds a promotion's reason.
const MaxReasonBytes = promotion.MaxReasonBytes

// BuildMatrix is the matrix of versions across columns (promotion.Build).
func BuildMatrix(cols []Column, apps map[string][]kubeview.AppRow) Matrix {
	return promotion.Build(cols, apps)
}

// SamePerson reports whether a and b are one person (the two-person rule's
// test).
func SamePerson(a, b audit.Actor) bool { return promotion.SamePerson(a, b) }
