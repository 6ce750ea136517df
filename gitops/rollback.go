package gitops

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/release"
	"github.com/hanzoai/deploy-web/writeback"
)

// WritePath is how a rollback of an App reaches its desired state.
type WritePath int

const (
	// WritePatch patches the live App: no environment renders it, its
	// live CR is its only source.
	WritePatch WritePath = iota
	// WriteRefused: an environment renders the App but has no writeBack;
	// a patch would be undone by its next apply.
	WriteRefused
	// WriteCommitApply commits to the environment's branch, then plans
	// and applies it (envrun.Deploy).
	WriteCommitApply
	// WriteCommitOnly pushes a review branch (mode branch, or a protected
	// environment): the environment's branch, and so its target, is
	// unchanged; nothing is planned or applied.
	WriteCommitOnly
)

// DecideWrite is the one decision of where a rollback goes, given the
// environment that renders the App (nil: none).
func DecideWrite(env *envconfig.Environment) WritePath {
	switch {
	case env == nil:
		return WritePatch
	case env.WriteBack == nil:
		return WriteRefused
	case env.Protected || env.WriteBack.Mode == envconfig.ModeBranch:
		return WriteCommitOnly
	}
	return WriteCommitApply
}

// NoWriteBack is the refusal of a rollback of App namespace/name, which
// environment env renders without a writeBack.
func NoWriteBack(env, namespace, name string) *Error {
	return refuse(KindConflict, "NoWriteBack",
		"environment %s renders %s/%s from git; a rollback of the live object would be undone by the next apply: configure writeBack for environment %s (docs/gitops.md), or roll back in the repository",
		env, namespace, name, env)
}

// App names an App resource: its group, kind, namespace and name.
type App struct {
	Group, Kind, Namespace, Name string
}

// RollbackRequest is a rollback of App to Version through the repository
// of Env, the environment that renders it.
type RollbackRequest struct {
	Env *envconfig.Environment
	App App
	// Desired is the App as Env renders it (its spec.image names the
	// image to roll back).
	Desired *unstructured.Unstructured
	// From is the version the App declares now; History the versions it
	// has run (the gate's).
	From    string
	History []string
	Version string
	// Reason goes into the commit message.
	Reason string
	Who    Person
	// FreezeTarget is where the freezes see the rollback; BreakGlass the
	// caller's request to roll back through a freeze (nil: none).
	FreezeTarget freeze.Target
	BreakGlass   *freeze.BreakGlass
	// MayApplyEnv is the roles' answer to "may Who apply the whole of
	// Env?": false narrows the run to App and its own objects.
	MayApplyEnv bool
	// MayRollback is the roles' answer to "may Who roll back App
	// namespace/name?", asked of every other App a catalog move changes
	// before anything is pushed (nil: no other App may move).
	MayRollback func(namespace, name string) bool
}

// RollbackResult is what a rollback through git did: the commit, and the
// run that applies it (nil in WriteCommitOnly, or when it could not
// start: RunError says why).
type RollbackResult struct {
	release.Result
	Environment string
	Commit      *Commit
	// Catalog and Moved are a commit-mode rollback's catalog move and the
	// Apps it moves (the one asked for among them); nil otherwise.
	Catalog  *CatalogChange
	Moved    []MovedApp
	Run      *envrun.Run
	RunError string
	// Override is the break-glass the freeze check granted (nil: none).
	Override *freeze.Override
}

// Rollback commits the App's version change to its environment's
// repository and, unless the commit went to a review branch, starts the
// run that plans and applies it. The App's history gates the version as
// for a CR patch; a freeze refuses it before anything is committed.
func (s *Service) Rollback(ctx context.Context, req RollbackRequest) (RollbackResult, error) {
	env, a := req.Env, req.App
	res := RollbackResult{Result: release.Result{App: a.Name, Namespace: a.Namespace, To: req.Version, From: req.From}}
	path := DecideWrite(env)
	if path == WriteRefused {
		return res, NoWriteBack(env.Name, a.Namespace, a.Name)
	}
	if err := RollbackGate(env, req.Version, req.History); err != nil {
		return res, err
	}
	image, _, _ := unstructured.NestedString(req.Desired.Object, "spec", "image")
	if image == "" {
		return res, refuse(KindUnprocessable, "EditError", "environment %s renders %s %s without spec.image: there is no image to roll back in the repository", env.Name, a.Kind, a.Name)
	}
	if path == WriteCommitApply && s.opts.Freezes != nil {
		// Refused in a freeze before anything is committed; envrun asks
		// again before its run applies.
		o, err := s.opts.Freezes.Check(ctx, freeze.Rollback, req.FreezeTarget, req.BreakGlass)
		if err != nil {
			return res, FreezeError(err)
		}
		res.Override = o
	}
	repo := appcr.ParseImageRef(image).Repository
	branch, tok, err := credentials(env)
	if err != nil {
		return res, err
	}
	change := writeback.ImageChange{Dir: env.Source.Path, Kind: a.Kind, Name: a.Name, Repository: repo, Tag: req.Version}
	maxFile := writeback.EnvLimits(env).MaxFileBytes
	var (
		hookErr error
		// move is the last Plan's catalog move (a commit-mode rollback).
		move      *catalogMove
		commitTag = CommitTagRollback(env, req.Version)
	)
	wreq := writeback.Request{
		RepoURL: env.Source.Repo, Branch: branch, Mode: env.WriteBack.Mode, Auth: tok,
		Author:  writeback.RenderAuthor(env.WriteBack.Author, req.Who.Actor),
		Message: writeback.Message("rollback", a.Namespace+"/"+a.Name, req.From, req.Version, req.Who.Actor, req.Reason),
		// writeback.Commit returns its own typed errors only (redacted):
		// the hooks keep theirs to answer with.
		Plan: func(tree fs.FS) ([]writeback.Edit, error) {
			move = nil
			if commitTag {
				mv, err := planCatalogMove(ctx, CatalogMoveRequest{Tree: tree, Env: env, Branch: branch, Group: a.Group, Kind: a.Kind, Name: a.Name, Version: req.Version, MaxFile: maxFile})
				if err == nil {
					err = mayMove(req, mv.Moved)
				}
				if err != nil {
					hookErr = err
					return nil, err
				}
				move = mv
				return mv.edits, nil
			}
			edits, err := versionEdits(ctx, tree, env, a.Group, change, maxFile)
			if err != nil {
				hookErr = err
				return nil, err
			}
			if err := checkCatalogAdmits(tree, env, a.Kind, a.Name, appcr.WithTag(image, req.Version)); err != nil {
				hookErr = err
				return nil, err
			}
			return edits, nil
		},
		Check: func(ctx context.Context, tree fs.FS) error {
			var err error
			if move != nil {
				err = checkCatalogMove(ctx, env, tree, a.Group, a.Kind, move)
			} else {
				err = checkRenderedImage(ctx, env, tree, a.Group, a.Kind, a.Name, repo, req.Version)
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
		Action: "rollback", App: a.Name, Version: req.Version,
		Limits: writeback.EnvLimits(env),
	}
	if commitTag {
		wreq.History = catalogHistoryCommits
	}
	s.confine(ctx, env, &wreq, &hookErr)
	wres, err := s.commit(ctx, env.Name, wreq, &hookErr)
	if err != nil {
		return res, err
	}
	res.Changed = !wres.NoChange
	res.Environment, res.Commit = env.Name, commitOf(wres)
	if move != nil {
		res.Catalog, res.Moved = move.change(), move.Moved
	}
	if path != WriteCommitApply {
		return res, nil
	}
	d := envrun.DeployRequest{User: req.Who.Actor.String(), Actor: req.Who.Actor, Trigger: envrun.TriggerRollback, Commit: wres.SHA,
		BreakGlass: req.BreakGlass}
	if !req.MayApplyEnv {
		// A write's reach is its author's role: the App and its own
		// objects only.
		d.Only, d.OnlyGroup, d.OnlyKind = a.Name, a.Group, a.Kind
	}
	res.Run, res.RunError, err = s.deployCommit(env, d)
	return res, err
}

// RollbackGate is the rollback gate of an App environment env renders
// (nil: none): a version the App has run, a clean semver, or in a
// CommitTagRollback a commit tag.
func RollbackGate(env *envconfig.Environment, version string, history []string) error {
	if env != nil && CommitTagRollback(env, version) {
		return release.InHistory(version, history)
	}
	return release.Gate(version, history)
}

// checkRenderedImage renders the edited tree as the environment would and
// checks that the App's spec.image is repo at tag: the edit Locate chose
// reaches what is applied.
func checkRenderedImage(ctx context.Context, env *envconfig.Environment, tree fs.FS, group, kind, name, repo, tag string) error {
	objs, err := renderEdited(ctx, env, tree)
	if err != nil {
		return err
	}
	return checkRenderedObjs(env, objs, group, kind, name, appcr.ImageRef{Repository: repo, Tag: tag})
}

// renderEdited renders an edited tree for the checks before a push; a
// tree that does not render is a checkError.
func renderEdited(ctx context.Context, env *envconfig.Environment, tree fs.FS) ([]*unstructured.Unstructured, error) {
	objs, err := deployplan.RenderFS(ctx, env, tree)
	if err != nil {
		return nil, &checkError{fmt.Sprintf("the edited repository does not render (%v): nothing was pushed", err)}
	}
	return objs, nil
}

// checkRenderedObjs checks the objects of a render: the App's rendered
// spec.image must be want's repository, tag and digest exactly.
func checkRenderedObjs(env *envconfig.Environment, objs []*unstructured.Unstructured, group, kind, name string, want appcr.ImageRef) error {
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

// mayMove refuses a catalog move that changes an App other than the one
// asked for which the caller may not roll back.
func mayMove(req RollbackRequest, moved []MovedApp) error {
	var denied []string
	for _, m := range moved {
		if m.Name == req.App.Name && m.Namespace == req.App.Namespace {
			continue
		}
		if req.MayRollback == nil || !req.MayRollback(m.Namespace, m.Name) {
			denied = append(denied, m.Namespace+"/"+m.Name)
		}
	}
	if len(denied) == 0 {
		return nil
	}
	return refuse(KindForbidden, "Forbidden", "the catalog move to commit %s also moves %s, which you may not roll back: nothing was pushed",
		req.Version, strings.Join(denied, ", "))
}
