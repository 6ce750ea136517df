package envrun

import (
	"errors"
	"testing"
)

func TestDeployRefusals(t *testing.T) {
	r, _ := testRunner(t)
	if _, err := r.Deploy("nope", DeployRequest{User: "alice", Trigger: TriggerSync}); !errors.Is(err, ErrUnknownEnv) {
		t.Errorf("Deploy(nope) = %v, want ErrUnknownEnv", err)
	}
	if _, err := r.Deploy("dev", DeployRequest{User: "alice", Trigger: "apply-everything"}); !errors.Is(err, ErrBadTrigger) {
		t.Errorf("Deploy(trigger apply-everything) = %v, want ErrBadTrigger", err)
	}
	// testRunner's cluster never answers: the first run stays going.
	first, err := r.Deploy("dev", DeployRequest{User: "alice", Trigger: TriggerRollback})
	if err != nil {
		t.Fatal(err)
	}
	if first.Action != ActionApply {
		t.Errorf("Deploy(dev).Action = %s, want apply", first.Action)
	}
	if _, err := r.Deploy("dev", DeployRequest{User: "bob", Trigger: TriggerSync, Only: "api"}); !errors.Is(err, ErrBusy) {
		t.Errorf("a second Deploy of dev while one runs = %v, want ErrBusy", err)
	}
	if _, err := r.Start("dev", ActionPlan, "bob", "", ""); !errors.Is(err, ErrBusy) {
		t.Errorf("a plan of dev while a Deploy runs = %v, want ErrBusy", err)
	}
	prod, err := r.Deploy("prod", DeployRequest{User: "alice", Trigger: TriggerAutoSync})
	if err != nil {
		t.Fatal(err)
	}
	if prod.Action != ActionPlan {
		t.Errorf("Deploy(prod, protected).Action = %s, want plan (a protected environment is planned only)", prod.Action)
	}
}
