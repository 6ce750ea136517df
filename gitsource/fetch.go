package gitsource

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/hanzoai/deploy-web/internal/boundedhttp"
	"github.com/hanzoai/deploy-web/internal/capread"
)

// HTTPOptions shape the HTTP client of a git exchange.
type HTTPOptions struct {
	// Timeout bounds one request, and the dial, TLS handshake and
	// response headers each.
	Timeout time.Duration
	// Answers caps every response body (Unit "bytes").
	Answers Cap
	// Host, when set, is the only host a request may go to: the
	// credentials go nowhere else.
	Host string
	// CheckRedirect is the client's redirect policy (http.Client's).
	CheckRedirect func(req *http.Request, via []*http.Request) error
}

// HTTPClient is the HTTP client of a git exchange over HTTP(S), for
// go-git's http transport: boundedhttp's transport, every answer capped
// at o.Answers, requests to o.Host alone when it is set.
func HTTPClient(o HTTPOptions) *http.Client {
	var rt http.RoundTripper = boundedhttp.CapBodies(boundedhttp.Transport(o.Timeout), o.Answers.Max, func() error {
		return o.Answers.over(o.Answers.Max+1, "bytes")
	})
	if o.Host != "" {
		rt = &oneHost{rt: rt, host: o.Host}
	}
	return &http.Client{Timeout: o.Timeout, Transport: rt, CheckRedirect: o.CheckRedirect}
}

// oneHost refuses any request to another host than host.
type oneHost struct {
	rt   http.RoundTripper
	host string
}

func (o *oneHost) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != o.host {
		return nil, fmt.Errorf("gitsource: request to %s refused: only %s is contacted", req.URL.Host, o.host)
	}
	return o.rt.RoundTrip(req)
}

// Remote is a repository to fetch from: its endpoint, the transport that
// reaches it (for HTTP, one from HTTPClient) and the credentials.
type Remote struct {
	Endpoint  *transport.Endpoint
	Transport transport.Transport
	Auth      transport.AuthMethod
}

// Session is an upload-pack session whose references were read.
type Session struct {
	sess transport.UploadPackSession
	// Refs are the references the server advertises.
	Refs map[plumbing.ReferenceName]*plumbing.Reference
	// Caps are the server's capabilities.
	Caps *capability.List
}

// Open connects to r's upload-pack and reads its references. The caller
// closes the session. Steps: "connect", "read the references".
func Open(ctx context.Context, r Remote) (*Session, error) {
	sess, err := r.Transport.NewUploadPackSession(r.Endpoint, r.Auth)
	if err != nil {
		return nil, &StepError{"connect", err}
	}
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		sess.Close()
		return nil, &StepError{"read the references", err}
	}
	refs, err := ar.AllReferences()
	if err != nil {
		sess.Close()
		return nil, &StepError{"read the references", err}
	}
	return &Session{sess: sess, Refs: refs, Caps: ar.Capabilities}, nil
}

// Close ends the session.
func (s *Session) Close() error { return s.sess.Close() }

// Limits bound one Fetch.
type Limits struct {
	// Pack caps the pack on the wire (Unit "bytes").
	Pack Cap
	// Inflated caps what the pack's objects inflate to, in all (Unit
	// "bytes inflated").
	Inflated Cap
}

// Fetch asks for wants, depth commits deep when depth > 0 and the server
// allows shallow fetches (the shallow commits are recorded in st), and
// stores the pack in st: capped at lim.Pack on the wire, its objects at
// lim.Inflated inflated (ScanPack, while the pack streams into a
// temporary file of st's file system, removed after), then indexed. It
// records no reference: the caller does. Steps: "request", "fetch",
// "store the pack", "read the pack".
func (s *Session) Fetch(ctx context.Context, st *filesystem.Storage, wants []plumbing.Hash, depth int, lim Limits) error {
	req := packp.NewUploadPackRequestFromCapabilities(s.Caps)
	req.Wants = wants
	shallow := depth > 0 && s.Caps.Supports(capability.Shallow)
	if shallow {
		req.Depth = packp.DepthCommits(depth)
		if err := req.Capabilities.Set(capability.Shallow); err != nil {
			return &StepError{"request", err}
		}
	}
	if s.Caps.Supports(capability.NoProgress) {
		_ = req.Capabilities.Set(capability.NoProgress)
	}
	resp, err := s.sess.UploadPack(ctx, req)
	if err != nil {
		return &StepError{"fetch", err}
	}
	defer resp.Close()
	if shallow && len(resp.Shallows) > 0 {
		// A second fetch into st (another commit) keeps the first one's
		// shallow commits.
		known, err := st.Shallow()
		if err != nil {
			return &StepError{"fetch", err}
		}
		if err := st.SetShallow(append(known, resp.Shallows...)); err != nil {
			return &StepError{"fetch", err}
		}
	}
	var pack io.Reader = resp
	switch {
	case req.Capabilities.Supports(capability.Sideband64k):
		pack = sideband.NewDemuxer(sideband.Sideband64k, resp)
	case req.Capabilities.Supports(capability.Sideband):
		pack = sideband.NewDemuxer(sideband.Sideband, resp)
	}
	pack = capread.NewReader(pack, lim.Pack.Max, func() error { return lim.Pack.over(lim.Pack.Max+1, "bytes") })
	// The pack goes to disk while its objects are inflated (and counted,
	// then dropped) as it streams in; only a pack within lim.Inflated is
	// indexed.
	disk := st.Filesystem()
	tmp, err := disk.TempFile("", "incoming-")
	if err != nil {
		return &StepError{"store the pack", err}
	}
	defer disk.Remove(tmp.Name())
	defer tmp.Close()
	if err := ScanPack(io.TeeReader(pack, tmp), lim.Inflated); err != nil {
		return &StepError{"read the pack", err}
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return &StepError{"read the pack", err}
	}
	if err := packfile.UpdateObjectStorage(st, tmp); err != nil {
		return &StepError{"read the pack", err}
	}
	return nil
}
