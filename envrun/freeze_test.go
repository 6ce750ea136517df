package envrun

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
)

// recorded collects the audit records a Runner hands over.
type recorded struct {
	mu   sync.Mutex
	recs []audit.Record
}

func (c *recorded) record(_ context.Context, rec audit.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs = append(c.recs, rec)
}

func (c *recorded) all() []audit.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]audit.Record(nil), c.recs...)
}

// freezeGate is a gate over a fake ConfigMap store whose clock the test
// sets, with one freeze of dev's App web stored.
func freezeGate(t *testing.T, now *time.Time) (*freeze.Gate, freeze.Freeze) {
	t.Helper()
	s := freeze.NewStore(fake.NewClientset().CoreV1(), "deploy-web", signtest.Keys()).WithClock(func() time.Time { return *now })
	f, err := s.Add(context.Background(), freeze.Freeze{Scope: scope.Scope{Environments: []string{"dev"}, Apps: []string{"web"}},
		Start: now.Add(-time.Minute), End: now.Add(time.Hour), Reason: "release week", Ticket: "https://tickets.example.com/CHG-7",
		Author: freeze.Author{Email: "root@example.com", Subject: "root"}})
	if err != nil {
		t.Fatal(err)
	}
	return freeze.NewGate(s), f
}

// TestDeployRefusedByFreeze: every Deploy trigger that would apply to a
// frozen target is refused before anything starts (not even ErrBusy),
// with the freeze's reason and opening time, and recorded as refused; a
// run confined to another App, and a protected environment's plan-only
// run, are not refused.
func TestDeployRefusedByFreeze(t *testing.T) {
	now := time.Now()
	gate, f := freezeGate(t, &now)
	r, _ := testRunner(t)
	var recs recorded
	r.opts.Freezes, r.opts.Record = gate, recs.record

	for i, trig := range []string{TriggerRollback, TriggerSync, TriggerAutoSync, TriggerSelfHeal} {
		run, err := r.Deploy("dev", DeployRequest{User: "alice", Trigger: trig})
		var fe *freeze.FrozenError
		if run != nil || !errors.As(err, &fe) || fe.Freeze.ID != f.ID || !fe.OpensAt.Equal(f.End) {
			t.Fatalf("Deploy(dev, %s) = %v, %v, want refused by %s until %s", trig, run, err, f.ID, f.End)
		}
		got := recs.all()
		if len(got) != i+1 {
			t.Fatalf("after Deploy(dev, %s): %d records, want %d", trig, len(got), i+1)
		}
		rec := got[i]
		if rec.Outcome != audit.OutcomeRefused || !strings.HasPrefix(rec.Message, trig+": frozen until ") || !strings.Contains(rec.Message, "release week") ||
			rec.Environment != "dev" || rec.Actor.Subject != "alice" {
			t.Errorf("record of Deploy(dev, %s) = %s %q (%s by %v), want refused %q... by alice", trig, rec.Outcome, rec.Message, rec.Environment, rec.Actor, trig+": frozen until")
		}
	}
	// Another App of dev is not frozen: the run starts.
	if _, err := r.Deploy("dev", DeployRequest{User: "alice", Trigger: TriggerSync, Only: "api"}); err != nil {
		t.Errorf("Deploy(dev, only api) = %v, want started (the freeze holds web only)", err)
	}
	// prod is protected: planned only, nothing to refuse.
	if _, err := r.Deploy("prod", DeployRequest{User: "alice", Trigger: TriggerAutoSync}); err != nil {
		t.Errorf("Deploy(prod, protected) = %v, want a plan-only run", err)
	}
}

// TestDeployBreakGlass: a break-glass that is not a superadmin's is the
// refusal (recorded, saying so); a superadmin's starts the run, which says
// so in its steps.
func TestDeployBreakGlass(t *testing.T) {
	now := time.Now()
	gate, f := freezeGate(t, &now)
	r, _ := testRunner(t)
	var recs recorded
	r.opts.Freezes, r.opts.Record = gate, recs.record
	bob := freeze.Author{Email: "bob@example.com", Subject: "bob"}

	_, err := r.Deploy("dev", DeployRequest{User: "bob", Trigger: TriggerRollback, BreakGlass: &freeze.BreakGlass{Reason: "hotfix", By: bob}})
	if !errors.Is(err, freeze.ErrBreakGlassDenied) {
		t.Fatalf("Deploy with a deployer's break-glass = %v, want ErrBreakGlassDenied", err)
	}
	if got := recs.all(); len(got) != 1 || got[0].Outcome != audit.OutcomeRefused || !strings.Contains(got[0].Message, "break-glass refused") {
		t.Errorf("records = %+v, want one refused %q", got, "break-glass refused")
	}
	run, err := r.Deploy("dev", DeployRequest{User: "root", Trigger: TriggerRollback,
		BreakGlass: &freeze.BreakGlass{Reason: "CVE-2026-1 hotfix", Superadmin: true, By: freeze.Author{Subject: "root"}}})
	if err != nil {
		t.Fatalf("Deploy with a superadmin's break-glass = %v, want started", err)
	}
	if run.override == nil || run.override.Freeze.ID != f.ID || run.override.Reason != "CVE-2026-1 hotfix" {
		t.Errorf("run's override = %+v, want freeze %s with the reason", run.override, f.ID)
	}
	steps := strings.Join(run.Snapshot().Steps, "\n")
	if !strings.Contains(steps, "break-glass: break-glass by sub root: CVE-2026-1 hotfix (overrode freeze "+f.ID) {
		t.Errorf("run steps = %q, want the break-glass named", steps)
	}
	rec := WithBreakGlass(audit.Record{Message: "applied 1 object"}, run.override)
	if !strings.HasPrefix(rec.Message, "break-glass by sub root: CVE-2026-1 hotfix (overrode freeze "+f.ID+", frozen until ") || !strings.HasSuffix(rec.Message, "; applied 1 object") {
		t.Errorf("WithBreakGlass(record) message = %q, want the break-glass first, then the outcome", rec.Message)
	}
	if rec.BreakGlass != "CVE-2026-1 hotfix" {
		t.Errorf("WithBreakGlass(record).BreakGlass = %q, want the reason %q", rec.BreakGlass, "CVE-2026-1 hotfix")
	}
	if got := WithBreakGlass(audit.Record{Message: "applied 1 object"}, nil); got.Message != "applied 1 object" || got.BreakGlass != "" {
		t.Errorf("WithBreakGlass(record, nil) = %q, %q; want the record unchanged", got.Message, got.BreakGlass)
	}
}

// TestFreezeLapses: a Deploy refused in a freeze starts once the clock
// passes its end, with nothing written in between.
func TestFreezeLapses(t *testing.T) {
	now := time.Now()
	gate, f := freezeGate(t, &now)
	r, _ := testRunner(t)
	r.opts.Freezes = gate
	if _, err := r.Deploy("dev", DeployRequest{User: "auto-sync", Trigger: TriggerAutoSync}); err == nil {
		t.Fatal("Deploy(dev) in the freeze started, want refused")
	}
	now = f.End
	if _, err := r.Deploy("dev", DeployRequest{User: "auto-sync", Trigger: TriggerAutoSync}); err != nil {
		t.Errorf("Deploy(dev) at the freeze's end = %v, want started", err)
	}
}

func TestFreezeAction(t *testing.T) {
	for _, tc := range []struct {
		action, trigger string
		want            freeze.Action
	}{
		{ActionPlan, "", freeze.Plan},
		{ActionApply, "", freeze.Apply},
		{ActionApply, TriggerRollback, freeze.Rollback},
		{ActionApply, TriggerSync, freeze.Sync},
		{ActionApply, TriggerAutoSync, freeze.AutoSync},
		{ActionApply, TriggerSelfHeal, freeze.AutoSync},
		{ActionPlan, TriggerSync, freeze.Plan},
	} {
		if got := freezeAction(tc.action, tc.trigger); got != tc.want {
			t.Errorf("freezeAction(%q, %q) = %s, want %s", tc.action, tc.trigger, got, tc.want)
		}
	}
}
