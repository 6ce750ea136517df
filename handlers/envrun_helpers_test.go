package handlers

import (
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envrun"
)

// waitEnvRun waits (generously) for run id of runner to end, woken by
// each change of its snapshot, and returns its last snapshot.
func waitEnvRun(t *testing.T, runner *envrun.Runner, id string) envrun.Snapshot {
	t.Helper()
	run, ok := runner.Get(id)
	if !ok {
		t.Fatalf("run %s unknown", id)
	}
	deadline := time.After(4 * time.Minute)
	for {
		snap := run.Snapshot()
		if snap.Done {
			return snap
		}
		select {
		case <-snap.Changed:
		case <-deadline:
			t.Fatalf("run %s did not end: %q", id, snap.Steps)
		}
	}
}

// deployApplied plans and applies env at its branch head with trigger,
// fails unless the run applied, and returns the run's last snapshot.
func deployApplied(t *testing.T, runner *envrun.Runner, env, trigger string) envrun.Snapshot {
	t.Helper()
	run, err := runner.Deploy(env, envrun.DeployRequest{User: "test", Trigger: trigger})
	if err != nil {
		t.Fatal(err)
	}
	s := waitEnvRun(t, runner, run.ID)
	if s.Report == nil || s.Report.Status() != deployplan.StatusApplied {
		t.Fatalf("deploy %s = %v, err %v, refusal %q, steps %q; want applied", env, s.Report, s.Err, s.Refusal, s.Steps)
	}
	return s
}
