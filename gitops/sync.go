package gitops

import (
	"context"
	"errors"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// SyncRequest is a sync of App, which Env renders, from the head of Env's
// branch; Commit is the commit the console last rendered of it.
type SyncRequest struct {
	Env        *envconfig.Environment
	App        App
	Commit     string
	Who        Person
	BreakGlass *freeze.BreakGlass
}

// SyncResult is the run a sync through git started, and the commit the
// console last rendered of the branch it plans.
type SyncResult struct {
	Environment string
	Commit      *Commit
	Run         *envrun.Run
}

// Sync starts one run that plans the environment at its branch head and
// applies the App and its own objects only (envrun.Deploy, trigger sync).
// The run's report names the commit applied. A freeze refusal keeps its
// cause (errors.As a *freeze.FrozenError); envrun recorded it.
func (s *Service) Sync(ctx context.Context, req SyncRequest) (SyncResult, error) {
	if s.opts.Runs == nil {
		return SyncResult{}, refuse(KindNotFound, "NoEnvironments", "no environments are configured (start deploy-web with --environments)")
	}
	env, a := req.Env, req.App
	run, err := s.opts.Runs.Deploy(env.Name, envrun.DeployRequest{User: req.Who.Actor.String(), Actor: req.Who.Actor, Trigger: envrun.TriggerSync,
		Only: a.Name, OnlyGroup: a.Group, OnlyKind: a.Kind, BreakGlass: req.BreakGlass})
	if errors.Is(err, envrun.ErrBusy) {
		return SyncResult{}, refuse(KindConflict, "Busy", "a plan or apply of environment %s is already running: sync once it ends; nothing was started", env.Name)
	}
	if err != nil {
		return SyncResult{}, FreezeError(err)
	}
	branch := env.Source.Ref
	if b, err := env.WriteBackBranch(); err == nil {
		branch = b
	}
	return SyncResult{Environment: env.Name, Run: run,
		Commit: &Commit{SHA: req.Commit, Short: textfmt.ShortSHA(req.Commit), Branch: branch, NoChange: true}}, nil
}
