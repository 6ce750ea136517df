package writeback

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/hanzoai/deploy-web/gitsource"
)

// fetchBranch fetches the head of branch into st through gitsource (the
// one fetch of deploy-web, the plan's too): shallow (depth commits: 1, or
// Request.History) when the server allows it, the pack capped at
// Limits.MaxPackBytes on the wire and Limits.MaxInflatedBytes inflated,
// checked while it streams in, before it is indexed. It returns the head.
func fetchBranch(ctx context.Context, rem *remote, st *filesystem.Storage, branch string, depth int, lim Limits) (plumbing.Hash, error) {
	fail := func(step string, err error) error { return fetchError(rem, step, err) }
	sess, err := gitsource.Open(ctx, rem.source())
	if err != nil {
		return plumbing.ZeroHash, fail("connect", err)
	}
	defer sess.Close()
	r, ok := sess.Refs[plumbing.NewBranchReferenceName(branch)]
	if !ok || r.Type() != plumbing.HashReference {
		return plumbing.ZeroHash, fmt.Errorf("writeback: fetch %s: no branch %q on the server: check writeBack.branch", rem.url, branch)
	}
	head := r.Hash()
	if _, err := st.EncodedObject(plumbing.CommitObject, head); err == nil {
		return head, nil // fetched before (an unchanged head on a retry)
	}
	err = sess.Fetch(ctx, st, []plumbing.Hash{head}, depth, gitsource.Limits{
		Pack:     gitsource.Cap{Max: lim.maxPackBytes(), Limit: "MaxPackBytes", What: "the fetched pack of " + rem.url},
		Inflated: gitsource.Cap{Max: lim.maxInflatedBytes(), Limit: "MaxInflatedBytes", What: "the fetched pack of " + rem.url + " (inflated)"},
	})
	if err != nil {
		return plumbing.ZeroHash, fail("fetch", err)
	}
	if _, err := st.EncodedObject(plumbing.CommitObject, head); err != nil {
		return plumbing.ZeroHash, fail("read the pack", fmt.Errorf("the head %s is not in it", head))
	}
	return head, nil
}

// fetchError words a failed fetch from rem at step: a refused credential,
// a cap, a missing repository; the rest names the step.
func fetchError(rem *remote, step string, err error) error {
	var se *gitsource.StepError
	if errors.As(err, &se) {
		step, err = se.Step, se.Err
	}
	if s := statusOf(err); s != 0 {
		return &AuthError{Repo: rem.url, Status: s}
	}
	var gl *gitsource.TooLargeError
	if errors.As(err, &gl) {
		return &TooLargeError{What: gl.What, Limit: gl.Limit, Max: gl.Max}
	}
	var tl *TooLargeError
	if errors.As(err, &tl) {
		return tl
	}
	if errors.Is(err, transport.ErrRepositoryNotFound) {
		return fmt.Errorf("writeback: fetch %s: no repository there (or the credentials may not read it)", rem.url)
	}
	return fmt.Errorf("writeback: fetch %s: %s: %w", rem.url, step, err)
}
