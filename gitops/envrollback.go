package gitops

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/writeback"
)

// RecordReader reads one audit record with its manifests and its chain
// (implemented by *audit.Store).
type RecordReader interface {
	Get(ctx context.Context, id string) (audit.Record, error)
}

// EnvRollbackRequest is a rollback of environment Env to the state of
// its apply record To: a commit that sets Env's source folder (and its
// catalog, when the repository holds it) to their tree at the record's
// commit, then the run that plans and applies it.
type EnvRollbackRequest struct {
	Env *envconfig.Environment
	// Cluster is the cluster Env deploys to, as records name it.
	Cluster string
	// To is the id of the apply record to go back to.
	To string
	// Reason goes into the commit message and the record.
	Reason string
	Who    Person
	// FreezeTarget is where the freezes see the rollback; BreakGlass the
	// caller's request to roll back through a freeze (nil: none).
	FreezeTarget freeze.Target
	BreakGlass   *freeze.BreakGlass
}

// EnvRollbackResult is what an environment rollback did.
type EnvRollbackResult struct {
	Environment string `json:"environment"`
	// Record is the record rolled back to, RecordCommit the commit it
	// applied (whose trees the commit takes).
	Record       string `json:"record"`
	RecordCommit string `json:"recordCommit"`
	// Paths are the repository paths set to their tree at RecordCommit.
	Paths  []string `json:"paths"`
	Commit *Commit  `json:"commit"`
	// NoChange: the branch already holds the record's trees; nothing was
	// committed or started.
	NoChange bool        `json:"noChange"`
	Run      *envrun.Run `json:"-"`
	// RunError says why no run was started after the commit.
	RunError string `json:"runError,omitempty"`
	// Override is the break-glass the freeze check granted (nil: none).
	Override *freeze.Override `json:"-"`
}

// fullCommitRE is a full commit hash, as a plan's report names the commit
// it rendered.
var fullCommitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// EnvRollbackRecord is the one decision of whether record rec, read for
// id (readErr: how the read failed), is one environment env may roll back
// to: an apply of env that succeeded, names the commit it applied and
// whose chain holds. The same decision offers the button on a History
// row (readErr nil).
func EnvRollbackRecord(env, id string, rec audit.Record, readErr error) error {
	unknown := refuse(KindNotFound, "RecordNotFound", "record %q of environment %s not found: nothing was committed", textfmt.Cut(id, 80), env)
	switch {
	case !audit.ValidID(id) || errors.Is(readErr, audit.ErrNotFound):
		return unknown
	case readErr != nil:
		return &Error{Kind: KindUpstream, Reason: "RecordUnreadable", Err: readErr,
			Public: "record " + id + " could not be read from the cluster: nothing was committed"}
	case rec.Environment != env:
		// Another environment's record reads as unknown here.
		return unknown
	case rec.Chain == nil || !rec.Chain.OK:
		return refuse(KindConflict, "RecordTampered", "record %s failed its chain check: deploy-web does not roll back to a record that may have been edited; nothing was committed", id)
	case rec.Verb != audit.VerbApply:
		return refuse(KindUnprocessable, "NotAnApply", "record %s is a %s, not an apply: an environment rolls back to what an apply applied; nothing was committed", id, rec.Verb)
	case rec.Outcome != audit.OutcomeSucceeded:
		return refuse(KindUnprocessable, "NotApplied", "record %s is an apply that %s: roll back to one that succeeded; nothing was committed", id, rec.Outcome)
	case !fullCommitRE.MatchString(rec.Commit):
		return refuse(KindUnprocessable, "NoCommit", "record %s names no commit: it was applied from a local folder, or before records kept commits, so there is no tree to go back to; nothing was committed", id)
	}
	return nil
}

// envRollbackPaths are the repository paths an environment rollback sets
// back: env's source folder; for a chart folder (source.helm), the
// environment's own values files (source.helm.valueFiles) outside it,
// where its versions are written; and its catalog when the repository
// holds it outside that folder. A chart folder other environments render
// too is set back with the rest: if it changed since the record, the
// check that a write stays in its environment refuses the rollback,
// naming them.
func envRollbackPaths(env *envconfig.Environment) ([]string, error) {
	dir := strings.TrimSuffix(envDir(env), "/")
	if dir == "." || dir == "" || strings.HasPrefix(dir, "../") {
		return nil, refuse(KindUnprocessable, "EditError", "environment %s renders the repository's root (source.path %q): a rollback of its folder would set the whole repository back; roll back in the repository instead, nothing was committed", env.Name, env.Source.Path)
	}
	paths := []string{dir}
	if h := env.Source.Helm; h != nil {
		for _, vf := range h.ValueFiles {
			p := path.Clean(path.Join(dir, vf))
			if p == "." || p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(p) || strings.HasPrefix(dir+"/", p+"/") {
				return nil, refuse(KindUnprocessable, "EditError", "environment %s's values file %q is outside the repository or holds its chart folder: nothing was committed", env.Name, textfmt.Cut(vf, 200))
			}
			if !inEnv(env, p) && !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	if p, ok := env.CatalogInRepo(); ok && !inEnv(env, p) {
		paths = append(paths, p)
	}
	return paths, nil
}

// EnvRollback sets environment req.Env back to the state its apply
// record req.To applied, through its repository: one write-back commit
// (never forced) that sets the source folder (and the catalog file of
// the repository) to their tree at the record's commit, checked before
// the push to render, and to leave every other environment of the
// repository as it was; then, unless the commit went to a review branch
// (writeBack.mode branch, a protected environment), the run that plans
// and applies it (envrun.Deploy, trigger rollback). A freeze refuses it
// before anything is committed. The rollback is recorded.
func (s *Service) EnvRollback(ctx context.Context, req EnvRollbackRequest) (EnvRollbackResult, error) {
	res, err := s.envRollback(ctx, req)
	rec := audit.Record{Time: s.opts.Now(), Actor: req.Who.Actor, Verb: audit.VerbRollback, Cluster: req.Cluster,
		Environment: req.Env.Name, Namespace: req.Env.Namespace, Outcome: audit.OutcomeSucceeded, Blockers: []string{}}
	if req.BreakGlass != nil && res.Override != nil {
		rec.BreakGlass = req.BreakGlass.Reason
	}
	var e *Error
	switch {
	case err == nil && res.NoChange:
		return res, nil // nothing written: nothing to record
	case err == nil:
		rec.Commit = res.Commit.SHA
		rec.Message = fmt.Sprintf("to record %s (commit %s): committed on %s", req.To, textfmt.ShortSHA(res.RecordCommit), res.Commit.Branch)
	case errors.As(err, &e) && e.Kind != KindInternal && e.Kind != KindUpstream && e.Kind != KindUnavailable:
		rec.Outcome, rec.Message = audit.OutcomeRefused, e.Public
	default:
		rec.Outcome, rec.Message = audit.OutcomeFailed, PublicOf(err, "the rollback of environment "+req.Env.Name+" failed: see the server log")
	}
	s.record(ctx, rec)
	return res, err
}

func (s *Service) envRollback(ctx context.Context, req EnvRollbackRequest) (EnvRollbackResult, error) {
	env := req.Env
	res := EnvRollbackResult{Environment: env.Name, Record: req.To}
	if s.opts.Records == nil {
		return res, refuse(KindUnavailable, "NoHistory", "the audit records are not configured: there is no record to roll back to")
	}
	wpath := DecideWrite(env)
	if wpath == WriteRefused {
		return res, refuse(KindConflict, "NoWriteBack",
			"environment %s has no writeBack: configure it (docs/gitops.md) so a rollback can commit to its repository; nothing was written", env.Name)
	}
	var rec audit.Record
	var readErr error
	if audit.ValidID(req.To) {
		rec, readErr = s.opts.Records.Get(ctx, req.To)
	}
	if err := EnvRollbackRecord(env.Name, req.To, rec, readErr); err != nil {
		return res, err
	}
	res.RecordCommit = rec.Commit
	paths, err := envRollbackPaths(env)
	if err != nil {
		return res, err
	}
	res.Paths = paths
	if wpath == WriteCommitApply && s.opts.Freezes != nil {
		// Refused in a freeze before anything is committed; envrun asks
		// again before its run applies.
		o, err := s.opts.Freezes.Check(ctx, freeze.Rollback, req.FreezeTarget, req.BreakGlass)
		if err != nil {
			return res, FreezeError(err)
		}
		res.Override = o
	}
	branch, tok, err := credentials(env)
	if err != nil {
		return res, err
	}
	restores := make([]writeback.Restore, len(paths))
	for i, p := range paths {
		restores[i] = writeback.Restore{Path: p, Commit: rec.Commit}
	}
	var hookErr error
	to := req.To + " (" + textfmt.ShortSHA(rec.Commit) + ")"
	wreq := writeback.Request{
		RepoURL: env.Source.Repo, Branch: branch, Mode: env.WriteBack.Mode, Auth: tok,
		Author:  writeback.RenderAuthor(env.WriteBack.Author, req.Who.Actor),
		Message: writeback.Message("rollback", env.Name, "", "record "+to, req.Who.Actor, req.Reason),
		Restore: restores,
		Detail: func() []string {
			return []string{fmt.Sprintf("Sets %s back to commit %s, which record %s applied (%s by %s).",
				strings.Join(paths, " and "), rec.Commit, req.To, rec.Time.UTC().Format("2006-01-02 15:04 UTC"), ActorText(rec.Actor))}
		},
		Check: func(ctx context.Context, tree fs.FS) error {
			if _, err := renderEdited(ctx, env, tree); err != nil {
				hookErr = err
				return err
			}
			return nil
		},
		Action: "rollback", App: env.Name, Version: req.To,
		Limits: writeback.EnvLimits(env),
	}
	s.confine(ctx, env, &wreq, &hookErr)
	wres, err := s.commit(ctx, env.Name, wreq, &hookErr)
	var re *writeback.RestoreError
	if errors.As(err, &re) {
		return res, &Error{Kind: KindUnprocessable, Reason: "EditError", Err: err, Public: fmt.Sprintf(
			"commit %s of record %s does not hold %s (%s): nothing was pushed", textfmt.ShortSHA(rec.Commit), req.To, path.Clean(re.Path), re.Reason)}
	}
	if err != nil {
		return res, err
	}
	res.Commit, res.NoChange = commitOf(wres), wres.NoChange
	if wpath != WriteCommitApply || wres.NoChange {
		return res, nil
	}
	res.Run, res.RunError, err = s.deployCommit(env, envrun.DeployRequest{User: req.Who.Actor.String(), Actor: req.Who.Actor, Trigger: envrun.TriggerRollback,
		Commit: wres.SHA, BreakGlass: req.BreakGlass})
	return res, err
}

// deployCommit starts the run that plans and applies a pushed commit of
// env: a run already going, or a freeze that started after the check, is
// said in the run error (the commit stays pushed).
func (s *Service) deployCommit(env *envconfig.Environment, d envrun.DeployRequest) (*envrun.Run, string, error) {
	run, err := s.opts.Runs.Deploy(env.Name, d)
	var fe *Error
	switch {
	case errors.Is(err, envrun.ErrBusy):
		return nil, "the commit is pushed, but a plan or apply of " + env.Name + " is already running: plan and apply it from the environment page once that run ends", nil
	case errors.As(FreezeError(err), &fe) && fe.Reason == ReasonFrozen:
		// A freeze that started between the check and the run.
		return nil, "the commit is pushed, but " + fe.Public, nil
	case err != nil:
		return nil, "", err
	}
	return run, "", nil
}
