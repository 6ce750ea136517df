package writeback

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// Request is one write-back: edits to commit on a branch of a repository.
type Request struct {
	// RepoURL is the repository (https://..., or file:///path); it must
	// not hold credentials.
	RepoURL string
	// Branch is the branch the edits are made on: pushed to in ModePush,
	// the base of the review branch in ModeBranch.
	Branch string
	Mode   envconfig.Mode
	// Auth is the token (Credentials.Token); empty for anonymous or
	// file:// access.
	Auth Token
	// Author is the commit's author and committer (AuthorTemplate.Render).
	Author Identity
	// Message is the commit message (Message formats one).
	Message string
	// Edits are the changes, applied in order (two edits of one file
	// apply one after the other).
	Edits []Edit
	// Plan, when set, is called on each fetched tree (the first one and,
	// after a rejected push, the fresh one) and returns more edits,
	// applied after Edits: Locate's choice depends on the tree. With
	// History set, the tree is also a FileHistory.
	Plan func(repo fs.FS) ([]Edit, error)
	// History, when > 0, fetches the branch's last History commits (at
	// most MaxHistory) instead of its head alone, so Plan may walk a
	// file's history (FileHistory); the pack caps of Limits still apply.
	History int
	// Restore, when set, sets paths of the branch back to their state at
	// earlier commits (after Edits and Plan's edits): a folder's files
	// are added, changed and removed; nothing outside the paths changes.
	Restore []Restore
	// Detail, when set, is called after Plan on each attempt and its
	// lines are added to Message as a paragraph: what Plan decided that
	// the message could not say beforehand (the Apps a catalog move takes
	// along). Each line is made one line and capped, as Message's fields.
	Detail func() []string
	// Check, when set, is called with the edited tree before the commit
	// is pushed (a render of the environment, say); an error stops the
	// write-back with nothing pushed.
	Check func(ctx context.Context, repo fs.FS) error
	// Action, App and Version name the review branch of ModeBranch
	// (ReviewBranch).
	Action, App, Version string
	// Limits bound the fetch and the edits.
	Limits Limits
}

// Result is what a write-back did.
type Result struct {
	// SHA is the pushed commit; with NoChange, the branch head.
	SHA string
	// Parent is the commit the edits were made on.
	Parent string
	// Branch is the branch pushed to (the review branch in ModeBranch).
	Branch string
	// CompareURL is the forge's compare page of a review branch, "" for
	// ModePush or an unknown forge.
	CompareURL string
	// Message is the commit message.
	Message string
	// Files are the files the commit changes.
	Files []string
	// NoChange says the branch already holds the edits' result: nothing
	// was committed or pushed.
	NoChange bool
	// Retried says the first push was rejected because the branch moved,
	// and the edits were re-applied on its new head.
	Retried bool
}

// maxMessageBytes caps a commit message.
const maxMessageBytes = 16 << 10

// Commit fetches req.Branch, applies the edits, commits and pushes without
// force (see the package documentation). A push rejected because the
// branch moved is retried once on the new head. Every error is free of the
// token. The temporary clone is removed before Commit returns.
func Commit(ctx context.Context, req Request) (Result, error) {
	if err := checkRequest(req); err != nil {
		return Result{}, err
	}
	rem, err := newRemote(req.RepoURL, req.Auth, req.Limits)
	if err != nil {
		return Result{}, err
	}
	timeout := req.Limits.timeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Every step honours ctx: each HTTP request carries it (and the
	// client's own deadlines), a file:// repository is local disk.
	res, err := commit(ctx, rem, req)
	switch {
	case err == nil:
		return res, nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Result{}, fmt.Errorf("writeback: %s: no complete answer within %s (Limits.Timeout): nothing is known to be pushed; look at the branch before trying again: %w", rem.url, timeout, context.DeadlineExceeded)
	}
	return Result{}, redactError(req.Auth, err)
}

func checkRequest(req Request) error {
	if err := envconfig.CheckBranchName(req.Branch); err != nil {
		return fmt.Errorf("writeback: branch: %v", err)
	}
	switch req.Mode {
	case envconfig.ModePush, envconfig.ModeBranch:
	default:
		return fmt.Errorf("writeback: mode %q: want push or branch", req.Mode)
	}
	if oneLine(req.Message, maxSubjectRunes) == "" {
		return errors.New("writeback: the commit message is empty (writeback.Message formats one)")
	}
	if strings.ContainsRune(req.Message, 0) {
		return errors.New("writeback: the commit message holds a NUL byte")
	}
	if len(req.Message) > maxMessageBytes {
		return fmt.Errorf("writeback: the commit message has %d bytes, more than %d", len(req.Message), maxMessageBytes)
	}
	if len(req.Edits) == 0 && req.Plan == nil && len(req.Restore) == 0 {
		return errors.New("writeback: no edit")
	}
	for _, r := range req.Restore {
		if err := checkRestore(r); err != nil {
			return err
		}
	}
	if req.History < 0 || req.History > MaxHistory {
		return fmt.Errorf("writeback: history: %d commits, want 0 to %d", req.History, MaxHistory)
	}
	return nil
}

// commit runs the attempts: a rejection because the branch moved gets one
// more, on a fresh fetch.
func commit(ctx context.Context, rem *remote, req Request) (Result, error) {
	tmp, err := os.MkdirTemp("", "deploy-web-writeback-*")
	if err != nil {
		return Result{}, fmt.Errorf("writeback: temporary clone: %w", err)
	}
	defer os.RemoveAll(tmp)
	st := filesystem.NewStorage(osfs.New(tmp), cache.NewObjectLRUDefault())

	target := req.Branch
	if req.Mode == envconfig.ModeBranch {
		if target, err = ReviewBranch(req.Action, req.App, req.Version); err != nil {
			return Result{}, err
		}
	}
	// Whoever built it, the message is committed without format
	// characters (bidi controls, zero-width): textfmt.Clean, lines kept.
	msg := textfmt.Clean(req.Message, true)
	if msg[len(msg)-1] != '\n' {
		msg += "\n"
	}
	res, err := commitOnce(ctx, rem, st, tmp, req, target, msg)
	var mv *moved
	if !errors.As(err, &mv) {
		return res, err
	}
	// The branch moved: once more on its new head.
	res, err = commitOnce(ctx, rem, st, tmp, req, target, msg)
	if errors.As(err, &mv) {
		return Result{}, &ConflictError{Repo: rem.url, Branch: target, Reason: mv.reason}
	}
	res.Retried = true
	return res, err
}

// moved is a push rejected because the target branch is no longer at the
// commit the edits were made on.
type moved struct{ reason string }

func (m *moved) Error() string { return "the branch moved: " + m.reason }

// commitOnce fetches the branch head, applies the edits, commits and
// pushes.
func commitOnce(ctx context.Context, rem *remote, st *filesystem.Storage, tmp string, req Request, target, msg string) (Result, error) {
	lim := req.Limits
	head, err := fetchBranch(ctx, rem, st, req.Branch, max(req.History, 1), lim)
	if err != nil {
		return Result{}, err
	}
	base, err := object.GetCommit(st, head)
	if err != nil {
		return Result{}, fmt.Errorf("writeback: %s: commit %s: %w", rem.url, head, err)
	}
	baseTree, err := base.Tree()
	if err != nil {
		return Result{}, fmt.Errorf("writeback: %s: tree of %s: %w", rem.url, head, err)
	}
	edits := append([]Edit{}, req.Edits...)
	if req.Plan != nil {
		more, err := req.Plan(&treeFS{st: st, root: baseTree, maxFile: lim.maxFileBytes(), commit: base})
		if err != nil {
			return Result{}, err
		}
		edits = append(edits, more...)
	}
	if req.Detail != nil {
		msg = withDetail(msg, req.Detail())
	}
	if len(edits) == 0 && len(req.Restore) == 0 {
		return Result{}, errors.New("writeback: no edit")
	}
	ed, err := applyEdits(st, baseTree, edits, lim.maxFileBytes())
	if err != nil {
		return Result{}, err
	}
	if len(req.Restore) > 0 {
		for _, r := range req.Restore {
			if err := fetchCommit(ctx, rem, st, plumbing.NewHash(r.Commit), lim); err != nil {
				return Result{}, err
			}
		}
		root, trees, err := applyRestores(st, ed.root, req.Restore)
		if err != nil {
			return Result{}, err
		}
		ed.root, ed.objects = root, append(ed.objects, trees...)
	}
	res := Result{Parent: head.String(), Branch: target}
	newTree, err := object.GetTree(st, ed.root)
	if err != nil {
		return Result{}, fmt.Errorf("writeback: edited tree: %w", err)
	}
	if len(req.Restore) > 0 {
		// The files a restore changed, beside the edits' own.
		all, err := changedFiles(baseTree, newTree)
		if err != nil {
			return Result{}, err
		}
		for _, f := range all {
			if underRestore(req.Restore, f) && !slices.Contains(ed.files, f) {
				ed.files = append(ed.files, f)
			}
		}
	}
	if len(ed.files) == 0 {
		res.SHA, res.NoChange, res.Branch = head.String(), true, req.Branch
		return res, nil
	}
	if err := onlyFiles(baseTree, newTree, ed.files, req.Restore); err != nil {
		return Result{}, err
	}
	if req.Check != nil {
		if err := req.Check(ctx, &treeFS{st: st, root: newTree, maxFile: lim.maxFileBytes()}); err != nil {
			return Result{}, err
		}
	}
	// Sanitised again: an Identity not made by AuthorTemplate.Render must
	// not break the author line either.
	sig := object.Signature{Name: identityPart(req.Author.Name), Email: identityPart(req.Author.Email), When: time.Now()}
	if sig.Name == "" || sig.Email == "" {
		sig.Name, sig.Email = fallbackName, fallbackEmail
	}
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: ed.root, ParentHashes: []plumbing.Hash{head}}
	obj := st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return Result{}, fmt.Errorf("writeback: encode the commit: %w", err)
	}
	sha, err := st.SetEncodedObject(obj)
	if err != nil {
		return Result{}, fmt.Errorf("writeback: store the commit: %w", err)
	}
	old := head
	if req.Mode == envconfig.ModeBranch {
		old = plumbing.ZeroHash
	}
	if err := push(ctx, rem, st, target, old, sha, append(ed.objects, sha), lim); err != nil {
		return Result{}, err
	}
	res.SHA, res.Message, res.Files = sha.String(), msg, ed.files
	if req.Mode == envconfig.ModeBranch {
		res.CompareURL = CompareURL(rem.url, req.Branch, target)
	}
	return res, nil
}

// onlyFiles checks that the edited tree differs from its parent in files
// alone, and only in those the edits name: the rule that nothing else is
// ever written, checked on the result rather than trusted.
func onlyFiles(from, to *object.Tree, files []string, restores []Restore) error {
	changes, err := object.DiffTree(from, to)
	if err != nil {
		return fmt.Errorf("writeback: compare the edited tree: %w", err)
	}
	named := map[string]bool{}
	for _, f := range files {
		named[f] = true
	}
	for _, ch := range changes {
		name := ch.To.Name
		if name == "" {
			name = ch.From.Name
		}
		// A restore adds and removes files under its path; an edit
		// changes a file in place.
		inPlace := ch.From.Name == ch.To.Name || underRestore(restores, name)
		if !inPlace || !named[name] {
			return fmt.Errorf("writeback: the edited tree changes %q, which no edit names: nothing was pushed", ch.From.Name+ch.To.Name)
		}
	}
	if len(changes) != len(files) {
		return fmt.Errorf("writeback: the edited tree changes %d files, the edits %d: nothing was pushed", len(changes), len(files))
	}
	return nil
}

// redactError is err with the token's secret removed from its text. A
// typed error of this package stays reachable with errors.As, as a copy
// whose text fields are redacted too, and a context error with errors.Is;
// nothing else of err is.
func redactError(tok Token, err error) error {
	r := &redactedError{msg: tok.redact(err.Error())}
	var (
		edit     *EditError
		auth     *AuthError
		refused  *RefusedError
		conflict *ConflictError
		exists   *BranchExistsError
		large    *TooLargeError
		restore  *RestoreError
	)
	switch {
	case errors.As(err, &edit):
		c := *edit
		c.File, c.Reason = tok.redact(c.File), tok.redact(c.Reason)
		r.typed = &c
	case errors.As(err, &auth):
		c := *auth
		r.typed = &c
	case errors.As(err, &refused):
		c := *refused
		c.Status, c.Remote = tok.redact(c.Status), tok.redact(c.Remote)
		r.typed = &c
	case errors.As(err, &conflict):
		c := *conflict
		c.Reason = tok.redact(c.Reason)
		r.typed = &c
	case errors.As(err, &exists):
		c := *exists
		r.typed = &c
	case errors.As(err, &large):
		c := *large
		c.What = tok.redact(c.What)
		r.typed = &c
	case errors.As(err, &restore):
		c := *restore
		c.Reason = tok.redact(c.Reason)
		r.typed = &c
	case errors.Is(err, context.DeadlineExceeded):
		r.typed = context.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		r.typed = context.Canceled
	}
	return r
}

type redactedError struct {
	msg   string
	typed error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.typed }
