// Package templates holds deploy-web's templ components: one Layout, the
// pages, and the fragments HTMX swaps in. Every component takes a typed props
// struct; nothing here reads the cluster or the request.
package templates

import (
	"net/url"
	"strconv"
	"time"

	"github.com/a-h/templ"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/web/paths"
)

// LayoutProps are what every page's frame needs.
type LayoutProps struct {
	Title string
	// User is the signed-in user's display name ("" on pages before login).
	User string
	// CSRF is the session's token, sent by HTMX on every request and by the
	// logout form.
	CSRF string
	// Nav marks the active navigation entry.
	Nav string
	// ShowAudit draws the Audit entry (the person may read /audit).
	ShowAudit bool
	// Assets maps a static file name to its cache-busting URL.
	Assets func(name string) string
	// Style is the stylesheet inlined in <head> (a <style> element the
	// Content-Security-Policy allows by its hash), so the first paint waits
	// for no stylesheet request.
	Style templ.Component
	// Search is the query the top bar's search box shows (on /search).
	Search string
	// Theme is the person's theme choice (theme.go): ThemeLight or
	// ThemeDark set <html data-theme>, anything else follows the system.
	Theme string
}

// FleetQuery is the application list's view state, all of it in the URL.
type FleetQuery struct {
	Search, Cluster, Namespace, Health, Sync, Sort string
	// Drift selects the Apps with objects changed outside their operator.
	Drift bool
	// Frozen selects the Apps a deploy freeze holds now.
	Frozen bool
	// Why selects the Apps that have a reason not to be live (why.Cached:
	// the reasons the cached rows decide).
	Why  bool
	Page int
}

// Values encodes the query as URL parameters, omitting defaults.
func (q FleetQuery) Values() url.Values {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("q", q.Search)
	set("cluster", q.Cluster)
	set("namespace", q.Namespace)
	set("health", q.Health)
	set("sync", q.Sync)
	if q.Drift {
		v.Set("drift", "true")
	}
	if q.Frozen {
		v.Set("frozen", "true")
	}
	if q.Why {
		v.Set("why", "true")
	}
	if q.Sort != "" && q.Sort != kubeview.SortName {
		v.Set("sort", q.Sort)
	}
	if q.Page > 1 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	return v
}

// URL returns the home page URL of this query.
func (q FleetQuery) URL() string {
	return paths.Fleet(q.Values())
}

// WithPage returns the query on another page.
func (q FleetQuery) WithPage(p int) FleetQuery { q.Page = p; return q }

// WithHealth returns the query filtered by a health status (page reset).
func (q FleetQuery) WithHealth(h string) FleetQuery { q.Health = h; q.Page = 0; return q }

// WithDrift returns the query filtered (or not) by drift (page reset).
func (q FleetQuery) WithDrift(d bool) FleetQuery { q.Drift = d; q.Page = 0; return q }

// WithFrozen returns the query filtered (or not) to frozen Apps (page
// reset).
func (q FleetQuery) WithFrozen(f bool) FleetQuery { q.Frozen = f; q.Page = 0; return q }

// WithWhy returns the query filtered (or not) to the Apps that have a
// reason not to be live (page reset).
func (q FleetQuery) WithWhy(w bool) FleetQuery { q.Why = w; q.Page = 0; return q }

// WithSync returns the query filtered by a sync status (page reset).
func (q FleetQuery) WithSync(s string) FleetQuery { q.Sync = s; q.Page = 0; return q }

// Filtered reports whether any filter or search is set.
func (q FleetQuery) Filtered() bool {
	return q.Search != "" || q.Cluster != "" || q.Namespace != "" || q.Health != "" || q.Sync != "" || q.Drift || q.Frozen || q.Why
}

// FleetPage is the home page.
type FleetPage struct {
	Layout     LayoutProps
	Namespaces []string
	// Clusters names every configured cluster (the cluster filter, shown
	// with more than one).
	Clusters []string
	Results  FleetResults
	// Freeze is the banner of the freezes holding the rows shown, when
	// the list is filtered.
	Freeze FreezeBannerProps
}

// FleetResults is the self-refreshing part of the home page: summary,
// table and pager.
type FleetResults struct {
	Query   FleetQuery
	Rows    []kubeview.AppRow
	Counts  kubeview.Counts
	Matched int
	PerPage int
	Pages   int
	Version uint64
	// Clusters are the configured clusters with their caches' state, by
	// name; with more than one the list shows a cluster column, a cluster
	// facet and a stale banner per unreachable cluster.
	Clusters []ClusterState
	Now      time.Time
	// PollURL is fetched every few seconds to refresh this fragment.
	PollURL string
	// Frozen maps the rows frozen now (FrozenKey) to when they open.
	Frozen map[string]string
}

// FrozenKey is a row's key in FleetResults.Frozen.
func FrozenKey(cluster, namespace, name string) string {
	return cluster + "/" + namespace + "/" + name
}

// frozenUntil is when row opens, "" when it is not frozen.
func (r FleetResults) frozenUntil(row kubeview.AppRow) string {
	return r.Frozen[FrozenKey(row.Cluster, row.Namespace, row.Name)]
}

// ClusterState is a cluster's name and its cache's freshness.
type ClusterState struct {
	Name   string
	Status kubeview.Status
}

// Multi says whether the list spans several clusters.
func (r FleetResults) Multi() bool { return len(r.Clusters) > 1 }

// stale reports whether a cluster's cache has lost its apiserver.
func (r FleetResults) stale(cluster string) bool {
	for _, c := range r.Clusters {
		if c.Name == cluster {
			return !c.Status.Reachable
		}
	}
	return false
}

// ErrorPage is a full-page error (403, 404, 500 ...).
type ErrorPage struct {
	Layout  LayoutProps
	Status  int
	Title   string
	Message string
	// SignedInAs is set on a 403 so the user knows which account was refused.
	SignedInAs string
	// ByRole says a 403 came from the person's roles (an action they may
	// not take), not from the door: the page points to /me.
	ByRole bool
}

// Allowed says which actions the signed-in person may take on what a page
// shows, each the roles decision for that action at that target (handlers'
// allowed), the same one the action's route makes: a button is drawn only
// when its route would accept it. Every button drawn from it carries
// data-action with the action's name (the role walk test finds them so).
type Allowed struct {
	Logs, Plan, Apply, Sync, Rollback bool
	// Freeze is the target's freeze state for the write buttons: while it
	// is frozen they are disabled with the reason, or (break-glass
	// allowed) ask for a reason.
	Freeze BreakGlassProps
}

// healthStatuses and syncStatuses are the orders badges and filters use.
func healthStatuses() []objrules.HealthStatus {
	return []objrules.HealthStatus{objrules.HealthHealthy, objrules.HealthProgressing, objrules.HealthDegraded, objrules.HealthSuspended, objrules.HealthMissing, objrules.HealthUnknown}
}

func syncStatuses() []kubeview.SyncStatus {
	return []kubeview.SyncStatus{kubeview.SyncSynced, kubeview.SyncOutOfSync, kubeview.SyncUnknown}
}

// AppViewProps is the page of one App: header, tree (or list) and, when a
// resource is selected, its panel.
type AppViewProps struct {
	Layout LayoutProps
	Live   AppLive
	Panel  *ResourcePanel
	// History is the App's audit records (nil: not shown).
	History *AuditHistoryProps
	// Notifications is the App's subscriptions (nil: not shown).
	Notifications *NotificationsProps
	// Freeze is the App's freeze banner.
	Freeze FreezeBannerProps
	// Why is "Why isn't it live?" (nil: not shown).
	Why *WhyPanelProps
	// Metrics is the promotion checks' panel's placeholder (nil: the
	// App's environment has no metrics).
	Metrics *AppMetricsProps
}

// AppLive is the self-refreshing part of the app page.
type AppLive struct {
	// Cluster is the App's cluster; Multi says several are configured
	// (the page then names it).
	Cluster         string
	Multi           bool
	Namespace, Name string
	Row             kubeview.AppRow
	HasRow          bool
	Tree            kubeview.Tree
	Graph           TreeLayout
	// View is "tree" or "list".
	View string
	// TimelineURL is the App's Timeline tab ("" when the timeline is off).
	TimelineURL string
	// Selected is the ref of the resource whose panel is open.
	Selected string
	PollURL  string
	Now      time.Time
	Status   kubeview.Status
	// History is the app's deploy history, newest first.
	History []kubeview.Release
	// CanWrite says whether rollback and sync are configured.
	CanWrite bool
	// Allowed is what the signed-in person may do to this App.
	Allowed Allowed
	// CSRF is the session's token for the write forms.
	CSRF string
	// Git is the App's desired state in git, when an environment renders
	// it (nil: its live CR is its only source).
	Git *AppGitProps
}

// ActionView is the inline result of a write (rollback, sync) or the
// confirmation before one.
type ActionView struct {
	AppCluster, AppNamespace, AppName string
	// Kind is "confirm-rollback", "success", "info" or "error".
	Kind     string
	From, To string
	Message  string
	Error    string
	CSRF     string
	// Git, on a success, is the commit (and run) of a write through git.
	Git *GitAction
	// Freeze, on a confirmation, is the App's freeze state (the
	// break-glass field, or the refusal).
	Freeze BreakGlassProps
	// Through, on a confirmation, says how a rollback through git is made
	// ("" for a patch of the live App).
	Through string
	// CatalogMove, on a confirmation of a rollback to a commit tag, is
	// what the commit would move with the App (nil otherwise).
	CatalogMove *CatalogMovePreview
}

// CatalogMovePreview is what a rollback to a commit tag moves with the
// App, as the confirmation shows it before the repository is read: the
// catalog, if it is in commit mode, and the other Apps at the App's commit
// in the environment's last render. The answer lists what moved.
type CatalogMovePreview struct {
	Env, Catalog, Commit string
	// Apps are the other Apps ("namespace/name"), sorted.
	Apps []string
}

// GitAction is a write-back commit and the run that applies it, in an
// action's result.
type GitAction struct {
	Environment string
	// Short and Subject are the commit's short SHA and first message line
	// (no Subject: the branch head, as a sync shows it).
	Short, Subject string
	Branch         string
	// CompareURL is the forge's compare page of a review branch.
	CompareURL string
	// NoChange says the branch already held the version: nothing was
	// committed.
	NoChange bool
	// RunID and RunURL name the run that applies the commit ("" when none
	// started: RunError says why, or the commit is on a review branch).
	RunID, RunURL string
	RunError      string
	// Catalog, CatalogFrom and CatalogTo are a commit-mode catalog's move
	// ("" when the commit moves none); Moved the Apps it moved.
	Catalog, CatalogFrom, CatalogTo string
	Moved                           []MovedApp
}

// MovedApp is an App a catalog move changed: its image before and after.
type MovedApp struct {
	Namespace, Name, From, To string
}

// ResourcePanel is one resource of an app's tree: summary, manifest, diff
// and events, in tabs.
type ResourcePanel struct {
	AppCluster, AppNamespace, AppName string
	Node                              kubeview.TreeNode
	// Tab is "summary", "manifest", "diff" or "events".
	Tab string
	// Owner is the ref of the node's parent.
	Owner string
	// ManifestHTML is the highlighted live manifest (already escaped by the
	// highlighter).
	ManifestHTML  templ.Component
	ManagedFields bool
	DesiredSource string
	// GitOrigin names the environment source of a git desired state.
	GitOrigin string
	Diff      DiffTableProps
	// Drift lists the fields changed outside the App's operator.
	Drift []objrules.DriftField
	// DriftInDiff: the diff shows the drifted fields on the live side
	// (?drift=1, the default when there is drift).
	DriftInDiff bool
	// Events are the object's newest events (kubeview.EventList).
	Events []EventRow
	// EventsTotal counts the object's events read; EventsCapped says
	// Events holds only the newest of them, EventsIncomplete that not
	// every event was read.
	EventsTotal      int
	EventsCapped     bool
	EventsIncomplete bool
	Now              time.Time
	// Operations are the day-2 actions the person may take on the object
	// (roles.Operate there, and the ones that apply to its kind), in
	// order; none draws no action bar.
	Operations []PanelOperation
}

// PanelOperation is one day-2 action button of the resource panel: Op
// ("restart", "scale", ...), its label, and ConfirmURL, the confirmation
// it opens in #panel-operation.
type PanelOperation struct {
	Op, Label, ConfirmURL string
}

// OperationProps is the resource panel's day-2 action area
// (#panel-operation): Kind "confirm" asks before the action, "success",
// "info" and "error" are its result line.
type OperationProps struct {
	AppCluster, AppNamespace, AppName string
	Ref                               string
	// Op is the action ("restart", "scale", ...), Label its button's text.
	Op, Label string
	// Object names the object ("Deployment web").
	Object string
	Kind   string
	// Replicas is the current replica count, the scale form's default.
	Replicas int
	// Detail says what the action does, on a confirmation.
	Detail  string
	Message string
	Error   string
	CSRF    string
	// Freeze is the App's freeze state (the break-glass field, or the
	// refusal).
	Freeze BreakGlassProps
}

// DiffTableProps is a diff ready to draw, in the one direction of every diff
// (diffrender's): the live object on the left ("before"), the desired state
// on the right ("after"); an "insert" row is a line only the desired state
// has, a "delete" row one only the live object has.
type DiffTableProps struct {
	NoDesired bool
	Equal     bool
	// Added and Removed count the lines only on the right and only on the
	// left.
	Added   int
	Removed int
	// Before and After label the left and right columns ("Live",
	// "Desired").
	Before, After string
	// Mode is "split" (side by side) or "unified"; Compact shows 3 lines of
	// context around changes.
	Mode    string
	Compact bool
	Hunks   []DiffHunk
}

// DiffHunk is a run of rows; Skipped counts the equal lines hidden before it.
type DiffHunk struct {
	Skipped int
	Rows    []DiffRow
}

// DiffRow is one side-by-side row (or one unified line: only Left or Right
// is set).
type DiffRow struct {
	Op          string // "equal", "insert", "delete", "change"
	LeftNum     int
	LeftText    string
	RightNum    int
	RightText   string
	UnifiedSign string
}

// EventRow is one Kubernetes event of a resource.
type EventRow struct {
	Type, Reason, Message string
	Count                 int32
	Last                  time.Time
}

// MePage is /me.
type MePage struct {
	Layout LayoutProps
	Me     Me
}

// Me is the signed-in person as the roles see them; it is also the JSON of
// GET /v1/deploy/me.
type Me struct {
	Subject       string     `json:"subject"`
	Email         string     `json:"email,omitempty"`
	EmailVerified bool       `json:"emailVerified"`
	Groups        []string   `json:"groups"`
	Roles         []MeRole   `json:"roles"`
	Actions       []MeAction `json:"actions"`
}

// MeRole is one role the person holds (roles.Grant).
type MeRole struct {
	Role string `json:"role"`
	// Where is the scope in words ("everywhere" when unscoped).
	Where  string `json:"where"`
	Logs   bool   `json:"logs"`
	Source string `json:"source"`
	Via    string `json:"via,omitempty"`
}

// MeAction is what the person's roles mean for one action.
type MeAction struct {
	Action string `json:"action"`
	// Allowed: somewhere at least; Everywhere: at every target.
	Allowed    bool `json:"allowed"`
	Everywhere bool `json:"everywhere"`
	// Because is the decision's reason (the role and binding that allow
	// it, or what it needs).
	Because string `json:"because"`
}
