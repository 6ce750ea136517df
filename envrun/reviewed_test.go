package envrun

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/planstore"
)

func TestLatestPlan(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	history := []planstore.Entry{ // newest first
		{ID: "apply-3", Environment: "dev", Action: ActionApply, Conclusion: "applied", Time: t0.Add(3 * time.Minute)},
		{ID: "plan-2", Environment: "dev", Action: ActionPlan, Conclusion: "ready", User: "bob", Time: t0.Add(2 * time.Minute)},
		{ID: "plan-1", Environment: "dev", Action: ActionPlan, Conclusion: "ready", Time: t0.Add(time.Minute)},
	}
	blocked := []planstore.Entry{{ID: "plan-9", Environment: "dev", Action: ActionPlan, Conclusion: "blocked"}}
	tests := []struct {
		name    string
		entries []planstore.Entry
		id      string
		want    string // "" means accepted
	}{
		{"newest plan, ready", history, "plan-2", ""},
		{"no id", history, "", "no plan was named"},
		{"unknown id", history, "plan-x", "is unknown"},
		{"an apply's id", history, "apply-3", "is unknown"},
		{"an older plan", history, "plan-1", "not the latest plan of dev (plan-2 is, made by bob)"},
		{"no plan at all", nil, "plan-1", "has no plan yet"},
		{"newest plan blocked", blocked, "plan-9", "is blocked, not ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := LatestPlan(tt.entries, "dev", tt.id)
			if tt.want == "" {
				if err != nil || e.ID != tt.id {
					t.Errorf("LatestPlan(%q) = %+v, %v; want the entry", tt.id, e, err)
				}
				return
			}
			var ref *deployplan.RefusalError
			if !errors.As(err, &ref) || !strings.Contains(ref.Reason, tt.want) {
				t.Errorf("LatestPlan(%q) = %v, want a refusal naming %q", tt.id, err, tt.want)
			}
		})
	}
}

// readyPlan saves a ready plan of dev whose digest is digest (a real
// report of a plan against a cluster that refuses connections, turned
// ready) and returns its id.
func readyPlan(t *testing.T, r *Runner, digest string) string {
	t.Helper()
	env, _ := r.cfg.Env("dev")
	rep, err := deployplan.Plan(context.Background(), env, deployplan.Options{RestConfig: &rest.Config{Host: "https://127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	d := &rep.DeployApply
	d.RemainingBlockers = nil
	d.Conclusion = deployplan.Conclusion{Status: deployplan.StatusReady, Summary: "ready"}
	if digest != "" {
		d.Source.RenderedDigest = digest
	}
	js, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if vs := deployplan.ValidateReport(js); len(vs) > 0 {
		t.Fatalf("the test's plan breaks the contract: %v", vs)
	}
	e, err := r.opts.Store.Save(context.Background(), planstore.Entry{Environment: "dev", Action: ActionPlan, Conclusion: "ready", User: "alice", Time: time.Now()},
		map[string][]byte{"report.json": js})
	if err != nil {
		t.Fatal(err)
	}
	return e.ID
}

// TestApplyOfAStalePlan: the console applies only the latest ready plan,
// and only while the source renders as it did then; a stale plan ends
// refused (kept in the history) without reaching the cluster.
func TestApplyOfAStalePlan(t *testing.T) {
	r, _ := testRunner(t)
	old := readyPlan(t, r, "")
	stale := readyPlan(t, r, "sha256:"+strings.Repeat("0", 64))

	var ref *deployplan.RefusalError
	if run, err := r.Start("dev", ActionApply, "alice", "dev", old); run != nil || !errors.As(err, &ref) || !strings.Contains(ref.Reason, "not the latest plan") {
		t.Errorf("apply of an older plan = %v, %v; want refused as not the latest", run, err)
	}
	if run, err := r.Start("dev", ActionApply, "alice", "dev", ""); run != nil || !errors.As(err, &ref) {
		t.Errorf("apply without a plan id = %v, %v; want refused", run, err)
	}

	run, err := r.Start("dev", ActionApply, "alice", "dev", stale)
	if err != nil {
		t.Fatalf("apply of the latest ready plan was refused at start: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !run.Snapshot().Done {
		if time.Now().After(deadline) {
			t.Fatal("the apply did not end")
		}
		time.Sleep(20 * time.Millisecond)
	}
	snap := run.Snapshot()
	if !strings.Contains(snap.Refusal, deployplan.SourceMovedReason) || snap.Report != nil {
		t.Errorf("apply of a stale plan: refusal %q, report %v; want %q and no report", snap.Refusal, snap.Report, deployplan.SourceMovedReason)
	}
	if snap.Entry.Conclusion != "refused" || !strings.Contains(snap.Entry.Summary, deployplan.SourceMovedReason) {
		t.Errorf("history entry = %+v, want refused saying the source moved", snap.Entry)
	}
}
