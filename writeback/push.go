package writeback

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// maxRemoteMessage caps what is kept of the server's "remote:" lines.
const maxRemoteMessage = 2 << 10

// movedStatuses are the parts of a ref update's status that say the
// branch moved since it was read (git's receive-pack and forges): a
// rejection worth one retry on the new head.
var movedStatuses = []string{"non-fast-forward", "fetch first", "stale info", "failed to lock", "failed to update ref", "cannot lock ref", "reference has changed", "but expected"}

// push sends objs and updates ref refs/heads/branch from old (zero:
// create) to sha, never forced: a server whose branch is not at old
// rejects the update, which comes back as *moved.
func push(ctx context.Context, rem *remote, st *filesystem.Storage, branch string, old, sha plumbing.Hash, objs []plumbing.Hash, lim Limits) error {
	name := plumbing.NewBranchReferenceName(branch)
	if rem.local != "" {
		return pushLocal(rem, st, name, old, sha, objs)
	}
	fail := func(step string, err error) error {
		if s := statusOf(err); s != 0 {
			return &AuthError{Repo: rem.url, Status: s}
		}
		return fmt.Errorf("writeback: push to %s: %s: %w", rem.url, step, err)
	}
	sess, err := rem.tr.NewReceivePackSession(rem.ep, rem.auth)
	if err != nil {
		return fail("connect", err)
	}
	defer sess.Close()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return fail("read the references", err)
	}
	refs, err := ar.AllReferences()
	if err != nil {
		return fail("read the references", err)
	}
	if err := checkCurrent(rem, name, refs[name], old); err != nil {
		return err
	}
	req := packp.NewReferenceUpdateRequestFromCapabilities(ar.Capabilities)
	req.Commands = []*packp.Command{{Name: name, Old: old, New: sha}}
	progress := &capBuffer{max: maxRemoteMessage}
	req.Progress = progress
	switch {
	case ar.Capabilities.Supports(capability.Sideband64k):
		_ = req.Capabilities.Set(capability.Sideband64k)
	case ar.Capabilities.Supports(capability.Sideband):
		_ = req.Capabilities.Set(capability.Sideband)
	}
	var pack bytes.Buffer
	// Offset deltas when the server takes them, as go-git's own push.
	useRefDeltas := !ar.Capabilities.Supports(capability.OFSDelta)
	if _, err := packfile.NewEncoder(&pack, st, useRefDeltas).Encode(objs, 10); err != nil {
		return fail("pack", err)
	}
	req.Packfile = nopCloser{&pack}
	rs, err := sess.ReceivePack(ctx, req)
	if rs != nil {
		if rs.UnpackStatus != "ok" {
			return fmt.Errorf("writeback: push to %s: the server could not store the commit (unpack %s)", rem.url, oneLine(rs.UnpackStatus, maxFieldRunes))
		}
		for _, cs := range rs.CommandStatuses {
			if cs.Status == "ok" {
				continue
			}
			status := oneLine(cs.Status, maxFieldRunes)
			for _, m := range movedStatuses {
				if strings.Contains(cs.Status, m) {
					return &moved{reason: status}
				}
			}
			return &RefusedError{Repo: rem.url, Branch: branch, Status: status, Remote: progress.text()}
		}
	}
	if err != nil {
		return fail("send", err)
	}
	if rs == nil {
		return fmt.Errorf("writeback: push to %s: the server sent no report: look at branch %s before trying again", rem.url, branch)
	}
	return nil
}

// checkCurrent compares the branch's current value on the server (cur,
// nil when absent) with the old value of the update.
func checkCurrent(rem *remote, name plumbing.ReferenceName, cur *plumbing.Reference, old plumbing.Hash) error {
	switch {
	case old.IsZero() && cur != nil:
		return &BranchExistsError{Repo: rem.url, Branch: name.Short()}
	case old.IsZero():
		return nil
	case cur == nil:
		return &moved{reason: "the branch was deleted"}
	case cur.Hash() != old:
		return &moved{reason: "the branch is now at " + cur.Hash().String()[:12]}
	}
	return nil
}

// pushLocal pushes to a repository on this machine (file://): the objects
// are written into it, then the ref is moved with git's own lock protocol
// (create <ref>.lock exclusively, check the current value, rename), so a
// git process writing the same ref at the same time fails one of the two,
// never loses a commit. go-git's in-process receive-pack is not used: it
// does not check the ref's old value.
func pushLocal(rem *remote, st *filesystem.Storage, name plumbing.ReferenceName, old, sha plumbing.Hash, objs []plumbing.Hash) error {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("writeback: push to %s: %s", rem.url, fmt.Sprintf(format, a...))
	}
	repo, err := git.PlainOpen(rem.local)
	if err != nil {
		return fail("open: %v", err)
	}
	gitDir := rem.local
	if fi, err := os.Stat(filepath.Join(rem.local, ".git")); err == nil && fi.IsDir() {
		gitDir = filepath.Join(rem.local, ".git")
		if head, err := repo.Storer.Reference(plumbing.HEAD); err == nil && head.Type() == plumbing.SymbolicReference && head.Target() == name {
			return &RefusedError{Repo: rem.url, Branch: name.Short(), Status: "branch is checked out", Remote: "the repository has a work tree on this branch: push to a bare repository"}
		}
	}
	for _, h := range objs {
		o, err := st.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return fail("read object %s: %v", h, err)
		}
		if _, err := repo.Storer.SetEncodedObject(o); err != nil {
			return fail("write object %s: %v", h, err)
		}
	}
	refPath := filepath.Join(gitDir, filepath.FromSlash(name.String()))
	if err := os.MkdirAll(filepath.Dir(refPath), 0o755); err != nil {
		return fail("%v", err)
	}
	lock, err := os.OpenFile(refPath+".lock", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return &moved{reason: "another writer holds " + name.String() + ".lock"}
		}
		return fail("lock %s: %v", name, err)
	}
	renamed := false
	defer func() {
		if !renamed {
			lock.Close()
			os.Remove(refPath + ".lock")
		}
	}()
	var cur *plumbing.Reference
	if r, err := repo.Storer.Reference(name); err == nil {
		cur = r
	} else if !errors.Is(err, plumbing.ErrReferenceNotFound) {
		return fail("read %s: %v", name, err)
	}
	if err := checkCurrent(rem, name, cur, old); err != nil {
		return err
	}
	if _, err := lock.WriteString(sha.String() + "\n"); err != nil {
		return fail("write %s: %v", name, err)
	}
	if err := lock.Close(); err != nil {
		return fail("write %s: %v", name, err)
	}
	if err := os.Rename(refPath+".lock", refPath); err != nil {
		return fail("move %s: %v", name, err)
	}
	renamed = true
	return nil
}

// capBuffer keeps the first max bytes written to it.
type capBuffer struct {
	buf bytes.Buffer
	max int
}

func (c *capBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// text is the server's messages as one line, without git's "remote:"
// prefixes.
func (c *capBuffer) text() string {
	var parts []string
	for _, l := range strings.FieldsFunc(c.buf.String(), func(r rune) bool { return r == '\n' || r == '\r' }) {
		if l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "remote:")); l != "" {
			parts = append(parts, l)
		}
	}
	return oneLine(strings.Join(parts, "; "), maxFieldRunes*2)
}

type nopCloser struct{ *bytes.Buffer }

func (nopCloser) Close() error { return nil }
