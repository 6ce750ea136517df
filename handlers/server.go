// Package handlers is deploy-web's HTTP layer: one route table (routes.go),
// one file per action, the JSON API under /v1/deploy, the HTML pages and the
// HTMX fragments they refresh with. Handlers parse the request, authorize it
// (the route table's role), call one service and render: kubeview for
// reads, the release seam for an App CR's rollback and sync, envrun for the
// environment pages' plans and applies, and gitops for every workflow that
// writes through git (rollback and sync of an App an environment renders,
// promotion, catalog moves) or pauses auto-sync. A workflow's *gitops.Error
// becomes an answer in one place (workflowError); handlers return errors
// that one adapter turns into a clean JSON or HTML answer.
package handlers

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/gitops"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/release"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/search"
	"github.com/hanzoai/deploy-web/web/markdown"
	"github.com/hanzoai/deploy-web/why"
)

// Fleet is what the handlers read from one cluster's caches (implemented
// by kubeview.Cache). Every method takes the namespace before the name.
type Fleet interface {
	Applications(kubeview.Query) (kubeview.Page, error)
	Status() kubeview.Status
	Synced() bool
	Namespaces() []string
	Row(namespace, name string) (kubeview.AppRow, bool)
	LookupApp(namespace, name string) (*unstructured.Unstructured, error)
	Tree(namespace, name string) (kubeview.Tree, error)
	Object(ctx context.Context, namespace, app string, ref kubeview.Ref) (*unstructured.Unstructured, kubeview.TreeNode, error)
	Events(ctx context.Context, namespace, uid string) (kubeview.EventList, error)
	FetchLive(ctx context.Context, namespace, app string, ref kubeview.Ref) (*unstructured.Unstructured, error)
	History(namespace, name string) ([]kubeview.Release, error)
	DriftOf(uid string) []objrules.DriftField
	// SearchApps yields each App that may match q with its tree's
	// objects (the search's source, fleet_search.go).
	SearchApps(q *search.Query, yield func(search.App) bool)
}

// Releaser is the write seam: rollback and sync (implemented by package
// release).
type Releaser interface {
	Rollback(ctx context.Context, namespace, name, version, user string) (release.Result, error)
	Sync(ctx context.Context, namespace, name, user string) (release.SyncResult, error)
}

// Operator is the write seam's day-2 operations on the objects of an App's
// tree: restart, scale, suspend, resume, delete a pod (implemented by
// package release).
type Operator interface {
	Operate(ctx context.Context, o release.Operation, user string) (release.OperationResult, error)
}

// Authenticator is the auth boundary: the fail-closed middleware and the
// login routes (implemented by package auth).
type Authenticator interface {
	Require(http.Handler) http.Handler
	HandleLogin(http.ResponseWriter, *http.Request)
	HandleCallback(http.ResponseWriter, *http.Request)
	HandleLogout(http.ResponseWriter, *http.Request)
}

// Cluster is one cluster the console reads and writes: its caches, its
// write seam and its logs.
type Cluster struct {
	// Name names the cluster in URLs, rows, filters and the audit trail
	// (a DNS label, unique).
	Name string
	View Fleet
	// Release performs rollbacks and syncs in this cluster only (nil: the
	// write routes answer 503).
	Release Releaser
	// Operations performs the day-2 actions in this cluster only, through
	// the same write seam (nil: the action routes answer 503).
	Operations Operator
	// Logs reads this cluster's pod logs (nil: logs are not configured).
	Logs LogSource
	// AppGroup and AppKind name this cluster's App resource (default
	// Options.AppGroup and AppKind): the App node's panel accepts its refs.
	AppGroup, AppKind string
}

// Options tune the server.
type Options struct {
	// Clusters are every cluster the console spans (one or more; the
	// command line makes them from --clusters or the one it runs in).
	Clusters []Cluster
	// EnvClusters maps an environment of the plan engine to the name of
	// the configured cluster it deploys to, when it is one (the
	// environments page shows it).
	EnvClusters map[string]string
	// PerPage is the application list's page size (default 100).
	PerPage int
	// Now returns the current time (tests pin it).
	Now func() time.Time
	// AppGroup and AppKind name the App resource (default hanzo.ai, App).
	AppGroup, AppKind string
	// LogStreams bounds the live log streams.
	LogStreams LogStreamLimits
	// ShutdownCtx ends the live streams when it is done (graceful
	// shutdown), telling their clients to reconnect.
	ShutdownCtx context.Context
	// Metrics records request durations per route pattern and open event
	// streams (nil: nothing is measured).
	Metrics Metrics
	// Environments runs plans and applies from the console (nil: the
	// environment pages say none are configured).
	Environments EnvRunner
	// Desired finds an object's manifest in an environment's source, the
	// git desired state of the resource panel (nil: last-applied only).
	// An App it finds is rolled back through git (writeBack), never by a
	// patch of the live App.
	Desired DesiredSource
	// GitCommit writes a rollback or a promotion to an environment's
	// repository (default writeback.Commit).
	GitCommit gitops.Committer
	// RecordReader reads the audit records the environment diffs compare
	// (nil: only live and refs can be compared).
	RecordReader RecordReader
	// EnvClusterConfig reaches an environment's cluster for the live side
	// of a diff (nil: the environment's own kubeconfig context).
	EnvClusterConfig func(env *envconfig.Environment) (*rest.Config, error)
	// Audit keeps the audit trail: every rollback and sync (refused ones
	// included) writes a record, and /audit and the history sections read
	// it (nil: nothing is recorded, the pages say so).
	Audit AuditLog
	// Refusals, when set, answers a write 429 with Retry-After while the
	// person has had too many writes refused lately (audit.Limiter, fed
	// by the audit store).
	Refusals Refusals
	// Roles decides who may do what where (nil: superadmins only, as
	// roles.Default): every protected route's action, every button.
	Roles *roles.Policy
	// AutoSync is the auto-sync loop's state and pauses (nil: no
	// environment has autoSync on).
	AutoSync AutoSyncState
	// Notify keeps the notification subscriptions and sends their test
	// messages (nil: the pages say notifications are not configured).
	Notify Notifications
	// Promotions keeps the two-person rule's promotion requests (nil: a
	// promotion into a protected environment is refused).
	Promotions gitops.PromotionStore
	// Checks evaluates promotion checks (nil: promcheck's, on the real
	// clock).
	Checks gitops.MetricChecks
	// Timeline is what happened to each App (nil: the timeline pages
	// and API say it is off).
	Timeline Timeline
	// Freezes refuses writes to frozen targets and shows the freezes
	// (freeze.Gate; nil: no freezes, the /freezes page says so).
	Freezes Freezes
}

// DesiredSource looks objects up in the environments' rendered manifests
// (implemented by envsource).
type DesiredSource interface {
	Lookup(group, kind, namespace, name string) (envsource.Desired, bool)
}

// Site renders pages and errors with the site's assets. It is also the
// auth.Denier, so denials look like the rest of the site; build it first and
// hand it to auth.New and to New.
type Site struct {
	log    *slog.Logger
	assets *assets
}

// NewSite prepares the embedded assets.
func NewSite(log *slog.Logger) (*Site, error) {
	a, err := newAssets()
	if err != nil {
		return nil, err
	}
	return &Site{log: log, assets: a}, nil
}

// Server holds the handlers' dependencies.
type Server struct {
	*Site
	// clusters are sorted by name; byName finds one.
	clusters []*Cluster
	byName   map[string]*Cluster
	auth     Authenticator
	opts     Options
	routes   []route
	m        *http.ServeMux
	// logStreams counts the live log streams, logReads the non-follow log
	// reads, eventReads the events tab's reads, runStreams the plan-run
	// streams.
	logStreams, logReads, eventReads, runStreams *userLimiter
	// diffs counts the environment diffs in progress (each may fetch a
	// repository and read every object of the environment).
	diffs *userLimiter
	// timelineStreams counts the Timeline tabs' live streams.
	timelineStreams *userLimiter
	// readyMu guards lastReady, the readiness detail last logged.
	readyMu   sync.Mutex
	lastReady string
	// markdown renders Markdown others wrote (release notes) safely.
	markdown *markdown.Renderer
	// ops runs the workflows that write: rollback and sync through git,
	// promotion, catalog moves, pauses.
	ops *gitops.Service
	// why answers "why isn't this App live?" (app_why.go).
	why *why.Service
}

// New wires the handlers for the clusters of opts.Clusters. Cluster names
// must be unique (fleetset validates them).
func New(site *Site, auth Authenticator, opts Options) *Server {
	if opts.PerPage <= 0 {
		opts.PerPage = 100
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.AppKind == "" {
		opts.AppGroup, opts.AppKind = appcr.GroupVersion.Group, appcr.Kind.Kind
	}
	l := opts.LogStreams.withDefaults()
	opts.LogStreams = l
	logStreams := newUserLimiter("log streams", l.PerUser, l.Total)
	logStreams.full = "the server is already streaming %d logs, its limit: try again in a minute"
	logStreams.busy = "you already have %d log streams open, the limit per user: close one (another tab or window) and reload"
	clusters := slices.Clone(opts.Clusters)
	s := &Server{Site: site, auth: auth, opts: opts, logStreams: logStreams, byName: map[string]*Cluster{}, markdown: markdown.New(),
		logReads:        newUserLimiter("log reads", l.ReadsPerUser, l.ReadsTotal),
		eventReads:      newUserLimiter("event reads", l.ReadsPerUser, l.ReadsTotal),
		runStreams:      newUserLimiter("plan-run streams", l.RunStreamsPerUser, l.RunStreamsTotal),
		diffs:           newUserLimiter("diffs", diffsPerUser, diffsTotal),
		timelineStreams: newUserLimiter("live timelines", timelineStreamsPerUser, timelineStreamsTotal)}
	for i := range clusters {
		c := &clusters[i]
		if c.AppKind == "" {
			c.AppGroup, c.AppKind = opts.AppGroup, opts.AppKind
		}
		s.withFreezes(c)
		withAuditTrail(c, opts.Audit)
		s.withOperationGuards(c)
		s.clusters = append(s.clusters, c)
		s.byName[c.Name] = c
	}
	slices.SortFunc(s.clusters, func(a, b *Cluster) int { return cmp.Compare(a.Name, b.Name) })
	s.ops = s.newWorkflows()
	s.why = s.newWhy()
	return s
}

// newWorkflows is the workflow service over s's options.
func (s *Server) newWorkflows() *gitops.Service {
	o := s.opts
	return gitops.New(gitops.Options{Commit: o.GitCommit, Runs: o.Environments, Freezes: o.Freezes, Promotions: o.Promotions,
		View: promotionView{s}, Audit: o.Audit, Records: o.RecordReader, AutoSync: o.AutoSync, Checks: o.Checks, Now: o.Now})
}

// cluster finds a configured cluster by name (nil for an unknown one).
func (s *Server) cluster(name string) *Cluster { return s.byName[name] }

// multiCluster says whether several clusters are configured (the pages
// then show which cluster each row is in).
func (s *Server) multiCluster() bool { return len(s.clusters) > 1 }

// Handler returns the whole site: the route table behind the common
// middleware (request id and logging, security headers, the body cap).
func (s *Server) Handler() http.Handler {
	return s.withRequestLog(securityHeaders(s.assets.csp, s.limitBody(MaxRequestBody, s.mux())))
}

type ctxKey int

const requestIDKey ctxKey = 0

// requestID returns the request's id (set by withRequestLog).
func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}
