package handlers

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/release"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/writeback"
)

// GitCommitter writes a version change to a manifest repository
// (implemented by writeback.Commit; Options.GitCommit).
type GitCommitter func(ctx context.Context, req writeback.Request) (writeback.Result, error)

// writePath is how a rollback of an App reaches its desired state.
type writePath int

const (
	// writePatch patches the live App: no environment renders it, its
	// live CR is its only source.
	writePatch writePath = iota
	// writeRefused: an environment renders the App but has no writeBack;
	// a patch would be undone by its next apply.
	writeRefused
	// writeCommitApply commits to the environment's branch, then plans
	// and applies it (envrun.Deploy).
	writeCommitApply
	// writeCommitOnly pushes a review branch (mode branch, or a protected
	// environment): the environment's branch, and so its target, is
	// unchanged; nothing is planned or applied.
	writeCommitOnly
)

// decideWrite is the one decision of where a rollback goes, given the
// environment that renders the App (nil: none).
func decideWrite(env *deployplan.Environment) writePath {
	switch {
	case env == nil:
		return writePatch
	case env.WriteBack == nil:
		return writeRefused
	case env.Protected || env.WriteBack.Mode == writeback.ModeBranch:
		return writeCommitOnly
	}
	return writeCommitApply
}

// gitRendered is an App an environment renders from its manifests.
type gitRendered struct {
	env     *deployplan.Environment
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

// noWriteBackRefusal is the answer to a rollback of an App whose
// environment has no writeBack.
func noWriteBackRefusal(env, namespace, name string) *httpError {
	return &httpError{Status: http.StatusConflict, Reason: "NoWriteBack", Public: fmt.Sprintf(
		"environment %s renders %s/%s from git; a rollback of the live object would be undone by the next apply: configure writeBack for environment %s (docs/gitops.md), or roll back in the repository",
		env, namespace, name, env)}
}

// commitJSON is a write-back commit in an answer.
type commitJSON struct {
	SHA        string `json:"sha"`
	Short      string `json:"short"`
	Message    string `json:"message"`
	Branch     string `json:"branch"`
	CompareURL string `json:"compareURL,omitempty"`
	NoChange   bool   `json:"noChange"`
}

// runJSON is the run a write-back started.
type runJSON struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

func commitOf(res writeback.Result) *commitJSON {
	return &commitJSON{SHA: res.SHA, Short: textfmt.ShortSHA(res.SHA), Message: res.Message, Branch: res.Branch, CompareURL: res.CompareURL, NoChange: res.NoChange}
}

func runOf(run *envrun.Run) *runJSON {
	return &runJSON{ID: run.ID, URL: paths.EnvRun(run.Env, run.ID)}
}

// gitOutcome is what a write through git did: the commit, and the run that
// applies it (nil in writeCommitOnly, or when it could not start: RunError
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

// gitRollback commits App a's version change to its environment's
// repository and, unless the commit went to a review branch, starts the
// run that plans and applies it. The App's history gates the version as
// for a CR patch.
func (s *Server) gitRollback(ctx context.Context, a appRef, g *gitRendered, version, reason string, id auth.Identity) (release.Result, gitOutcome, error) {
	res := release.Result{App: a.Name, Namespace: a.Namespace, To: version}
	row, _ := a.c.View.Row(a.Namespace, a.Name)
	res.From = row.Version
	history, err := historyVersions(a)
	if err != nil {
		return res, gitOutcome{}, releaseError(err)
	}
	if err := gitRollbackGate(g.env, version, history); err != nil {
		return res, gitOutcome{}, releaseError(err)
	}
	image, _, _ := unstructured.NestedString(g.desired.Object.Object, "spec", "image")
	if image == "" {
		return res, gitOutcome{}, &httpError{Status: http.StatusUnprocessableEntity, Reason: "EditError",
			Public: fmt.Sprintf("environment %s renders %s %s without spec.image: there is no image to roll back in the repository", g.env.Name, a.c.AppKind, a.Name)}
	}
	if decideWrite(g.env) == writeCommitApply {
		// Refused in a freeze before anything is committed; envrun asks
		// again before its run applies.
		t := s.appTarget(a)
		t.Environment = g.env.Name // the environment that renders it, as envrun's check sees it
		if err := s.checkFreeze(ctx, freeze.Rollback, t); err != nil {
			return res, gitOutcome{}, err
		}
	}
	repo := appcr.ParseImageRef(image).Repository
	wb := g.env.WriteBack
	branch, err := g.env.WriteBackBranch()
	if err != nil {
		return res, gitOutcome{}, &httpError{Status: http.StatusConflict, Reason: "NoWriteBack", Public: "environment " + g.env.Name + ": " + err.Error()}
	}
	tok, err := g.env.WriteBackToken()
	if err != nil {
		return res, gitOutcome{}, &httpError{Status: http.StatusBadGateway, Reason: "WriteBackCredentials",
			Public: "deploy-web could not read the write-back credentials of environment " + g.env.Name + ": see the server log; nothing was committed", Err: err}
	}
	change := writeback.ImageChange{Dir: g.env.Source.Path, Kind: a.c.AppKind, Name: a.Name, Repository: repo, Tag: version}
	maxFile := g.env.WriteBackLimits().MaxFileBytes
	actor := writeback.Actor{Name: id.Name, Email: id.Email, Subject: id.Subject}
	var (
		hookErr error
		// move is the last Plan's catalog move (a commit-mode rollback).
		move      *catalogMove
		commitTag = commitTagRollback(g.env, version)
	)
	req := writeback.Request{
		RepoURL: g.env.Source.Repo, Branch: branch, Mode: wb.Mode, Auth: tok,
		Author:  wb.Author.Render(actor),
		Message: writeback.Message("rollback", a.Namespace+"/"+a.Name, res.From, version, id.Email, id.Subject, reason),
		// writeback.Commit returns its own typed errors only (redacted):
		// the hooks keep theirs to answer with.
		Plan: func(tree fs.FS) ([]writeback.Edit, error) {
			move = nil
			if commitTag {
				mv, err := planCatalogMove(ctx, tree, g.env, branch, a.c.AppGroup, a.c.AppKind, a.Name, version, maxFile)
				if err != nil {
					hookErr = err
					return nil, err
				}
				move = mv
				return mv.edits, nil
			}
			edits, err := writeback.Locate(tree, change, maxFile)
			if err != nil {
				hookErr = &locateError{err}
				return nil, hookErr
			}
			if err := checkCatalogAdmits(tree, g.env, a.c.AppKind, a.Name, appcr.WithTag(image, version)); err != nil {
				hookErr = err
				return nil, err
			}
			return edits, nil
		},
		Check: func(ctx context.Context, tree fs.FS) error {
			var err error
			if move != nil {
				err = checkCatalogMove(ctx, g.env, tree, a.c.AppGroup, a.c.AppKind, move)
			} else {
				err = checkRenderedImage(ctx, g.env, tree, a.c.AppGroup, a.c.AppKind, a.Name, repo, version)
			}
			if err != nil {
				hookErr = err
				return err
			}
			return nil
		},
		Detail: func() []string {
			if move == nil {
				return nil
			}
			return move.detail()
		},
		Action: "rollback", App: a.Name, Version: version,
		Limits: g.env.WriteBackLimits(),
	}
	if commitTag {
		req.History = catalogHistoryCommits
	}
	wres, err := s.commitThroughGit(ctx, g.env.Name, req, &hookErr)
	if err != nil {
		return res, gitOutcome{}, err
	}
	res.Changed = !wres.NoChange
	out := gitOutcome{Environment: g.env.Name, Commit: commitOf(wres)}
	if move != nil {
		out.Catalog, out.Moved = move.json()
	}
	if decideWrite(g.env) != writeCommitApply {
		return res, out, nil
	}
	run, err := s.opts.Environments.Deploy(g.env.Name, envrun.DeployRequest{User: auditName(id), Actor: auditActor(ctx), Trigger: envrun.TriggerRollback, Commit: wres.SHA,
		BreakGlass: breakGlassOf(ctx).bg})
	var he *httpError
	switch {
	case errors.Is(err, envrun.ErrBusy):
		out.RunError = "the commit is pushed, but a plan or apply of " + g.env.Name + " is already running: plan and apply it from the environment page once that run ends"
	case errors.As(freezeError(err), &he) && he.Reason == reasonFrozen:
		// A freeze that started between the check and the run.
		out.RunError = "the commit is pushed, but " + he.Public
	case err != nil:
		return res, out, err
	default:
		out.Run = runOf(run)
	}
	return res, out, nil
}

// commitThroughGit runs one write-back of environment env
// (Options.GitCommit, default writeback.Commit). A refusal of the
// request's Plan or Check hook, which they keep in *hookErr, is answered
// in its own words (writeback.Commit returns its own typed errors only,
// redacted); any failure is mapped by writeBackError.
func (s *Server) commitThroughGit(ctx context.Context, env string, req writeback.Request, hookErr *error) (writeback.Result, error) {
	commit := s.opts.GitCommit
	if commit == nil {
		commit = writeback.Commit
	}
	wres, err := commit(ctx, req)
	if err != nil {
		if *hookErr != nil {
			err = *hookErr
		}
		return wres, writeBackError(env, err)
	}
	return wres, nil
}

// locateError is Locate's refusal to find the edit (the App is in no file,
// a patch would override the edit): the repository's layout, not a
// failure of the server.
type locateError struct{ err error }

func (e *locateError) Error() string { return e.err.Error() }
func (e *locateError) Unwrap() error { return e.err }

// checkError is an edited tree that does not render the App at the
// target version.
type checkError struct{ msg string }

func (e *checkError) Error() string { return e.msg }

// checkRenderedImage renders the edited tree as the environment would and
// checks that the App's spec.image is repo at tag: the edit Locate chose
// reaches what is applied.
func checkRenderedImage(ctx context.Context, env *deployplan.Environment, tree fs.FS, group, kind, name, repo, tag string) error {
	return checkRenderedRef(ctx, env, tree, group, kind, name, appcr.ImageRef{Repository: repo, Tag: tag})
}

// checkRenderedRef is checkRenderedImage for a whole reference: the App's
// rendered spec.image must be want's repository, tag and digest exactly.
func checkRenderedRef(ctx context.Context, env *deployplan.Environment, tree fs.FS, group, kind, name string, want appcr.ImageRef) error {
	objs, err := renderEdited(ctx, env, tree)
	if err != nil {
		return err
	}
	return checkRenderedObjs(env, objs, group, kind, name, want)
}

// renderEdited renders an edited tree for the checks before a push; a
// tree that does not render is a checkError.
func renderEdited(ctx context.Context, env *deployplan.Environment, tree fs.FS) ([]*unstructured.Unstructured, error) {
	objs, err := deployplan.RenderFS(ctx, env, tree)
	if err != nil {
		return nil, &checkError{fmt.Sprintf("the edited repository does not render (%v): nothing was pushed", err)}
	}
	return objs, nil
}

// checkRenderedObjs is checkRenderedRef on the objects of a render.
func checkRenderedObjs(env *deployplan.Environment, objs []*unstructured.Unstructured, group, kind, name string, want appcr.ImageRef) error {
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if gvk.Group != group || gvk.Kind != kind || o.GetName() != name {
			continue
		}
		img, _, _ := unstructured.NestedString(o.Object, "spec", "image")
		ref := appcr.ParseImageRef(img)
		if ref != want {
			return &checkError{fmt.Sprintf("after the edit, %s renders %s %s with image %q, not %s (a patch or another layer sets it): nothing was pushed", env.Source.Path, kind, name, img, want.String())}
		}
		return nil
	}
	return &checkError{fmt.Sprintf("after the edit, %s no longer renders %s %s: nothing was pushed", env.Source.Path, kind, name)}
}

// writeBackError maps a write-back's failure to an answer. Nothing was
// pushed in any of them.
func writeBackError(env string, err error) *httpError {
	var (
		authErr  *writeback.AuthError
		refused  *writeback.RefusedError
		conflict *writeback.ConflictError
		exists   *writeback.BranchExistsError
		edit     *writeback.EditError
		large    *writeback.TooLargeError
		loc      *locateError
		chk      *checkError
		shared   *sharedFileError
		catalog  *catalogError
	)
	he := &httpError{Status: http.StatusBadGateway, Reason: "WriteBackFailed", Err: err,
		Public: "the commit to environment " + env + "'s repository failed: see the server log; nothing was pushed or applied"}
	switch {
	case errors.As(err, &authErr):
		he.Reason, he.Public = "WriteBackAuth", fmt.Sprintf("the repository refused deploy-web's credentials (HTTP %d): check writeBack.credentials of environment %s; nothing was pushed or applied", authErr.Status, env)
	case errors.As(err, &refused):
		he.Status, he.Reason = http.StatusConflict, "PushRefused"
		he.Public = fmt.Sprintf("the repository refused the push to %s (%s)", refused.Branch, refused.Status)
		if refused.Remote != "" {
			he.Public += ": the server says: " + refused.Remote
		}
		he.Public += "; nothing was applied. A protected branch takes writeBack.mode: branch"
	case errors.As(err, &conflict):
		he.Status, he.Reason = http.StatusConflict, "PushConflict"
		he.Public = fmt.Sprintf("branch %s moved during the push twice: nothing was forced or applied; try again once the other writer is done", conflict.Branch)
	case errors.As(err, &exists):
		he.Status, he.Reason = http.StatusConflict, "BranchExists"
		he.Public = fmt.Sprintf("the review branch %s already exists: merge or delete it, then try again; nothing was pushed", exists.Branch)
	case errors.As(err, &edit):
		he.Status, he.Reason = http.StatusUnprocessableEntity, "EditError"
		he.Public = fmt.Sprintf("the edit of %s cannot be made: %s; nothing was pushed", edit.File, edit.Reason)
	case errors.As(err, &large):
		he.Status, he.Reason = http.StatusUnprocessableEntity, "TooLarge"
		he.Public = "the repository is over a write-back limit: " + strings.TrimPrefix(large.Error(), "writeback: ") + "; nothing was pushed"
	case errors.As(err, &loc):
		he.Status, he.Reason = http.StatusUnprocessableEntity, "EditError"
		he.Public = strings.TrimPrefix(loc.Error(), "writeback: ") + "; nothing was pushed"
	case errors.As(err, &chk):
		he.Status, he.Reason = http.StatusUnprocessableEntity, "EditError"
		he.Public = chk.msg
	case errors.As(err, &catalog):
		he.Status, he.Reason = http.StatusUnprocessableEntity, "CatalogRefuses"
		he.Public = catalog.msg
	case errors.As(err, &shared):
		he.Status, he.Reason = http.StatusUnprocessableEntity, "SharedFile"
		he.Public = shared.msg
	}
	return he
}
