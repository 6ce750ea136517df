package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
)

// report is a report whose conclusion is status, of commit, with
// blockers.
func report(status, commit string, blockers ...deployplan.Blocker) *deployplan.Report {
	r := &deployplan.Report{}
	r.DeployApply.Conclusion.Status = status
	r.DeployApply.Source.Commit = commit
	r.DeployApply.RemainingBlockers = blockers
	return r
}

// TestDeployResult is how a finished run reads to the loop.
func TestDeployResult(t *testing.T) {
	for _, tc := range []struct {
		name string
		snap envrun.Snapshot
		want autosync.Result
	}{
		{"applied", envrun.Snapshot{Done: true, Report: report(deployplan.StatusApplied, "c1")},
			autosync.Result{RunID: "r", Outcome: autosync.OutcomeApplied, Commit: "c1"}},
		{"blocked", envrun.Snapshot{Done: true, Report: report(deployplan.StatusBlocked, "c2", deployplan.Blocker{ID: "boundary", Message: "ConfigMap/x is for kube-system"}),
			Err: &deployplan.RefusalError{Reason: "the plan is blocked by 1 blocker(s)"}},
			autosync.Result{RunID: "r", Outcome: autosync.OutcomeBlocked, Commit: "c2", Blockers: []string{"boundary: ConfigMap/x is for kube-system"}}},
		{"refused (a lock)", envrun.Snapshot{Done: true, Err: &deployplan.RefusalError{Reason: "the lock is held"}},
			autosync.Result{RunID: "r", Outcome: autosync.OutcomeRefused, Blockers: []string{"the lock is held"}}},
		{"failed apply", envrun.Snapshot{Done: true, Report: report(deployplan.StatusFailed, "c3"), Err: errors.New("workloads unhealthy")},
			autosync.Result{RunID: "r", Outcome: autosync.OutcomeFailed, Commit: "c3"}},
		{"interrupted (the replica stopped)", envrun.Snapshot{Done: true, Report: report(deployplan.StatusFailed, "c4"), Err: &deployplan.InterruptedError{Written: 2}},
			autosync.Result{RunID: "r", Outcome: autosync.OutcomeInterrupted, Commit: "c4"}},
		{"no report", envrun.Snapshot{Done: true, Err: errors.New("cluster unreachable")},
			autosync.Result{RunID: "r", Outcome: autosync.OutcomeFailed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, deployResult("r", tc.snap)); diff != "" {
				t.Errorf("deployResult(%s) (-want +got):\n%s", tc.name, diff)
			}
		})
	}
}

// TestAutoSyncRecord is the audit record of an automatic run: verb and
// outcome by trigger and result, actor auto-sync, the cluster named, and
// for a heal the fields put back.
func TestAutoSyncRecord(t *testing.T) {
	cfg, err := envconfig.ParseConfig([]byte("environments:\n  - {name: dev, cluster: {context: kind-dev}, namespace: staging, source: {path: m}, catalog: c.json}\n"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &cfg.Environments[0]
	a := &autoSyncAdapters{d: autoSyncDeps{cfg: cfg, index: noIndex{}}, fields: map[string]map[string]string{
		"dev": {"ConfigMap/api-config": `data.v = "by hand" (by kubectl-edit)`}}}
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name        string
		run         autosync.Run
		verb        audit.Verb
		outcome     audit.Outcome
		message     []string
		objects     int
		blockersLen int
	}{
		{"applied", autosync.Run{Trigger: autosync.TriggerAutoSync, Commit: "1234567890abcdef", Outcome: autosync.OutcomeApplied, RunID: "dev-1"},
			audit.VerbAutoSync, audit.OutcomeSucceeded, []string{"auto-sync of dev at 1234567890ab", "run dev-1", "applied"}, 0, 0},
		{"blocked", autosync.Run{Trigger: autosync.TriggerAutoSync, Commit: "abc", Outcome: autosync.OutcomeBlocked, Blockers: []string{"boundary: x"}},
			audit.VerbAutoSync, audit.OutcomeRefused, []string{"blocked", "not tried again"}, 0, 1},
		{"interrupted", autosync.Run{Trigger: autosync.TriggerAutoSync, Commit: "abc", Outcome: autosync.OutcomeInterrupted, RunID: "dev-2"},
			audit.VerbAutoSync, audit.OutcomeInterrupted, []string{"auto-sync of dev", "run dev-2", "interrupted"}, 0, 0},
		{"error", autosync.Run{Trigger: autosync.TriggerAutoSync, Outcome: autosync.OutcomeError, Error: "busy"},
			audit.VerbAutoSync, audit.OutcomeFailed, []string{"error: busy"}, 0, 0},
		{"heal", autosync.Run{Trigger: autosync.TriggerSelfHeal, Commit: "abc", Outcome: autosync.OutcomeApplied, Objects: []string{"ConfigMap/api-config"}},
			audit.VerbSelfHeal, audit.OutcomeSucceeded, []string{"self-heal of dev", `put back: ConfigMap/api-config data.v = "by hand" (by kubectl-edit)`}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run.Time = at
			rec := a.record(e, autosync.Record{Env: "dev", Identity: "pod-a", Run: tc.run})
			if rec.Verb != tc.verb || rec.Outcome != tc.outcome || rec.Actor.Subject != audit.EngineSubject || rec.Cluster != "kind-dev" ||
				rec.Environment != "dev" || rec.Namespace != "staging" || !rec.Time.Equal(at) || len(rec.Objects) != tc.objects || len(rec.Blockers) != tc.blockersLen {
				t.Errorf("record(%s) = %+v, want %s %s by auto-sync in dev on kind-dev, %d objects, %d blockers", tc.name, rec, tc.verb, tc.outcome, tc.objects, tc.blockersLen)
			}
			for _, m := range tc.message {
				if !strings.Contains(rec.Message, m) {
					t.Errorf("record(%s).Message = %q, want it to say %q", tc.name, rec.Message, m)
				}
			}
		})
	}
}

// noIndex is an index with no head and no objects.
type noIndex struct{}

func (noIndex) Head(context.Context, string) (string, error) { return "", nil }
func (noIndex) Objects(string) []*unstructured.Unstructured  { return nil }
