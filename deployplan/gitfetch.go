package deployplan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/transport"
	gitproto "github.com/go-git/go-git/v5/plumbing/transport/git"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/hanzoai/deploy-web/internal/capread"
)

// fetchPlan is what to ask a git server for.
type fetchPlan struct {
	// Wants are the objects asked for.
	Wants []plumbing.Hash
	// Shallow asks for the wanted commits alone (depth 1).
	Shallow bool
	// Refs are recorded in the fetched repository so the ref resolves.
	Refs []*plumbing.Reference
}

// planFetch decides, from the server's advertisement, what to fetch for ref
// (a branch, a tag, HEAD, a full commit hash or pull/N, a pull request's
// head, refs/pull/N/head). A branch, a tag or HEAD is
// fetched alone and shallow when the server allows shallow fetches. A
// commit is fetched alone and shallow when the server lets a client ask for
// a commit by hash (or advertises it as a ref tip); otherwise every branch
// and tag is fetched in full, still under the byte limit.
func planFetch(caps *capability.List, refs map[plumbing.ReferenceName]*plumbing.Reference, ref string) (fetchPlan, error) {
	shallow := caps.Supports(capability.Shallow)
	if fullHashRE.MatchString(ref) {
		h := plumbing.NewHash(ref)
		tip := false
		for _, r := range refs {
			if r.Type() == plumbing.HashReference && r.Hash() == h {
				tip = true
			}
		}
		if tip || caps.Supports(capability.AllowReachableSHA1InWant) || caps.Supports(capability.AllowTipSHA1InWant) {
			return fetchPlan{Wants: []plumbing.Hash{h}, Shallow: shallow}, nil
		}
		var p fetchPlan
		seen := map[plumbing.Hash]bool{}
		for name, r := range refs {
			if r.Type() != plumbing.HashReference || !(name.IsBranch() || name.IsTag()) || seen[r.Hash()] {
				continue
			}
			seen[r.Hash()] = true
			p.Wants = append(p.Wants, r.Hash())
			p.Refs = append(p.Refs, r)
		}
		if len(p.Wants) == 0 {
			return fetchPlan{}, errors.New("the server advertises no branch or tag")
		}
		slices.SortFunc(p.Wants, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
		return p, nil
	}
	candidates := []plumbing.ReferenceName{plumbing.NewBranchReferenceName(ref), plumbing.NewTagReferenceName(ref)}
	if ref == "HEAD" {
		candidates = []plumbing.ReferenceName{plumbing.HEAD}
	}
	if head, ok := pullHead(ref); ok {
		// A pull request's head (GitHub, Gitea): refs/pull/N/head only.
		candidates = []plumbing.ReferenceName{plumbing.ReferenceName(head)}
	}
	for _, name := range candidates {
		r, ok := refs[name]
		if !ok {
			continue
		}
		if r.Type() == plumbing.SymbolicReference {
			t, ok := refs[r.Target()]
			if !ok {
				continue
			}
			r = plumbing.NewHashReference(name, t.Hash())
		}
		return fetchPlan{Wants: []plumbing.Hash{r.Hash()}, Shallow: shallow, Refs: []*plumbing.Reference{r}}, nil
	}
	return fetchPlan{}, fmt.Errorf("no branch or tag %q on the server", ref)
}

// fetchRemote fetches src.Ref of a remote repository into a temporary
// object store on disk (removed by the returned cleanup, which the caller
// calls once done with the repository). The whole fetch runs under
// limits.sourceTimeout and reads at most limits.maxRepoBytes of pack (and,
// over HTTP, of any response); the objects of the pack may inflate to at
// most limits.maxInflatedBytes (checked while the pack streams in, before
// go-git indexes it), and at most fetchDiskBytes are written to disk. No
// program is run (go-git speaks the protocol).
//
// Not every transport honours the context at every step (an SSH dial does
// not), so the fetch runs in its own goroutine and fetchRemote returns at
// the deadline whatever the transport does; a late fetch is dropped and
// its store removed.
func fetchRemote(ctx context.Context, src Source, lim Limits) (*git.Repository, func(), error) {
	return fetchRemoteDepth(ctx, src, lim, 1)
}

// fetchRemoteDepth is fetchRemote with depth commits of history (where a
// shallow fetch is possible), for the release notes: the same limits.
func fetchRemoteDepth(ctx context.Context, src Source, lim Limits, depth int) (*git.Repository, func(), error) {
	timeout := lim.sourceTimeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		repo    *git.Repository
		cleanup func()
		err     error
	}
	done := make(chan result, 1)
	go func() {
		repo, cleanup, err := fetchRemoteCtx(ctx, src, lim, depth)
		done <- result{repo, cleanup, err}
	}()
	select {
	case r := <-done:
		return r.repo, r.cleanup, r.err
	case <-ctx.Done():
		go func() { (<-done).cleanup() }() // the late fetch's store
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, func() {}, fmt.Errorf("deployplan: fetch %s: no complete answer within %s (limits.sourceTimeout)", RedactURL(src.Repo), timeout)
		}
		return nil, func() {}, fmt.Errorf("deployplan: fetch %s: %w", RedactURL(src.Repo), ctx.Err())
	}
}

// fetchRemoteCtx fetches into a new temporary folder; cleanup (never nil)
// removes it, and is called here on error.
func fetchRemoteCtx(ctx context.Context, src Source, lim Limits, depth int) (repo *git.Repository, cleanup func(), err error) {
	cleanup = func() {}
	dir, err := os.MkdirTemp("", "deploy-web-fetch-")
	if err != nil {
		return nil, cleanup, fmt.Errorf("deployplan: fetch %s: temporary object store: %w", RedactURL(src.Repo), err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	repo, err = fetchInto(ctx, dir, src, lim, depth)
	if err != nil {
		cleanup()
		return nil, func() {}, err
	}
	return repo, cleanup, nil
}

// fetchFailure is how a fetch step's failure reads: a timeout names
// limits.sourceTimeout, a *TooLargeError stays itself, the rest names the
// step with the URL's credentials redacted.
func fetchFailure(ctx context.Context, src Source, lim Limits) func(step string, err error) error {
	what := RedactURL(src.Repo)
	timeout := lim.sourceTimeout()
	return func(step string, err error) error {
		var ne net.Error
		if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
			return fmt.Errorf("deployplan: fetch %s: no complete answer within %s (limits.sourceTimeout): %s", what, timeout, step)
		}
		var tl *TooLargeError
		if errors.As(err, &tl) {
			return err
		}
		return fmt.Errorf("deployplan: fetch %s: %s: %w", what, step, redactErr(err, src.Repo))
	}
}

// uploadPackSession connects to src's repository for a fetch (or a read
// of its refs) over a bounded transport, with src's token; fail is
// fetchFailure's. The caller closes the session.
func uploadPackSession(ctx context.Context, src Source, lim Limits) (sess transport.UploadPackSession, fail func(step string, err error) error, err error) {
	fail = fetchFailure(ctx, src, lim)
	ep, err := transport.NewEndpoint(src.Repo)
	if err != nil {
		return nil, fail, fail("parse the URL", err)
	}
	var tr transport.Transport
	switch ep.Protocol {
	case "http", "https":
		tr = githttp.NewClient(sourceHTTPClient(lim.sourceTimeout(), lim.maxRepoBytes(), RedactURL(src.Repo)))
	case "ssh":
		tr = gitssh.DefaultClient
	case "git":
		tr = gitproto.DefaultClient
	default:
		return nil, fail, fail("protocol", fmt.Errorf("unsupported protocol %q", ep.Protocol))
	}
	var auth transport.AuthMethod
	tok, err := checkedToken(src)
	if err != nil {
		return nil, fail, err
	}
	if tok != "" {
		auth = &githttp.BasicAuth{Username: "x-access-token", Password: tok}
	}
	sess, err = tr.NewUploadPackSession(ep, auth)
	if err != nil {
		return nil, fail, fail("connect", err)
	}
	return sess, fail, nil
}

// fetchInto fetches src.Ref into an object store in dir, depth commits
// deep when the fetch is shallow.
func fetchInto(ctx context.Context, dir string, src Source, lim Limits, depth int) (*git.Repository, error) {
	what := RedactURL(src.Repo)
	sess, fail, err := uploadPackSession(ctx, src, lim)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return nil, fail("read the references", err)
	}
	refs, err := ar.AllReferences()
	if err != nil {
		return nil, fail("read the references", err)
	}
	plan, err := planFetch(ar.Capabilities, refs, src.Ref)
	if err != nil {
		return nil, fail(fmt.Sprintf("ref %q", src.Ref), err)
	}
	req := packp.NewUploadPackRequestFromCapabilities(ar.Capabilities)
	req.Wants = plan.Wants
	if plan.Shallow {
		req.Depth = packp.DepthCommits(max(depth, 1))
		if err := req.Capabilities.Set(capability.Shallow); err != nil {
			return nil, fail("request", err)
		}
	}
	if ar.Capabilities.Supports(capability.NoProgress) {
		_ = req.Capabilities.Set(capability.NoProgress)
	}
	resp, err := sess.UploadPack(ctx, req)
	if err != nil {
		return nil, fail("fetch", err)
	}
	defer resp.Close()
	disk := &capFS{Filesystem: osfs.New(dir), c: &writeCap{max: lim.fetchDiskBytes(), what: "the object store of " + what}}
	st := filesystem.NewStorage(disk, cache.NewObjectLRU(fetchCacheBytes))
	if plan.Shallow && len(resp.Shallows) > 0 {
		if err := st.SetShallow(resp.Shallows); err != nil {
			return nil, fail("fetch", err)
		}
	}
	var pack io.Reader = resp
	switch {
	case req.Capabilities.Supports(capability.Sideband64k):
		pack = sideband.NewDemuxer(sideband.Sideband64k, resp)
	case req.Capabilities.Supports(capability.Sideband):
		pack = sideband.NewDemuxer(sideband.Sideband, resp)
	}
	pack = capread.NewReader(pack, lim.maxRepoBytes(), func() error {
		return &TooLargeError{What: "the fetched pack of " + what, Limit: "limits.maxRepoBytes", Max: lim.maxRepoBytes(), Read: lim.maxRepoBytes() + 1, Unit: "bytes"}
	})
	// The pack goes to disk while its objects are inflated (and counted,
	// then dropped) as it streams in; only a pack within
	// limits.maxInflatedBytes is indexed.
	tmp, err := disk.TempFile("", "incoming-")
	if err != nil {
		return nil, fail("store the pack", err)
	}
	defer tmp.Close()
	if err := scanPack(io.TeeReader(pack, tmp), lim.maxInflatedBytes(), "the objects of the fetched pack of "+what); err != nil {
		return nil, fail("read the pack", err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, fail("read the pack", err)
	}
	if err := packfile.UpdateObjectStorage(st, tmp); err != nil {
		return nil, fail("read the pack", err)
	}
	for _, r := range plan.Refs {
		if err := st.SetReference(r); err != nil {
			return nil, fail("record the ref", err)
		}
	}
	head := plumbing.NewHashReference(plumbing.HEAD, plan.Wants[0])
	if fullHashRE.MatchString(src.Ref) {
		head = plumbing.NewHashReference(plumbing.HEAD, plumbing.NewHash(src.Ref))
	}
	if err := st.SetReference(head); err != nil {
		return nil, fail("record the ref", err)
	}
	repo, err := git.Open(st, nil)
	if err != nil {
		return nil, fail("open", err)
	}
	return repo, nil
}

// sourceHTTPClient is the HTTP client of a git fetch: a deadline on the
// whole exchange, on the connection and on the response headers, few
// redirects, and every response body capped at max bytes.
func sourceHTTPClient(timeout time.Duration, max int64, what string) *http.Client {
	return &http.Client{
		Timeout:   timeout,
		Transport: &capTransport{rt: boundedTransport(timeout), max: max, what: what},
		CheckRedirect: func(_ *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("too many redirects")
			}
			return nil
		},
	}
}

// boundedTransport is an HTTP transport whose dial, TLS handshake and
// response headers each have a deadline.
func boundedTransport(timeout time.Duration) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = timeout
	t.ResponseHeaderTimeout = timeout
	t.MaxResponseHeaderBytes = 64 << 10
	return t
}

// capTransport caps every response body at max bytes.
type capTransport struct {
	rt   http.RoundTripper
	max  int64
	what string
}

func (c *capTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = capread.NewReadCloser(resp.Body, c.max, func() error {
		return &TooLargeError{What: "the answer of " + c.what, Limit: "limits.maxRepoBytes", Max: c.max, Read: c.max + 1, Unit: "bytes"}
	})
	return resp, nil
}

// fetchCacheBytes bounds go-git's cache of objects read from the store.
const fetchCacheBytes = 8 * cache.MiByte

// scanPack reads a pack stream to its end, inflating every object into a
// counter (nothing is kept), and fails with a *TooLargeError once the
// objects inflate to more than max bytes: a whole object counts what it
// inflates to (at least what its header says), a delta its instructions
// and the size of the object it makes. go-git resolves deltas in memory
// when it indexes the pack, so only a pack within max is indexed.
func scanPack(r io.Reader, limit int64, what string) error {
	s := packfile.NewScanner(r)
	_, n, err := s.Header()
	if err != nil {
		return err
	}
	// total stays within [0, limit]: every amount is compared with what
	// is left before it is added, so sizes a header declares (up to 2^60
	// for an object, 2^63-1 for a delta's result) cannot wrap it.
	var total int64
	over := func(n int64) error {
		return &TooLargeError{What: what, Limit: "limits.maxInflatedBytes", Max: limit, Read: satAdd(total, n), Unit: "bytes inflated"}
	}
	for range n {
		oh, err := s.NextObjectHeader()
		if err != nil {
			return err
		}
		delta := oh.Type == plumbing.OFSDeltaObject || oh.Type == plumbing.REFDeltaObject
		if oh.Length < 0 || oh.Length > limit-total {
			return over(oh.Length)
		}
		w := &inflateCounter{left: limit - total}
		if _, _, err := s.NextObject(w); err != nil {
			if errors.Is(err, errInflateCap) {
				return over(w.n)
			}
			return err
		}
		total += max(w.n, oh.Length) // both within limit - total
		if delta {
			size, ok := deltaTargetSize(w.head)
			if !ok {
				return errors.New("a delta without its sizes")
			}
			if size > limit-total {
				return over(size)
			}
			total += size
		}
	}
	if _, err := s.Checksum(); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, r) // the rest, for the copy on disk
	return err
}

// satAdd adds two counts that are not negative, stopping at the
// largest int64 instead of wrapping.
func satAdd(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// errInflateCap stops inflating an object over the cap.
var errInflateCap = errors.New("over the inflate cap")

// inflateCounter counts what an object inflates to, keeping its first
// bytes (a delta's header); it fails past left bytes.
type inflateCounter struct {
	n, left int64
	head    []byte
}

func (c *inflateCounter) Write(p []byte) (int, error) {
	if len(c.head) < 32 {
		c.head = append(c.head, p[:min(len(p), 32-len(c.head))]...)
	}
	c.n += int64(len(p))
	if c.n > c.left {
		return 0, errInflateCap
	}
	return len(p), nil
}

// deltaTargetSize reads the size of the object a delta makes: a delta
// starts with the source's size and the target's, each a little-endian
// base-128 number.
func deltaTargetSize(b []byte) (int64, bool) {
	_, rest, ok := uvarint128(b)
	if !ok {
		return 0, false
	}
	size, _, ok := uvarint128(rest)
	return size, ok
}

// uvarint128 reads one little-endian base-128 number off b.
func uvarint128(b []byte) (n int64, rest []byte, ok bool) {
	for shift := uint(0); len(b) > 0 && shift <= 56; shift += 7 {
		c := b[0]
		b = b[1:]
		n |= int64(c&0x7f) << shift
		if c&0x80 == 0 {
			return n, b, true
		}
	}
	return 0, nil, false
}

// writeCap counts the bytes written to a fetch's object store.
type writeCap struct {
	mu      sync.Mutex
	written int64
	max     int64
	what    string
}

func (w *writeCap) add(n int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.written += int64(n)
	if w.written > w.max {
		return &TooLargeError{What: w.what, Limit: "limits.maxRepoBytes (x3 on disk)", Max: w.max, Read: w.written, Unit: "bytes written"}
	}
	return nil
}

// capFS is a billy file system whose files fail a write past the cap.
type capFS struct {
	billy.Filesystem
	c *writeCap
}

func (f *capFS) Create(name string) (billy.File, error) {
	return f.wrap(f.Filesystem.Create(name))
}

func (f *capFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	return f.wrap(f.Filesystem.OpenFile(name, flag, perm))
}

func (f *capFS) TempFile(dir, prefix string) (billy.File, error) {
	return f.wrap(f.Filesystem.TempFile(dir, prefix))
}

func (f *capFS) Chroot(p string) (billy.Filesystem, error) {
	c, err := f.Filesystem.Chroot(p)
	if err != nil {
		return nil, err
	}
	return &capFS{Filesystem: c, c: f.c}, nil
}

func (f *capFS) wrap(file billy.File, err error) (billy.File, error) {
	if err != nil {
		return nil, err
	}
	return &capFile{File: file, c: f.c}, nil
}

type capFile struct {
	billy.File
	c *writeCap
}

func (f *capFile) Write(p []byte) (int, error) {
	if err := f.c.add(len(p)); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}
