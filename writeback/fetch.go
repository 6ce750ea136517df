package writeback

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// fetchBranch fetches the head of branch into st, shallow (depth 1) when
// the server allows it, the pack capped at Limits.MaxPackBytes, and
// returns the head. It is deployplan's fetchRemoteCtx for one branch, into
// storage on disk.
func fetchBranch(ctx context.Context, rem *remote, st *filesystem.Storage, branch string, lim Limits) (plumbing.Hash, error) {
	fail := func(step string, err error) error {
		if s := statusOf(err); s != 0 {
			return &AuthError{Repo: rem.url, Status: s}
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
	sess, err := rem.tr.NewUploadPackSession(rem.ep, rem.auth)
	if err != nil {
		return plumbing.ZeroHash, fail("connect", err)
	}
	defer sess.Close()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return plumbing.ZeroHash, fail("read the references", err)
	}
	refs, err := ar.AllReferences()
	if err != nil {
		return plumbing.ZeroHash, fail("read the references", err)
	}
	r, ok := refs[plumbing.NewBranchReferenceName(branch)]
	if !ok || r.Type() != plumbing.HashReference {
		return plumbing.ZeroHash, fmt.Errorf("writeback: fetch %s: no branch %q on the server: check writeBack.branch", rem.url, branch)
	}
	head := r.Hash()
	if _, err := st.EncodedObject(plumbing.CommitObject, head); err == nil {
		return head, nil // fetched before (an unchanged head on a retry)
	}
	req := packp.NewUploadPackRequestFromCapabilities(ar.Capabilities)
	req.Wants = []plumbing.Hash{head}
	shallow := ar.Capabilities.Supports(capability.Shallow)
	if shallow {
		req.Depth = packp.DepthCommits(1)
		if err := req.Capabilities.Set(capability.Shallow); err != nil {
			return plumbing.ZeroHash, fail("request", err)
		}
	}
	if ar.Capabilities.Supports(capability.NoProgress) {
		_ = req.Capabilities.Set(capability.NoProgress)
	}
	resp, err := sess.UploadPack(ctx, req)
	if err != nil {
		return plumbing.ZeroHash, fail("fetch", err)
	}
	defer resp.Close()
	if shallow && len(resp.Shallows) > 0 {
		if err := st.SetShallow(resp.Shallows); err != nil {
			return plumbing.ZeroHash, fail("fetch", err)
		}
	}
	var pack io.Reader = resp
	switch {
	case req.Capabilities.Supports(capability.Sideband64k):
		pack = sideband.NewDemuxer(sideband.Sideband64k, resp)
	case req.Capabilities.Supports(capability.Sideband):
		pack = sideband.NewDemuxer(sideband.Sideband, resp)
	}
	max := lim.maxPackBytes()
	pack = &capReader{r: pack, left: max, max: max, what: "the fetched pack of " + rem.url}
	if err := packfile.UpdateObjectStorage(st, pack); err != nil {
		return plumbing.ZeroHash, fail("read the pack", err)
	}
	if _, err := st.EncodedObject(plumbing.CommitObject, head); err != nil {
		return plumbing.ZeroHash, fail("read the pack", fmt.Errorf("the head %s is not in it", head))
	}
	return head, nil
}
