// Package autosync keeps GitOps environments at their branch head: every
// interval it compares the head of an environment's source with the
// commit last applied, and asks the guarded engine to plan and apply the
// head (trigger "auto-sync"); with self-heal, objects that drifted from
// what deploy-web applied are put back after a grace period (trigger
// "self-heal"). A plan with blockers is not applied and is not tried
// again for the same head. Only the replica holding the Lease
// deploy-web-autosync acts; a person may pause an environment for at most
// seven days (Pauses, a ConfigMap). Protected environments are never
// acted on.
//
// The package declares the small interfaces it consumes (Heads, Live,
// Deployer, Drift, Recorder, Clock); the server wires them to envsource,
// the plan history, the drift model and envrun.
package autosync
