package deployplan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/transport"
	gitproto "github.com/go-git/go-git/v5/plumbing/transport/git"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/gitsource"
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
// go-git indexes it), and at most fetchDiskBytes are written to disk
// (gitsource). No program is run (go-git speaks the protocol).
//
// Not every transport honours the context at every step (an SSH dial does
// not), so the fetch runs in its own goroutine and fetchRemote returns at
// the deadline whatever the transport does; a late fetch is dropped and
// its store removed.
func fetchRemote(ctx context.Context, src envconfig.Source, lim envconfig.Limits) (*git.Repository, func(), error) {
	return fetchRemoteDepth(ctx, src, lim, 1)
}

// fetchRemoteDepth is fetchRemote with depth commits of history (where a
// shallow fetch is possible), for the release notes: the same limits.
func fetchRemoteDepth(ctx context.Context, src envconfig.Source, lim envconfig.Limits, depth int) (*git.Repository, func(), error) {
	timeout := lim.SourceTimeoutOrDefault()
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
			return nil, func() {}, fmt.Errorf("deployplan: fetch %s: no complete answer within %s (limits.sourceTimeout)", envconfig.RedactURL(src.Repo), timeout)
		}
		return nil, func() {}, fmt.Errorf("deployplan: fetch %s: %w", envconfig.RedactURL(src.Repo), ctx.Err())
	}
}

// fetchRemoteCtx fetches into a new temporary folder; cleanup (never nil)
// removes it, and is called here on error.
func fetchRemoteCtx(ctx context.Context, src envconfig.Source, lim envconfig.Limits, depth int) (repo *git.Repository, cleanup func(), err error) {
	cleanup = func() {}
	dir, err := os.MkdirTemp("", "deploy-web-fetch-")
	if err != nil {
		return nil, cleanup, fmt.Errorf("deployplan: fetch %s: temporary object store: %w", envconfig.RedactURL(src.Repo), err)
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
// limits.sourceTimeout, a too large pack or answer is a *TooLargeError
// (gitsource's, with the names of this package's limits), a
// *gitsource.StepError names its step, the rest names the step given,
// with the URL's credentials redacted.
func fetchFailure(ctx context.Context, src envconfig.Source, lim envconfig.Limits) func(step string, err error) error {
	what := envconfig.RedactURL(src.Repo)
	timeout := lim.SourceTimeoutOrDefault()
	return func(step string, err error) error {
		var ne net.Error
		if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
			return fmt.Errorf("deployplan: fetch %s: no complete answer within %s (limits.sourceTimeout): %s", what, timeout, step)
		}
		var gl *gitsource.TooLargeError
		if errors.As(err, &gl) {
			return &TooLargeError{What: gl.What, Limit: gl.Limit, Max: gl.Max, Read: gl.Read, Unit: gl.Unit}
		}
		var tl *TooLargeError
		if errors.As(err, &tl) {
			return err
		}
		var se *gitsource.StepError
		if errors.As(err, &se) {
			step, err = se.Step, se.Err
		}
		return fmt.Errorf("deployplan: fetch %s: %s: %w", what, step, redactErr(err, src.Repo))
	}
}

// openSource connects to src's repository for a fetch (or a read of its
// refs) over a bounded transport, with src's token, and reads its
// references; fail is fetchFailure's. The caller closes the session.
func openSource(ctx context.Context, src envconfig.Source, lim envconfig.Limits) (sess *gitsource.Session, fail func(step string, err error) error, err error) {
	fail = fetchFailure(ctx, src, lim)
	ep, err := transport.NewEndpoint(src.Repo)
	if err != nil {
		return nil, fail, fail("parse the URL", err)
	}
	var tr transport.Transport
	switch ep.Protocol {
	case "http", "https":
		tr = githttp.NewClient(sourceHTTPClient(lim.SourceTimeoutOrDefault(), lim.MaxRepoBytesOrDefault(), envconfig.RedactURL(src.Repo)))
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
	sess, err = gitsource.Open(ctx, gitsource.Remote{Endpoint: ep, Transport: tr, Auth: auth})
	if err != nil {
		return nil, fail, fail("connect", err)
	}
	return sess, fail, nil
}

// fetchInto fetches src.Ref into an object store in dir, depth commits
// deep when the fetch is shallow: the pack under limits.maxRepoBytes, its
// objects under limits.maxInflatedBytes, the store under fetchDiskBytes
// (gitsource).
func fetchInto(ctx context.Context, dir string, src envconfig.Source, lim envconfig.Limits, depth int) (*git.Repository, error) {
	what := envconfig.RedactURL(src.Repo)
	sess, fail, err := openSource(ctx, src, lim)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	plan, err := planFetch(sess.Caps, sess.Refs, src.Ref)
	if err != nil {
		return nil, fail(fmt.Sprintf("ref %q", src.Ref), err)
	}
	disk := gitsource.CapFS(osfs.New(dir), gitsource.Cap{Max: lim.FetchDiskBytes(), Limit: "limits.maxRepoBytes (x3 on disk)", What: "the object store of " + what})
	st := filesystem.NewStorage(disk, cache.NewObjectLRU(fetchCacheBytes))
	if depth = max(depth, 1); !plan.Shallow {
		depth = 0
	}
	err = sess.Fetch(ctx, st, plan.Wants, depth, gitsource.Limits{
		Pack:     gitsource.Cap{Max: lim.MaxRepoBytesOrDefault(), Limit: "limits.maxRepoBytes", What: "the fetched pack of " + what},
		Inflated: gitsource.Cap{Max: lim.MaxInflatedBytesOrDefault(), Limit: "limits.maxInflatedBytes", What: "the objects of the fetched pack of " + what},
	})
	if err != nil {
		return nil, fail("fetch", err)
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
	return gitsource.HTTPClient(gitsource.HTTPOptions{
		Timeout: timeout,
		Answers: gitsource.Cap{Max: max, Limit: "limits.maxRepoBytes", What: "the answer of " + what},
		CheckRedirect: func(_ *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("too many redirects")
			}
			return nil
		},
	})
}

// fetchCacheBytes bounds go-git's cache of objects read from the store.
const fetchCacheBytes = 8 * cache.MiByte
