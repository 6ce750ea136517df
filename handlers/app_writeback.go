package handlers

import (
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/gitops"
	"github.com/hanzoai/deploy-web/web/paths"
)

// gitRendered is an App an environment renders from its manifests.
type gitRendered struct {
	env     *envconfig.Environment
	desired envsource.Desired
}

// renderedBy finds the environment that renders App a in a's cluster (the
// desired-state index knows), or nil when none does.
func (s *Server) renderedBy(a appRef) *gitRendered {
	if s.opts.Desired == nil || s.opts.Environments == nil {
		return nil
	}
	d, ok := s.opts.Desired.Lookup(a.c.AppGroup, a.c.AppKind, a.Namespace, a.Name)
	if !ok || !s.envTargets(d.Environment, a.c) {
		return nil
	}
	env, err := s.opts.Environments.Config().Env(d.Environment)
	if err != nil {
		return nil
	}
	return &gitRendered{env: env, desired: d}
}

// workflowApp is App a as the workflows name it.
func workflowApp(a appRef) gitops.App {
	return gitops.App{Group: a.c.AppGroup, Kind: a.c.AppKind, Namespace: a.Namespace, Name: a.Name}
}

// commitJSON is a write-back commit in an answer.
type commitJSON = gitops.Commit

// catalogMoveJSON is a catalog move in an answer: the catalog's path and
// its commit before and after.
type catalogMoveJSON = gitops.CatalogChange

// runJSON is the run a write-back started.
type runJSON struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// runOf is run in an answer (nil: none).
func runOf(run *envrun.Run) *runJSON {
	if run == nil {
		return nil
	}
	return &runJSON{ID: run.ID, URL: paths.EnvRun(run.Env, run.ID)}
}

// movedJSON is an App a catalog move changes, in an answer: its image
// before and after.
type movedJSON struct {
	Namespace string `json:"namespace"`
	App       string `json:"app"`
	From      string `json:"from"`
	To        string `json:"to"`
}

// gitOutcome is what a write through git did: the commit, and the run that
// applies it (nil in a review branch, or when it could not start: RunError
// says why).
type gitOutcome struct {
	Environment string
	Commit      *commitJSON
	// Catalog and Moved are a commit-mode rollback's catalog move and the
	// Apps it moves (the one asked for among them); nil otherwise.
	Catalog  *catalogMoveJSON
	Moved    []movedJSON
	Run      *runJSON
	RunError string
}

// rollbackOutcome is a rollback's result as the answers show it.
func rollbackOutcome(res gitops.RollbackResult) gitOutcome {
	out := gitOutcome{Environment: res.Environment, Commit: res.Commit, Catalog: res.Catalog, Run: runOf(res.Run), RunError: res.RunError}
	for _, a := range res.Moved {
		out.Moved = append(out.Moved, movedJSON{Namespace: a.Namespace, App: a.Name, From: a.From.String(), To: a.To.String()})
	}
	return out
}
