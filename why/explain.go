package why

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/promotion"
	"github.com/hanzoai/deploy-web/web/paths"
)

// Freezes are the deploy freezes as pages read them (implemented by
// freeze.Gate: a snapshot at most freeze.SnapshotTTL old).
type Freezes interface {
	Snapshot(ctx context.Context) (freeze.List, time.Time, error)
}

// AutoSync is the auto-sync loop's state of an environment, its pause
// read from the pauses store (ok is false when env has no auto-sync).
type AutoSync interface {
	Status(ctx context.Context, env string) (st autosync.Status, ok bool, err error)
}

// Promotions are the two-person rule's promotion requests of a target
// environment, newest first (implemented by *promotion.Store).
type Promotions interface {
	List(ctx context.Context, target string) ([]promotion.Request, error)
}

// Runs are an environment's plans and applies, newest first, and one
// run's stored files (implemented by *planstore.Store).
type Runs interface {
	List(ctx context.Context, env string) ([]planstore.Entry, error)
	Get(ctx context.Context, id string) (planstore.Entry, map[string][]byte, error)
}

// Applied is what is live in an environment: its newest apply that
// applied (nil when none).
type Applied interface {
	LastApplied(ctx context.Context, env string) (*planstore.Entry, error)
}

// Locks read the apply lock of an environment (deployplan.LockStatus in
// the environment's cluster): nil when nobody holds it.
type Locks interface {
	Held(ctx context.Context, env string) (*deployplan.LockHeldError, error)
}

// Cluster is what is read of the App's cluster beyond its row and tree
// (implemented by kubeview.Cache).
type Cluster interface {
	Events(ctx context.Context, namespace, uid string) (kubeview.EventList, error)
	DriftOf(uid string) []objrules.DriftField
	// Row is an App's row (ok false: no such App): the health of the
	// Apps an App depends on.
	Row(namespace, name string) (kubeview.AppRow, bool)
}

// Checks are the promotion checks of a version of App app waiting in
// env's source to be promoted into env (implemented over
// gitops.Service.PendingChecks, the gate's own evaluation): nil when
// none waits or env has no checks.
type Checks interface {
	Pending(ctx context.Context, env, app string) (*CheckGate, error)
}

// CheckGate is the checks gate of a waiting version: Version runs in
// Source, and Gate is the gate as a promotion would decide it now.
type CheckGate struct {
	Source, Version string
	Gate            promotion.Gate
}

// Options are the sources; each may be nil, and its reasons are then
// never given.
type Options struct {
	Freezes    Freezes
	AutoSync   AutoSync
	Promotions Promotions
	Runs       Runs
	Applied    Applied
	Locks      Locks
	Soaks      Soaks
	// Checks are asked in detail only (a query to Prometheus per check,
	// cached per minute): not for an environment's list.
	Checks Checks
}

// Service answers "why" for Apps.
type Service struct {
	o Options
}

// New returns a Service over the sources of o.
func New(o Options) *Service { return &Service{o: o} }

// WithoutChecks is s without its Checks source: a page's first paint,
// which must not wait for Prometheus (the panel's refresh asks).
func (s *Service) WithoutChecks() *Service {
	o := s.o
	o.Checks = nil
	return New(o)
}

// HasChecks reports whether s asks the promotion checks.
func (s *Service) HasChecks() bool { return s.o.Checks != nil }

// App is the App asked about, as the caller resolved it.
type App struct {
	Cluster, Namespace, Name string
	// Row and Tree are the App from the cluster's caches (HasRow false
	// when the cache has no row for it yet).
	Row    kubeview.AppRow
	HasRow bool
	Tree   kubeview.Tree
	// FreezeTarget is where the freezes see a write to the App.
	FreezeTarget freeze.Target
	// Env is the environment the App belongs to ("" when none or
	// several): its auto-sync, promotions, plans and lock.
	Env string
	// Git is the App's desired state in git, when Env renders it (nil:
	// the App CR is its own desired state).
	Git *Git
}

// Git is an App's desired state in git.
type Git struct {
	// Commit is the commit rendered; Version the App's version in it.
	Commit, Version string
	// DependsOn are the Apps the App's object depends on
	// (deployplan.DependsOn of it).
	DependsOn []string
}

// Detail says how much an answer reads: the app page and the API read
// the latest event of the first unhealthy resource and the fields of the
// drifted ones; an environment's list of Apps does not.
type Detail bool

// Explain answers for app. A source that cannot be read is named in
// Answer.Errors and its reasons are left out (a freeze store that cannot
// be read is itself a reason: every write is refused until it can).
func (s *Service) Explain(ctx context.Context, app App, c Cluster, detail Detail) Answer {
	ans := Answer{App: app.Namespace + "/" + app.Name, Live: live(app.Row), Reasons: []Reason{}}
	ans.Desired = app.Row.Version
	if app.Git != nil {
		ans.Desired = app.Git.Version
	}
	var rs []Reason
	fail := func(what string) { ans.Errors = append(ans.Errors, what+" could not be read") }

	rs = append(rs, s.freezeReasons(ctx, app, fail)...)
	rs = append(rs, s.pauseReasons(ctx, app, fail)...)
	rs = append(rs, s.promotionReasons(ctx, app, fail)...)
	rs = append(rs, s.soakReasons(ctx, app, fail)...)
	if detail {
		rs = append(rs, s.checkReasons(ctx, app, fail)...)
	}
	notApplied := s.notAppliedReasons(ctx, app, fail)
	rs = append(rs, notApplied...)
	if app.Git != nil && len(notApplied) > 0 {
		// The plan and the lock stand between git and the cluster only
		// while git's commit is not live.
		rs = append(rs, s.blockedReasons(ctx, app, fail)...)
		rs = append(rs, s.lockReasons(ctx, app, fail)...)
	}
	rs = append(rs, waitingReasons(app, c)...)
	rs = append(rs, healthReasons(ctx, app, c, detail)...)
	rs = append(rs, driftReasons(app, c, detail)...)
	ans.Reasons = order(rs)
	return ans
}

// Cached reports whether app has a reason among those its cached row
// decides alone (the fleet's filter, cheap for 10,000 Apps): health,
// drift and the App CR's sync verdict (not-applied). The gates (freeze,
// pause, blocked plan, lock) are named only beside one of these, so they
// change nothing here; git's not-applied (the environment's live commit)
// and pending promotions need a store read and are left out.
func Cached(app App) bool {
	var rs []Reason
	rs = append(rs, declaredReasons(app)...)
	rs = append(rs, healthReasons(context.Background(), app, nil, false)...)
	rs = append(rs, driftReasons(app, nil, false)...)
	return len(order(rs)) > 0
}

// live is what runs of an App: its running versions, oldest first.
func live(row kubeview.AppRow) string {
	vs := make([]string, 0, len(row.Running))
	for _, v := range row.Running {
		vs = append(vs, v.Version)
	}
	return strings.Join(vs, ", ")
}

// freezeReasons: the freeze that refuses a write to the App now
// (freeze.List.Check, the decision every write takes).
func (s *Service) freezeReasons(ctx context.Context, app App, fail func(string)) []Reason {
	if s.o.Freezes == nil {
		return nil
	}
	l, now, err := s.o.Freezes.Snapshot(ctx)
	if err != nil {
		fail("the deploy freezes")
		return []Reason{{Kind: Freeze, Message: "the deploy freezes could not be read, so writes are refused until they can", Link: paths.Freezes()}}
	}
	fe, ok := l.Check(now, freeze.Apply, app.FreezeTarget).(*freeze.FrozenError)
	if !ok {
		return nil
	}
	r := Reason{Kind: Freeze, Message: fe.Message() + "; a superadmin may break the glass on the write's confirmation",
		Until: at(fe.OpensAt), By: fe.Freeze.Author.String(), Link: breakGlassLink(app)}
	if w, ok := fe.Freeze.WindowAt(now); ok {
		r.Since = at(w.Start)
	}
	return []Reason{r}
}

// breakGlassLink is where a superadmin breaks the glass for the App: the
// environment's apply for an App git renders, the rollback confirmation
// of the App CR otherwise.
func breakGlassLink(app App) string {
	if app.Git != nil && app.Env != "" {
		return paths.Env(app.Env)
	}
	return paths.AppRollback(app.Cluster, app.Namespace, app.Name)
}

// pauseReasons: the paused auto-sync of the App's environment (the
// loop's Status, which reads the pauses store).
func (s *Service) pauseReasons(ctx context.Context, app App, fail func(string)) []Reason {
	if s.o.AutoSync == nil || app.Env == "" {
		return nil
	}
	st, ok, err := s.o.AutoSync.Status(ctx, app.Env)
	if err != nil {
		fail("the auto-sync pauses")
	}
	if !ok || !st.Paused {
		return nil
	}
	return []Reason{{Kind: Paused, Message: fmt.Sprintf("the auto-sync of %s is paused until %s by %s: %s", app.Env,
		st.PausedUntil.UTC().Format(time.RFC3339), textfmt.OrDash(st.PausedBy), textfmt.OrDash(st.PauseReason)),
		Until: at(st.PausedUntil), By: st.PausedBy, Link: paths.Env(app.Env)}}
}

// promotionReasons: the pending promotion requests of the App into its
// environment (the store's List, which expires the old ones).
func (s *Service) promotionReasons(ctx context.Context, app App, fail func(string)) []Reason {
	if s.o.Promotions == nil || app.Env == "" {
		return nil
	}
	reqs, err := s.o.Promotions.List(ctx, app.Env)
	if err != nil {
		fail("the promotion requests")
		return nil
	}
	var out []Reason
	for _, r := range reqs {
		if r.State != promotion.StatePending {
			continue
		}
		for _, v := range r.Apps {
			if v.App != app.Name {
				continue
			}
			msg := fmt.Sprintf("promotion %s of %s from %s to %s waits for a second person's approval", r.ID, textfmt.OrDash(v.Version), r.Source, r.Target)
			if r.Reason != "" {
				msg += ": " + r.Reason
			}
			out = append(out, Reason{Kind: Promotion, Message: msg, Since: at(r.Created), Until: at(r.Created.Add(promotion.PendingTTL)),
				By: r.Requester.String(), Link: paths.EnvPromote(r.Target, r.Source, app.Name)})
		}
	}
	return out
}

// checkReasons: a version waiting in the environment the App's is
// promoted from, which its promotion checks refuse (the checks gate's
// decision and words: the failing check, its value, the threshold and
// the query as run; an unreachable Prometheus refuses too).
func (s *Service) checkReasons(ctx context.Context, app App, fail func(string)) []Reason {
	if s.o.Checks == nil || app.Env == "" {
		return nil
	}
	g, err := s.o.Checks.Pending(ctx, app.Env, app.Name)
	if err != nil {
		fail("the promotion checks")
		return nil
	}
	if g == nil || g.Gate.State != promotion.Failed {
		return nil
	}
	return []Reason{{Kind: Promotion, Message: fmt.Sprintf("%s of %s is not promoted to %s: its promotion checks refuse it: %s",
		textfmt.OrDash(g.Version), g.Source, app.Env, g.Gate.Message), Link: paths.EnvPromote(app.Env, g.Source, app.Name)}}
}

// notAppliedReasons: for an App git renders, git's commit against the
// environment's newest apply that applied; for an App CR, kubeview's sync
// verdict (the declared version against what runs).
func (s *Service) notAppliedReasons(ctx context.Context, app App, fail func(string)) []Reason {
	if app.Git == nil || app.Git.Commit == "" || s.o.Applied == nil {
		return declaredReasons(app)
	}
	e, err := s.o.Applied.LastApplied(ctx, app.Env)
	if err != nil {
		fail("the commit live in " + app.Env)
		return nil
	}
	if e != nil && e.Commit == app.Git.Commit {
		return nil
	}
	msg := fmt.Sprintf("commit %s of %s is not applied", textfmt.ShortSHA(app.Git.Commit), app.Env)
	r := Reason{Kind: NotApplied, Link: paths.Env(app.Env)}
	if e != nil {
		msg += fmt.Sprintf(": %s runs %s, applied by %s", app.Env, textfmt.OrDash(textfmt.ShortSHA(e.Commit)), textfmt.OrDash(e.User))
		r.Since = at(e.Time)
	} else {
		msg += ": nothing was applied to " + app.Env + " yet"
	}
	if last := s.lastAttempt(ctx, app.Env, e); last != nil {
		msg += fmt.Sprintf("; the last %s %s: %s", last.Action, textfmt.OrDash(last.Conclusion), textfmt.OrDash(firstLine(last.Summary)))
		r.By, r.Link = last.User, paths.EnvReport(app.Env, last.ID)
	}
	r.Message = msg
	return []Reason{r}
}

// declaredReasons: the App CR's declared version against what runs
// (kubeview's sync verdict).
func declaredReasons(app App) []Reason {
	if !app.HasRow || app.Row.Sync.Status != kubeview.SyncOutOfSync {
		return nil
	}
	msg := fmt.Sprintf("%s is declared but %s runs", textfmt.OrDash(app.Row.Version), textfmt.OrDash(live(app.Row)))
	if app.Row.Sync.Message != "" {
		msg += ": " + app.Row.Sync.Message
	}
	return []Reason{{Kind: NotApplied, Message: msg, Link: paths.App(app.Cluster, app.Namespace, app.Name)}}
}

// lastAttempt is env's newest run since live (every run when nil): its
// newest apply, else its newest plan; nil when there is none.
func (s *Service) lastAttempt(ctx context.Context, env string, live *planstore.Entry) *planstore.Entry {
	if s.o.Runs == nil {
		return nil
	}
	entries, err := s.o.Runs.List(ctx, env)
	if err != nil {
		return nil
	}
	var plan *planstore.Entry
	for i := range entries {
		e := &entries[i]
		if live != nil && (e.ID == live.ID || !e.Time.After(live.Time)) {
			continue
		}
		if e.Action == "apply" {
			return e
		}
		if plan == nil {
			plan = e
		}
	}
	return plan
}

// firstLine is the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// lastRun is env's newest plan or apply (nil: none, or unreadable).
func (s *Service) lastRun(ctx context.Context, env string) *planstore.Entry {
	if s.o.Runs == nil {
		return nil
	}
	entries, err := s.o.Runs.List(ctx, env)
	if err != nil || len(entries) == 0 {
		return nil
	}
	return &entries[0]
}

// blockedReasons: the blockers of the environment's newest run when the
// plan engine concluded it blocked, each with its fix (the report's
// remaining blockers, as the engine wrote them).
func (s *Service) blockedReasons(ctx context.Context, app App, fail func(string)) []Reason {
	last := s.lastRun(ctx, app.Env)
	if last == nil || last.Conclusion != deployplan.StatusBlocked {
		return nil
	}
	_, files, err := s.o.Runs.Get(ctx, last.ID)
	var rep deployplan.Report
	if err == nil && files["report.json"] != nil {
		err = json.Unmarshal(files["report.json"], &rep)
	}
	link := paths.EnvReport(app.Env, last.ID)
	if err != nil || len(rep.DeployApply.RemainingBlockers) == 0 {
		if err != nil {
			fail("the report of run " + last.ID)
		}
		return []Reason{{Kind: Blocked, Message: fmt.Sprintf("the last %s of %s is blocked: %s", last.Action, app.Env, textfmt.OrDash(firstLine(last.Summary))),
			Since: at(last.Time), By: last.User, Link: link}}
	}
	var out []Reason
	for _, b := range rep.DeployApply.RemainingBlockers {
		msg := fmt.Sprintf("the last %s of %s is blocked by %s: %s", last.Action, app.Env, b.ID, b.Message)
		if b.UnblockHint != "" {
			msg += "; fix: " + b.UnblockHint
		}
		out = append(out, Reason{Kind: Blocked, Message: msg, Since: at(last.Time), By: last.User, Link: link})
	}
	return out
}

// lockReasons: an apply that holds the environment's lock.
func (s *Service) lockReasons(ctx context.Context, app App, fail func(string)) []Reason {
	if s.o.Locks == nil {
		return nil
	}
	h, err := s.o.Locks.Held(ctx, app.Env)
	if err != nil {
		fail("the apply lock of " + app.Env)
		return nil
	}
	if h == nil {
		return nil
	}
	return []Reason{{Kind: Locked, Message: fmt.Sprintf("an apply holds the lock of %s (Lease %s/%s): holder %s; it expires at %s unless renewed",
		app.Env, h.Namespace, deployplan.LockName, h.Holder, h.Expires.UTC().Format(time.RFC3339)),
		Since: at(h.Since), Until: at(h.Expires), By: h.Holder, Link: paths.Env(app.Env)}}
}

// healthReasons: the first resource that makes the App's health what it
// is (kubeview's culprits), its message and, in detail, its latest event.
func healthReasons(ctx context.Context, app App, c Cluster, detail Detail) []Reason {
	if !app.HasRow || app.Row.Health.Status == objrules.HealthHealthy || app.Row.Health.Status == "" {
		return nil
	}
	st := app.Row.Health.Status
	nodes, more := app.Tree.Culprits(st, 1)
	if len(nodes) == 0 {
		return []Reason{{Kind: Health, Message: fmt.Sprintf("%s is %s: %s", app.Name, st, textfmt.OrDash(app.Row.Health.Message)),
			Link: paths.App(app.Cluster, app.Namespace, app.Name)}}
	}
	n := nodes[0]
	msg := fmt.Sprintf("%s %s is %s", n.Kind, n.Name, st)
	if n.Health.Message != "" {
		msg += ": " + n.Health.Message
	}
	if more > 0 {
		msg += fmt.Sprintf(" (and %d more)", more)
	}
	r := Reason{Kind: Health, Link: paths.AppResource(app.Cluster, app.Namespace, app.Name, n.Ref)}
	if detail && c != nil && n.UID != "" {
		if ev, err := c.Events(ctx, n.Namespace, n.UID); err == nil && len(ev.Items) > 0 {
			e := ev.Items[0]
			msg += fmt.Sprintf("; latest event: %s %s: %s", e.Type, e.Reason, e.Message)
			r.Since = at(e.Last)
		}
	}
	r.Message = msg
	return []Reason{r}
}

// maxDriftFields bounds the fields a drift reason names.
const maxDriftFields = 3

// driftReasons: the first object with fields changed outside the App's
// operator (kubeview's drift), in detail with the fields and who changed
// them.
func driftReasons(app App, c Cluster, detail Detail) []Reason {
	if !app.HasRow || app.Row.Drift == 0 {
		return nil
	}
	var first *kubeview.TreeNode
	for i := range app.Tree.Nodes {
		if app.Tree.Nodes[i].Drift > 0 {
			first = &app.Tree.Nodes[i]
			break
		}
	}
	if first == nil {
		return []Reason{{Kind: Drift, Message: fmt.Sprintf("%d object(s) of %s have fields changed outside its operator", app.Row.Drift, app.Name),
			Link: paths.App(app.Cluster, app.Namespace, app.Name)}}
	}
	msg := fmt.Sprintf("%s %s has %d field(s) changed outside its operator", first.Kind, first.Name, first.Drift)
	if app.Row.Drift > 1 {
		msg += fmt.Sprintf(" (%d objects drifted)", app.Row.Drift)
	}
	r := Reason{Kind: Drift, Link: paths.AppResource(app.Cluster, app.Namespace, app.Name, first.Ref)}
	if detail && c != nil && first.UID != "" {
		var fields, by []string
		for _, f := range c.DriftOf(first.UID) {
			if len(fields) < maxDriftFields {
				fields = append(fields, f.Path)
			}
			if !slices.Contains(by, f.Manager) {
				by = append(by, f.Manager)
			}
			if f.Time != nil && (r.Since == nil || f.Time.After(*r.Since)) {
				r.Since = at(*f.Time)
			}
		}
		if len(fields) > 0 {
			msg += ": " + strings.Join(fields, ", ")
		}
		r.By = strings.Join(by, ", ")
		if r.By != "" {
			msg += " (by " + r.By + ")"
		}
	}
	r.Message = msg
	return []Reason{r}
}
