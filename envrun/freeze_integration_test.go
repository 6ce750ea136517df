package envrun

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/metadata"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
	"github.com/hanzoai/deploy-web/planstore"
)

// TestFreezeOnControlPlane: on the real control plane, with the freezes
// in their ConfigMap and the audit trail in the cluster, a freeze of dev
// refuses the apply of a ready plan and every Deploy trigger (rollback,
// sync, auto-sync) with its reason and the time it opens, each recorded
// as refused; the plan itself still runs; a break-glass that is not a
// superadmin's is refused (recorded), a superadmin's applies (recorded
// with its reason); and once the store's clock passes the freeze's end,
// a sync runs and applies with nothing written to the freezes in between.
func TestFreezeOnControlPlane(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{"dev", "deploy-web"}})
	ctx := context.Background()
	dir := t.TempDir()
	files := map[string]string{
		"m/kustomization.yaml": "namespace: dev\nresources:\n  - objects.yaml\n",
		"m/objects.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: frozen-test\n",
		"catalog.json":         `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`,
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := envconfig.ParseConfig([]byte("environments:\n  - {name: dev, cluster: {context: test}, namespace: dev, source: {path: m}, catalog: catalog.json, registry: {skip: true}}\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := metadata.NewForConfig(platformtest.AdminConfig(p.Cluster.Config))
	if err != nil {
		t.Fatal(err)
	}
	trail, err := audit.New(p.Kube.CoreV1(), meta, audit.Options{Namespace: "deploy-web"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	clock := time.Now()
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	store := freeze.NewStore(p.Kube.CoreV1(), "deploy-web", signtest.Keys()).WithClock(now)
	f, err := store.Add(ctx, freeze.Freeze{Scope: scope.Scope{Environments: []string{"dev"}}, Start: clock.Add(-time.Minute), End: clock.Add(2 * time.Minute),
		Reason: "release week", Ticket: "https://tickets.example.com/CHG-7", Author: freeze.Author{Email: "root@example.com", Subject: "root"}})
	if err != nil {
		t.Fatal(err)
	}
	sink := &recordSink{store: trail}
	r := New(cfg, slog.New(slog.DiscardHandler), Options{
		RestConfig: p.Cluster.Config, ReportsDir: t.TempDir(), Store: planstore.New(p.Kube.CoreV1(), "deploy-web", 10), Events: p.Kube.CoreV1(),
		ApplyTimeout: time.Minute, Record: sink.record, Freezes: freeze.NewGate(store), Cluster: func(string) string { return "test" },
	})
	alice := audit.Actor{Email: "alice@example.com", Subject: "u-alice"}
	lastRecord := func(step string, n int) audit.Record {
		t.Helper()
		pg, err := trail.List(ctx, audit.Filter{Environment: "dev"})
		if err != nil {
			t.Fatal(err)
		}
		if len(pg.Records) != n {
			t.Fatalf("%s: %d records stored, want %d", step, len(pg.Records), n)
		}
		return pg.Records[0]
	}
	frozen := func(step string, err error) {
		t.Helper()
		var fe *freeze.FrozenError
		if !errors.As(err, &fe) || fe.Freeze.ID != f.ID || !fe.OpensAt.Equal(f.End) || !strings.Contains(fe.Message(), "by root@example.com (sub root): release week") {
			t.Fatalf("%s = %v, want refused by %s until %s", step, err, f.ID, f.End)
		}
	}

	// A plan still runs in a freeze.
	plan, err := r.StartAs(alice, "dev", ActionPlan, "alice", "", "")
	if err != nil {
		t.Fatalf("plan in a freeze = %v, want started", err)
	}
	ps := waitDone(t, plan)
	if ps.Report == nil || ps.Report.Status() != deployplan.StatusReady {
		t.Fatalf("plan in a freeze = %+v (err %v), want ready", ps.Report, ps.Err)
	}

	// The apply of that plan, and every Deploy trigger, are refused.
	_, err = r.StartAs(alice, "dev", ActionApply, "alice", "dev", ps.Entry.ID)
	frozen("apply of a ready plan", err)
	rec := lastRecord("refused apply", 1)
	if rec.Outcome != audit.OutcomeRefused || !strings.HasPrefix(rec.Message, "frozen until "+f.End.UTC().Format("2006-01-02 15:04")+" UTC by root@example.com (sub root): release week") {
		t.Errorf("refused apply's record = %s %q, want refused with the freeze's reason and opening time", rec.Outcome, rec.Message)
	}
	for i, trig := range []string{TriggerRollback, TriggerSync, TriggerAutoSync} {
		_, err := r.Deploy("dev", DeployRequest{User: "alice", Actor: alice, Trigger: trig})
		frozen("Deploy "+trig, err)
		if rec := lastRecord("refused "+trig, 2+i); rec.Outcome != audit.OutcomeRefused || !strings.HasPrefix(rec.Message, trig+": frozen until ") {
			t.Errorf("refused %s's record = %s %q, want refused %q...", trig, rec.Outcome, rec.Message, trig+": frozen until")
		}
	}

	// Break-glass: refused for a deployer, applied for a superadmin.
	_, err = r.StartWith(StartRequest{Who: alice, Env: "dev", Action: ActionApply, User: "alice", Confirm: "dev", PlanID: ps.Entry.ID,
		BreakGlass: &freeze.BreakGlass{Reason: "hotfix", By: freeze.Author{Email: alice.Email, Subject: alice.Subject}}})
	if !errors.Is(err, freeze.ErrBreakGlassDenied) {
		t.Fatalf("a deployer's break-glass apply = %v, want ErrBreakGlassDenied", err)
	}
	if rec := lastRecord("refused break-glass", 5); rec.Outcome != audit.OutcomeRefused || !strings.HasPrefix(rec.Message, "break-glass refused: only a superadmin") {
		t.Errorf("refused break-glass record = %s %q, want refused, saying only a superadmin may", rec.Outcome, rec.Message)
	}
	root := audit.Actor{Email: "root@example.com", Subject: "u-root"}
	run, err := r.StartWith(StartRequest{Who: root, Env: "dev", Action: ActionApply, User: "root", Confirm: "dev", PlanID: ps.Entry.ID,
		BreakGlass: &freeze.BreakGlass{Reason: "CVE-2026-1 hotfix", Superadmin: true, By: freeze.Author{Email: root.Email, Subject: root.Subject}}})
	if err != nil {
		t.Fatalf("a superadmin's break-glass apply = %v, want started", err)
	}
	as := waitDone(t, run)
	if as.Report == nil || as.Report.Status() != deployplan.StatusApplied {
		t.Fatalf("break-glass apply = %v (err %v, refusal %q), want applied", as.Report, as.Err, as.Refusal)
	}
	rec = lastRecord("break-glass apply", 6)
	if rec.Outcome != audit.OutcomeSucceeded || rec.Actor.Email != root.Email ||
		!strings.HasPrefix(rec.Message, "break-glass by root@example.com (sub u-root): CVE-2026-1 hotfix (overrode freeze "+f.ID+", frozen until ") {
		t.Errorf("break-glass apply record = %s %q by %v, want succeeded, the break-glass first, by root", rec.Outcome, rec.Message, rec.Actor)
	}

	// The freeze lapses by itself: at its end a sync runs and applies.
	before, err := store.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	clock = f.End
	mu.Unlock()
	run, err = r.Deploy("dev", DeployRequest{User: "alice", Actor: alice, Trigger: TriggerSync})
	if err != nil {
		t.Fatalf("sync at the freeze's end = %v, want started", err)
	}
	if ds := waitDone(t, run); ds.Err != nil || ds.Report == nil || ds.Report.Status() != deployplan.StatusApplied {
		t.Fatalf("sync at the freeze's end = %v (err %v, refusal %q), want applied", ds.Report, ds.Err, ds.Refusal)
	}
	after, err := store.List(ctx)
	if err != nil || len(after) != len(before) || after[0].ID != f.ID || !after[0].End.Equal(f.End) {
		t.Errorf("freezes after the lapse = %+v (%v), want the same freeze, untouched", after, err)
	}
}
