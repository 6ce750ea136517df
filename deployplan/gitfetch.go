package deployplan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/transport"
	gitproto "github.com/go-git/go-git/v5/plumbing/transport/git"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/memory"
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
// (a branch, a tag, HEAD or a full commit hash). A branch, a tag or HEAD is
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

// fetchRemote fetches src.Ref of a remote repository into memory. The whole
// fetch runs under limits.sourceTimeout and reads at most
// limits.maxRepoBytes of pack (and, over HTTP, of any response). Nothing is
// written to disk and no program is run (go-git speaks the protocol).
//
// Not every transport honours the context at every step (an SSH dial does
// not), so the fetch runs in its own goroutine and fetchRemote returns at
// the deadline whatever the transport does; a late fetch is dropped.
func fetchRemote(ctx context.Context, src Source, lim Limits) (*git.Repository, error) {
	timeout := lim.sourceTimeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		repo *git.Repository
		err  error
	}
	done := make(chan result, 1)
	go func() {
		repo, err := fetchRemoteCtx(ctx, src, lim)
		done <- result{repo, err}
	}()
	select {
	case r := <-done:
		return r.repo, r.err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("deployplan: fetch %s: no complete answer within %s (limits.sourceTimeout)", RedactURL(src.Repo), timeout)
		}
		return nil, fmt.Errorf("deployplan: fetch %s: %w", RedactURL(src.Repo), ctx.Err())
	}
}

func fetchRemoteCtx(ctx context.Context, src Source, lim Limits) (*git.Repository, error) {
	what := RedactURL(src.Repo)
	timeout := lim.sourceTimeout()
	fail := func(step string, err error) error {
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
	ep, err := transport.NewEndpoint(src.Repo)
	if err != nil {
		return nil, fail("parse the URL", err)
	}
	var tr transport.Transport
	switch ep.Protocol {
	case "http", "https":
		tr = githttp.NewClient(sourceHTTPClient(timeout, lim.maxRepoBytes(), what))
	case "ssh":
		tr = gitssh.DefaultClient
	case "git":
		tr = gitproto.DefaultClient
	default:
		return nil, fail("protocol", fmt.Errorf("unsupported protocol %q", ep.Protocol))
	}
	var auth transport.AuthMethod
	if src.TokenEnv != "" {
		if err := checkTokenEnv(src.TokenEnv, src.Repo); err != nil {
			return nil, fmt.Errorf("deployplan: source.tokenEnv: %w", err)
		}
		tok := os.Getenv(src.TokenEnv)
		if tok == "" {
			return nil, fmt.Errorf("deployplan: source.tokenEnv: $%s is empty", src.TokenEnv)
		}
		auth = &githttp.BasicAuth{Username: "x-access-token", Password: tok}
	}
	sess, err := tr.NewUploadPackSession(ep, auth)
	if err != nil {
		return nil, fail("connect", err)
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
		req.Depth = packp.DepthCommits(1)
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
	st := memory.NewStorage()
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
	pack = &capReader{r: pack, left: lim.maxRepoBytes(), max: lim.maxRepoBytes(), what: "the fetched pack of " + what}
	if err := packfile.UpdateObjectStorage(st, pack); err != nil {
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
	resp.Body = &capReadCloser{capReader: capReader{r: resp.Body, left: c.max, max: c.max, what: "the answer of " + c.what}, c: resp.Body}
	return resp, nil
}

// capReader fails with a *TooLargeError once more than max bytes were read.
type capReader struct {
	r         io.Reader
	left, max int64
	what      string
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			return 0, &TooLargeError{What: c.what, Limit: "limits.maxRepoBytes", Max: c.max, Read: c.max + 1, Unit: "bytes"}
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

type capReadCloser struct {
	capReader
	c io.Closer
}

func (c *capReadCloser) Close() error { return c.c.Close() }
