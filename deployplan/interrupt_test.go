package deployplan

import (
	"context"
	"strings"
	"testing"
)

// TestInterruptedSummary: an interrupted apply's conclusion counts the
// objects written and marks those it did not reach skipped.
func TestInterruptedSummary(t *testing.T) {
	ps := &planState{report: &Report{}}
	ps.report.DeployApply.Objects = []ObjectPlan{{Name: "a", Result: "created"}, {Name: "b", Result: "configured"}, {Name: "c"}}
	got, written := ps.interruptedSummary("before the next write")
	if written != 2 || !strings.Contains(got, "2 of 3 object(s) written (1 created, 1 configured, 1 skipped)") {
		t.Errorf("interruptedSummary() = %q, %d; want 2 of 3 written, 1 skipped", got, written)
	}
	if r := ps.report.DeployApply.Objects[2].Result; r != "skipped" {
		t.Errorf("the object not reached has result %q, want skipped", r)
	}
}

// TestGuardStopsWhenInterrupted: once Interrupt ended, the guard refuses
// the next write (errInterrupted) before asking the lock.
func TestGuardStopsWhenInterrupted(t *testing.T) {
	stop, cancel := context.WithCancel(context.Background())
	cancel()
	var ps planState // no lock: the guard must not reach it
	if err := ps.guard(context.Background(), ApplyOptions{Interrupt: stop}, "apply ConfigMap/x"); err != errInterrupted {
		t.Errorf("guard after the interruption = %v, want errInterrupted", err)
	}
}
