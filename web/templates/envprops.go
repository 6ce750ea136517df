package templates

import (
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/planstore"
)

// EnvSummary is one environment as the console lists it.
type EnvSummary struct {
	Name, Namespace string
	// Cluster names the configured cluster the environment deploys to,
	// when it is one ("" otherwise).
	Cluster         string
	Protected       bool
	Repo, Ref, Path string
	// Last is the newest plan or apply, nil when there is none.
	Last *planstore.Entry
}

// EnvListPage is /environments.
type EnvListPage struct {
	Layout LayoutProps
	Envs   []EnvSummary
	// HistoryError is set when the history could not be read.
	HistoryError string
	// Matrix is the versions of the Apps across the environments (nil:
	// no environments are configured).
	Matrix *MatrixProps
}

// EnvPage is /environments/{env}.
type EnvPage struct {
	Layout  LayoutProps
	Env     EnvSummary
	History []planstore.Entry
	// Run is a run in progress or just finished (nil: none).
	Run *RunPanelProps
	// Report is the newest (or the chosen) stored report (nil: none).
	Report *ReportView
	CSRF   string
	// Apply is the plan the page offers to apply: the finished ready plan
	// shown, when it is the environment's latest plan (nil: Apply is not
	// offered).
	Apply *ApplyOffer
	// Audit is the environment's audit records (nil: not shown).
	Audit *AuditHistoryProps
	// Notifications is the environment's subscriptions (nil: not shown).
	Notifications *NotificationsProps
	// Allowed is what the signed-in person may do in this environment
	// (Plan and Apply).
	Allowed Allowed
	// GitOps is the environment's GitOps panel.
	GitOps GitOpsProps
	// Freeze is the environment's freeze banner.
	Freeze FreezeBannerProps
	// Why is the environment's "Not live" panel (nil: not shown).
	Why *EnvWhyProps
}

// ApplyOffer is a finished ready plan shown on the page that Apply applies.
type ApplyOffer struct {
	PlanID, SourceCommit, RenderedDigest string
}

// ApplyAreaView is the Apply control of an unprotected environment.
type ApplyAreaView struct {
	Env, CSRF string
	Offer     *ApplyOffer
	// OOB renders it as an out-of-band swap (a finished run refreshes it).
	OOB bool
	// Freeze is the environment's freeze state (the break-glass field,
	// or Apply disabled with the reason).
	Freeze BreakGlassProps
}

// RunPanelProps is a plan or apply as it runs.
type RunPanelProps struct {
	Env, ID, Action, User string
	Steps                 []string
	Done                  bool
	StreamURL, URL        string
	Refusal, Error        string
	Report                *ReportView
	// History, when set on a finished run, refreshes the page's history.
	History []planstore.Entry
	// ApplyArea, when set on a finished run, refreshes the page's Apply
	// control (offered for a finished ready plan, withdrawn otherwise).
	ApplyArea *ApplyAreaView
}

// ReportView is a stored or fresh report, ready to draw.
type ReportView struct {
	Env    string
	Entry  planstore.Entry
	Report *deployplan.Report
	// Changes are the plan's objects, each with its diff.
	Changes  []ChangeRow
	DiffNote string
	JSONURL  string
}

// ChangeRow is one object of a plan with its diff.
type ChangeRow struct {
	Obj deployplan.ObjectPlan
	// Diff is nil when no diff was kept for the object.
	Diff *ChangeDiff
}

// ChangeDiff is the diff of one planned object against the live one.
type ChangeDiff struct {
	// Hidden: a Secret, whose contents are never shown.
	Hidden bool
	// NoLive: the object does not exist yet (every line is added).
	NoLive bool
	// Error says why no diff could be made.
	Error string
	View  DiffTableProps
}
