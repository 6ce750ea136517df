package why

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/promotion"
)

var now = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)

type fakeFreezes struct {
	list freeze.List
	err  error
}

func (f fakeFreezes) Snapshot(context.Context) (freeze.List, time.Time, error) {
	return f.list, now, f.err
}

type fakeAutoSync struct {
	st  autosync.Status
	ok  bool
	err error
}

func (f fakeAutoSync) Status(_ context.Context, env string) (autosync.Status, bool, error) {
	if env != "staging" {
		return autosync.Status{}, false, nil
	}
	return f.st, f.ok, f.err
}

type fakePromotions []promotion.Request

func (f fakePromotions) List(_ context.Context, target string) ([]promotion.Request, error) {
	var out []promotion.Request
	for _, r := range f {
		if r.Target == target {
			out = append(out, r)
		}
	}
	return out, nil
}

type fakeRuns struct {
	entries []planstore.Entry
	files   map[string]map[string][]byte
}

func (f fakeRuns) List(_ context.Context, env string) ([]planstore.Entry, error) {
	return f.entries, nil
}

func (f fakeRuns) Get(_ context.Context, id string) (planstore.Entry, map[string][]byte, error) {
	for _, e := range f.entries {
		if e.ID == id {
			return e, f.files[id], nil
		}
	}
	return planstore.Entry{}, nil, planstore.ErrNotFound
}

type fakeApplied struct{ e *planstore.Entry }

func (f fakeApplied) LastApplied(context.Context, string) (*planstore.Entry, error) { return f.e, nil }

type fakeLocks struct{ h *deployplan.LockHeldError }

func (f fakeLocks) Held(context.Context, string) (*deployplan.LockHeldError, error) { return f.h, nil }

type fakeCluster struct {
	events map[string]kubeview.EventList
	drift  map[string][]objrules.DriftField
	rows   map[string]kubeview.AppRow // by "namespace/name"
}

func (f fakeCluster) Row(namespace, name string) (kubeview.AppRow, bool) {
	r, ok := f.rows[namespace+"/"+name]
	return r, ok
}

func (f fakeCluster) Events(_ context.Context, _, uid string) (kubeview.EventList, error) {
	return f.events[uid], nil
}

func (f fakeCluster) DriftOf(uid string) []objrules.DriftField { return f.drift[uid] }

// app is a live, healthy App "web" of shop, rendered by staging from git
// at commit c1 (live).
func app() App {
	return App{Cluster: "eu", Namespace: "shop", Name: "web",
		Row: kubeview.AppRow{Name: "web", Namespace: "shop", Version: "1.2.0", Health: objrules.Health{Status: objrules.HealthHealthy},
			Sync: kubeview.Sync{Status: kubeview.SyncSynced}, Running: []kubeview.VersionCount{{Version: "1.2.0", Ready: 1}}},
		HasRow: true,
		Tree: kubeview.Tree{Nodes: []kubeview.TreeNode{
			{Ref: "hanzo.ai:App:shop:web", Kind: "App", Namespace: "shop", Name: "web", UID: "u-app", Depth: 0, Health: &objrules.Health{Status: objrules.HealthHealthy}},
			{Ref: "apps:Deployment:shop:web", Kind: "Deployment", Namespace: "shop", Name: "web", UID: "u-dep", Depth: 1, Health: &objrules.Health{Status: objrules.HealthHealthy}},
			{Ref: ":Service:shop:web", Kind: "Service", Namespace: "shop", Name: "web", UID: "u-svc", Depth: 1, Health: &objrules.Health{Status: objrules.HealthHealthy}},
		}},
		FreezeTarget: freeze.Target{Cluster: "eu", Environment: "staging", Namespace: "shop", App: "web"},
		Env:          "staging",
		Git:          &Git{Commit: "c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1", Version: "1.2.0"},
	}
}

func degraded(a App) App {
	a.Row.Health = objrules.Health{Status: objrules.HealthDegraded, Message: "Caused by apps/Deployment:shop/web"}
	a.Tree.Nodes[1].Health = &objrules.Health{Status: objrules.HealthDegraded, Message: "Deployment exceeded its progress deadline"}
	return a
}

func drifted(a App) App {
	a.Row.Drift = 1
	a.Tree.Nodes[1].Drift = 2
	return a
}

func unapplied(a App) App {
	a.Git = &Git{Commit: "c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2", Version: "1.3.0"}
	return a
}

var (
	liveEntry = &planstore.Entry{ID: "run-1", Environment: "staging", Action: "apply", Conclusion: "applied", Commit: "c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1c1", User: "ann@example.com", Time: now.Add(-time.Hour)}
	blocked   = planstore.Entry{ID: "run-2", Environment: "staging", Action: "plan", Conclusion: deployplan.StatusBlocked, Summary: "1 blocker", Commit: "c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2c2", User: "bob@example.com", Time: now.Add(-time.Minute)}
	frozen    = freeze.List{{ID: "fz-1", Scope: scope.Scope{Namespaces: []string{"shop"}}, Start: now.Add(-time.Hour), End: now.Add(2 * time.Hour),
		Reason: "release week", Author: freeze.Author{Email: "sam@example.com"}}}
	pausedSt = autosync.Status{Enabled: true, Paused: true, PausedUntil: now.Add(8 * time.Hour), PauseReason: "incident 42", PausedBy: "pat@example.com"}
	pending  = fakePromotions{{ID: "pr-1", Target: "staging", Source: "dev", Apps: []promotion.AppVersion{{App: "web", Version: "1.3.0"}},
		Requester: audit.Actor{Email: "rae@example.com"}, Created: now.Add(-10 * time.Minute), State: promotion.StatePending},
		{ID: "pr-0", Target: "staging", Source: "dev", Apps: []promotion.AppVersion{{App: "web", Version: "1.1.0"}}, State: promotion.StateApproved}}
	lock = &deployplan.LockHeldError{Namespace: "shop", Holder: "ci@runner [apply 1]", Since: now.Add(-time.Minute), Expires: now.Add(time.Minute)}
)

func reportFiles(t *testing.T) map[string]map[string][]byte {
	t.Helper()
	var rep deployplan.Report
	rep.DeployApply.RemainingBlockers = []deployplan.Blocker{{ID: "field-conflict", Message: "spec.replicas is owned by kubectl", UnblockHint: "kubectl apply --server-side --force-conflicts ..."}}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]map[string][]byte{"run-2": {"report.json": b}}
}

func kinds(rs []Reason) []Kind {
	out := []Kind{}
	for _, r := range rs {
		out = append(out, r.Kind)
	}
	return out
}

// TestExplain: each kind of reason from its source, in the order a
// person acts on them; the gates only beside something to change; none
// for a live, healthy App whatever the gates say.
func TestExplain(t *testing.T) {
	all := Options{Freezes: fakeFreezes{list: frozen}, AutoSync: fakeAutoSync{st: pausedSt, ok: true}, Promotions: pending,
		Runs: fakeRuns{entries: []planstore.Entry{blocked, *liveEntry}, files: reportFiles(t)}, Applied: fakeApplied{liveEntry}, Locks: fakeLocks{lock}}
	cluster := fakeCluster{
		events: map[string]kubeview.EventList{"u-dep": {Items: []kubeview.Event{{Type: "Warning", Reason: "ProgressDeadlineExceeded", Message: "ReplicaSet web-2 has timed out", Last: now.Add(-time.Minute)}}}},
		drift:  map[string][]objrules.DriftField{"u-dep": {{Path: "spec.replicas", Manager: "kubectl-scale"}, {Path: "spec.template.spec.containers[name=web].env[name=X]", Manager: "kubectl-edit"}}},
	}
	for _, tc := range []struct {
		name     string
		opts     Options
		app      App
		want     []Kind
		contains map[Kind]string
	}{
		{name: "live and healthy: none, though frozen, paused and locked", opts: Options{Freezes: fakeFreezes{list: frozen}, AutoSync: fakeAutoSync{st: pausedSt, ok: true},
			Applied: fakeApplied{liveEntry}, Locks: fakeLocks{lock}, Runs: fakeRuns{entries: []planstore.Entry{*liveEntry}}}, app: app(), want: []Kind{}},
		{name: "no sources", app: app(), want: []Kind{}},
		{name: "everything, in order", opts: all, app: drifted(degraded(unapplied(app()))),
			want: []Kind{Freeze, Paused, Promotion, NotApplied, Blocked, Locked, Health, Drift},
			contains: map[Kind]string{
				Freeze:     "frozen until 2026-12-05 14:00 UTC by sam@example.com: release week",
				Paused:     "the auto-sync of staging is paused until 2026-12-05T20:00:00Z by pat@example.com: incident 42",
				Promotion:  "promotion pr-1 of 1.3.0 from dev to staging waits",
				NotApplied: "commit c2c2c2c2c2c2 of staging is not applied: staging runs c1c1c1c1c1c1, applied by ann@example.com; the last plan blocked: 1 blocker",
				Blocked:    "blocked by field-conflict: spec.replicas is owned by kubectl; fix: kubectl apply --server-side",
				Locked:     "holder ci@runner [apply 1]",
				Health:     "Deployment web is Degraded: Deployment exceeded its progress deadline; latest event: Warning ProgressDeadlineExceeded: ReplicaSet web-2 has timed out",
				Drift:      "Deployment web has 2 field(s) changed outside its operator: spec.replicas, spec.template.spec.containers[name=web].env[name=X] (by kubectl-scale, kubectl-edit)",
			}},
		{name: "degraded and frozen: the freeze first", opts: Options{Freezes: fakeFreezes{list: frozen}}, app: degraded(app()), want: []Kind{Freeze, Health}},
		{name: "unapplied commit, paused: no blocker or lock when the run applied", opts: Options{AutoSync: fakeAutoSync{st: pausedSt, ok: true}, Applied: fakeApplied{liveEntry},
			Runs: fakeRuns{entries: []planstore.Entry{*liveEntry}}}, app: unapplied(app()), want: []Kind{Paused, NotApplied},
			contains: map[Kind]string{NotApplied: "commit c2c2c2c2c2c2 of staging is not applied: staging runs c1c1c1c1c1c1, applied by ann@example.com"}},
		{name: "nothing applied yet", opts: Options{Applied: fakeApplied{}}, app: app(), want: []Kind{NotApplied},
			contains: map[Kind]string{NotApplied: "nothing was applied to staging yet"}},
		{name: "a pending promotion alone", opts: Options{Promotions: pending}, app: app(), want: []Kind{Promotion}},
		{name: "App CR out of sync", app: func() App {
			a := app()
			a.Git = nil
			a.Row.Sync = kubeview.Sync{Status: kubeview.SyncOutOfSync, Message: "1.2.0 is declared, 1.1.0 runs"}
			a.Row.Running = []kubeview.VersionCount{{Version: "1.1.0"}}
			return a
		}(), want: []Kind{NotApplied}, contains: map[Kind]string{NotApplied: "1.2.0 is declared but 1.1.0 runs"}},
		{name: "freezes unreadable: writes refused", opts: Options{Freezes: fakeFreezes{err: errors.New("boom")}}, app: degraded(app()), want: []Kind{Freeze, Health},
			contains: map[Kind]string{Freeze: "could not be read, so writes are refused"}},
		{name: "drift without detail", app: drifted(app()), want: []Kind{Drift}, contains: map[Kind]string{Drift: "Deployment web has 2 field(s) changed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := New(tc.opts).Explain(context.Background(), tc.app, cluster, Detail(tc.name != "drift without detail"))
			if diff := cmp.Diff(tc.want, kinds(got.Reasons)); diff != "" {
				t.Fatalf("kinds (-want +got):\n%s\n%+v", diff, got.Reasons)
			}
			for _, r := range got.Reasons {
				if want, ok := tc.contains[r.Kind]; ok && !strings.Contains(r.Message, want) {
					t.Errorf("%s message = %q, want it to contain %q", r.Kind, r.Message, want)
				}
				if r.Link == "" {
					t.Errorf("%s has no link", r.Kind)
				}
			}
		})
	}
}

// TestExplainFields: desired and live, and each reason's times, author
// and link.
func TestExplainFields(t *testing.T) {
	s := New(Options{Freezes: fakeFreezes{list: frozen}, AutoSync: fakeAutoSync{st: pausedSt, ok: true}, Promotions: pending,
		Applied: fakeApplied{liveEntry}, Locks: fakeLocks{lock}, Runs: fakeRuns{entries: []planstore.Entry{*liveEntry}}})
	got := s.Explain(context.Background(), unapplied(app()), nil, true)
	if got.App != "shop/web" || got.Desired != "1.3.0" || got.Live != "1.2.0" {
		t.Errorf("answer = %q %q %q, want shop/web 1.3.0 1.2.0", got.App, got.Desired, got.Live)
	}
	tp := func(t time.Time) *time.Time { return &t }
	want := []Reason{
		{Kind: Freeze, Since: tp(now.Add(-time.Hour)), Until: tp(now.Add(2 * time.Hour)), By: "sam@example.com", Link: "/environments/staging"},
		{Kind: Paused, Until: tp(now.Add(8 * time.Hour)), By: "pat@example.com", Link: "/environments/staging"},
		{Kind: Promotion, Since: tp(now.Add(-10 * time.Minute)), Until: tp(now.Add(-10*time.Minute + promotion.PendingTTL)), By: "rae@example.com", Link: "/environments/staging/promote?app=web&from=dev"},
		{Kind: NotApplied, Since: tp(now.Add(-time.Hour)), Link: "/environments/staging"},
		{Kind: Locked, Since: tp(now.Add(-time.Minute)), Until: tp(now.Add(time.Minute)), By: "ci@runner [apply 1]", Link: "/environments/staging"},
	}
	if diff := cmp.Diff(want, got.Reasons, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Message" }, cmp.Ignore())); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
}

// TestExplainCleansText: text from people and the cluster loses its
// control and format characters (a U+202E in a freeze's reason, a
// newline in an event).
func TestExplainCleansText(t *testing.T) {
	l := freeze.List{frozen[0]}
	l[0].Reason = "evil\u202egnp.exe"
	cluster := fakeCluster{events: map[string]kubeview.EventList{"u-dep": {Items: []kubeview.Event{{Type: "Warning", Reason: "X", Message: "line1\nline2\u200b"}}}}}
	got := New(Options{Freezes: fakeFreezes{list: l}}).Explain(context.Background(), degraded(app()), cluster, true)
	if len(got.Reasons) != 2 {
		t.Fatalf("reasons = %+v, want a freeze and health", got.Reasons)
	}
	for _, r := range got.Reasons {
		if strings.ContainsAny(r.Message, "\u202e\u200b\n") {
			t.Errorf("%s message = %q, want it cleaned", r.Kind, r.Message)
		}
	}
	if !strings.Contains(got.Reasons[0].Message, "evilgnp.exe") || !strings.Contains(got.Reasons[1].Message, "line1 line2") {
		t.Errorf("messages = %q, %q", got.Reasons[0].Message, got.Reasons[1].Message)
	}
}

// TestCached: the fleet's filter is the same composition over the row.
func TestCached(t *testing.T) {
	for _, tc := range []struct {
		name string
		app  App
		want bool
	}{
		{"healthy", app(), false},
		{"degraded", degraded(app()), true},
		{"drifted", drifted(app()), true},
		{"out of sync", func() App { a := app(); a.Row.Sync.Status = kubeview.SyncOutOfSync; return a }(), true},
		{"progressing", func() App { a := app(); a.Row.Health.Status = objrules.HealthProgressing; return a }(), true},
	} {
		a := tc.app
		a.Tree = kubeview.Tree{} // the fleet has rows only
		if got := Cached(a); got != tc.want {
			t.Errorf("Cached(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// countingApplied counts its reads.
type countingApplied struct{ n *int }

func (c countingApplied) LastApplied(context.Context, string) (*planstore.Entry, error) {
	*c.n++
	return liveEntry, nil
}

// TestBatch: a batch answers several Apps of one environment with one read
// of an environment-wide source, and the same answers as one by one.
func TestBatch(t *testing.T) {
	n := 0
	s := New(Options{Applied: countingApplied{&n}, AutoSync: fakeAutoSync{st: pausedSt, ok: true}})
	b := s.Batch()
	for i := 0; i < 3; i++ {
		a := unapplied(app())
		one, many := s.Explain(context.Background(), a, nil, false), b.Explain(context.Background(), a, nil, false)
		if diff := cmp.Diff(one, many); diff != "" {
			t.Errorf("batch answer (-one +batch):\n%s", diff)
		}
	}
	if n != 3+1 {
		t.Errorf("reads of the live commit = %d, want 3 one by one and 1 for the batch", n)
	}
}

// TestExplainWaiting: an App whose git object depends on others
// (Git.DependsOn) names the first that is not healthy, with its health
// and a link to it, once the App has something to change; a Healthy or
// Suspended dependency holds nothing back, and one that does not run is
// named too.
func TestExplainWaiting(t *testing.T) {
	row := func(name string, st objrules.HealthStatus, msg string) kubeview.AppRow {
		return kubeview.AppRow{Name: name, Namespace: "shop", Health: objrules.Health{Status: st, Message: msg}}
	}
	cluster := fakeCluster{rows: map[string]kubeview.AppRow{
		"shop/db":    row("db", objrules.HealthDegraded, "Caused by apps/Deployment:shop/db"),
		"shop/cache": row("cache", objrules.HealthHealthy, ""),
		"shop/idle":  row("idle", objrules.HealthSuspended, ""),
		"eu/db":      row("db", objrules.HealthHealthy, ""),
	}}
	dependsOn := func(a App, deps ...string) App {
		g := *a.Git
		g.DependsOn = deps
		a.Git = &g
		return a
	}
	opts := Options{Applied: fakeApplied{liveEntry}}
	for _, tc := range []struct {
		name string
		app  App
		want string // the waiting reason's message; "" for none
		link string
	}{
		{"waits for a Degraded App", dependsOn(unapplied(app()), "cache", "db"),
			"web waits for App/db, which is Degraded: Caused by apps/Deployment:shop/db; an apply writes web only once App/db is healthy", "/clusters/eu/apps/shop/db"},
		{"waits for an App that does not run", dependsOn(unapplied(app()), "ghost"),
			"web waits for App/ghost, which does not run in shop: an apply writes web only once App/ghost is healthy", "/clusters/eu/apps/shop/ghost"},
		{"healthy and suspended Apps hold nothing back", dependsOn(unapplied(app()), "cache", "idle"), "", ""},
		{"live and healthy: not named", dependsOn(app(), "db"), "", ""},
		{"no dependencies", unapplied(app()), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ans := New(opts).Explain(context.Background(), tc.app, cluster, true)
			var got []Reason
			for _, r := range ans.Reasons {
				if r.Kind == Waiting {
					got = append(got, r)
				}
			}
			if tc.want == "" {
				if len(got) != 0 {
					t.Fatalf("waiting reasons = %+v, want none", got)
				}
				return
			}
			if len(got) != 1 || got[0].Message != tc.want || got[0].Link != tc.link {
				t.Fatalf("waiting reasons = %+v, want %q linking %s", got, tc.want, tc.link)
			}
			kinds := make([]Kind, 0, len(ans.Reasons))
			for _, r := range ans.Reasons {
				kinds = append(kinds, r.Kind)
			}
			if diff := cmp.Diff([]Kind{NotApplied, Waiting}, kinds); diff != "" {
				t.Errorf("kinds (-want +got):\n%s", diff)
			}
		})
	}
}
