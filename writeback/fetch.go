package writeback

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/hanzoai/deploy-web/internal/capread"
)

// fetchBranch fetches the head of branch into st, shallow (depth commits:
// 1, or Request.History) when the server allows it, the pack capped at Limits.MaxPackBytes on the wire
// and Limits.MaxInflatedBytes inflated (storePack, which writes it in tmp
// first), and returns the head. It is deployplan's fetchRemoteCtx for one branch, into
// storage on disk.
func fetchBranch(ctx context.Context, rem *remote, st *filesystem.Storage, tmp, branch string, depth int, lim Limits) (plumbing.Hash, error) {
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
		req.Depth = packp.DepthCommits(depth)
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
	pack = capread.NewReader(pack, max, func() error {
		return &TooLargeError{What: "the fetched pack of " + rem.url, Limit: "MaxPackBytes", Max: max}
	})
	if err := storePack(st, tmp, pack, lim.maxInflatedBytes(), "the fetched pack of "+rem.url); err != nil {
		return plumbing.ZeroHash, fail("read the pack", err)
	}
	if _, err := st.EncodedObject(plumbing.CommitObject, head); err != nil {
		return plumbing.ZeroHash, fail("read the pack", fmt.Errorf("the head %s is not in it", head))
	}
	return head, nil
}

// storePack writes pack to a file in dir, checks what its objects inflate
// to (checkInflated), then unpacks it into st. The file is removed.
func storePack(st *filesystem.Storage, dir string, pack io.Reader, maxInflated int64, what string) error {
	f, err := os.CreateTemp(dir, "incoming-*.pack")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := io.Copy(f, pack); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := checkInflated(f, maxInflated, what); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return packfile.UpdateObjectStorage(st, f)
}

// checkInflated reads a pack's object headers and refuses it with a
// *TooLargeError when its objects inflate to more than max bytes in all:
// each object's stored size, and for a delta also the size of the object
// it makes (from the delta's own header), so a small delta that expands a
// base many times over counts for what it makes. Only the first bytes of
// a delta are kept; the rest of every object is inflated into nothing,
// and only after its size was counted.
func checkInflated(r io.Reader, max int64, what string) error {
	sc := packfile.NewScanner(r)
	_, n, err := sc.Header()
	if err != nil {
		return err
	}
	var total int64
	add := func(size int64) error {
		if size < 0 || size > max-total {
			return &TooLargeError{What: what + " (inflated)", Limit: "MaxInflatedBytes", Max: max}
		}
		total += size
		return nil
	}
	for range n {
		h, err := sc.NextObjectHeader()
		if err != nil {
			return err
		}
		if err := add(h.Length); err != nil {
			return err
		}
		if h.Type != plumbing.OFSDeltaObject && h.Type != plumbing.REFDeltaObject {
			continue
		}
		head := &headBuffer{max: 20}
		if _, _, err := sc.NextObject(head); err != nil {
			return err
		}
		_, rest := uvarint(head.b)
		target, _ := uvarint(rest)
		if err := add(int64(target)); err != nil {
			return err
		}
	}
	return nil
}

// uvarint decodes a size of a delta header (little-endian base 128).
func uvarint(b []byte) (uint64, []byte) {
	var v uint64
	for i, c := range b {
		if i == 9 {
			return 1 << 62, nil // more than any cap
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, b[i+1:]
		}
	}
	return 1 << 62, nil
}

// headBuffer keeps the first max bytes written to it.
type headBuffer struct {
	b   []byte
	max int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := h.max - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
