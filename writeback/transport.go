package writeback

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/plumbing/transport/server"

	"github.com/hanzoai/deploy-web/gitsource"
)

// remote is the configured repository: its endpoint, the transport that
// reaches it and the credentials.
type remote struct {
	url   string // as configured, no credentials in it
	ep    *transport.Endpoint
	tr    transport.Transport
	auth  transport.AuthMethod
	token Token
	// local is the repository folder of a file:// URL ("" otherwise).
	local string
}

// newRemote checks the URL and builds the transport. Write-back speaks
// HTTPS (HTTP on loopback hosts only, for tests and the demo) with a token,
// or file:// to a repository on this machine; credentials in the URL are
// refused (they would end up in errors and logs).
func newRemote(repoURL string, tok Token, lim Limits) (*remote, error) {
	u, err := url.Parse(repoURL)
	if err != nil || u.Scheme == "" {
		return nil, fmt.Errorf("writeback: repository %q is not a URL (https://host/org/repo.git or file:///path)", redactURL(repoURL))
	}
	if u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "file" {
		return nil, fmt.Errorf("writeback: repository %s: scheme %q is not supported for write-back (https with a token, or file://)", redactURL(repoURL), u.Scheme)
	}
	if u.User != nil {
		return nil, fmt.Errorf("writeback: repository %s holds credentials: remove them from the URL and use writeBack.credentials", redactURL(repoURL))
	}
	ep, err := transport.NewEndpoint(repoURL)
	if err != nil {
		return nil, fmt.Errorf("writeback: repository %s: %v", redactURL(repoURL), err)
	}
	r := &remote{url: repoURL, ep: ep, token: tok}
	switch u.Scheme {
	case "https", "http":
		if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
			return nil, fmt.Errorf("writeback: repository %s: plain http would send the token in clear: use https", repoURL)
		}
		r.tr = githttp.NewClient(boundedHTTPClient(lim.timeout(), lim.maxPackBytes(), u.Host))
		if !tok.Empty() {
			r.auth = &githttp.BasicAuth{Username: tok.user, Password: tok.secret}
		}
	case "file":
		if u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			return nil, fmt.Errorf("writeback: repository %s: a file URL is file:///absolute/path", repoURL)
		}
		r.local = u.Path
		if fi, err := os.Stat(filepath.Join(u.Path, ".git")); err == nil && fi.IsDir() {
			// A work tree's repository: serve its .git (pushLocal then
			// refuses its checked-out branch).
			ep.Path = filepath.Join(u.Path, ".git")
		}
		// go-git's in-process server: no program runs. Its receive-pack
		// does not check a ref's old value, so pushes to a local
		// repository go through pushLocal instead; it only serves fetches.
		r.tr = server.DefaultServer
	default:
		return nil, fmt.Errorf("writeback: repository %s: scheme %q is not supported for write-back (https with a token, or file://)", repoURL, u.Scheme)
	}
	return r, nil
}

func loopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// redactURL drops the user info of a URL.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		if i := strings.Index(s, "://"); i >= 0 {
			return s[:i+3] + "[redacted]"
		}
		return "[redacted]"
	}
	u.User = nil
	return u.String()
}

// boundedHTTPClient is the HTTP client of every exchange with the
// repository (gitsource's): one deadline for a request, deadlines on the
// dial, the TLS handshake and the response headers, every response body
// capped at max bytes, requests to host alone and no redirect at all, so
// the token goes nowhere else (an HTTPS proxy from the environment, as for
// every fetch of deployplan, only tunnels to host). deployplan's source
// client allows a few redirects for reads; a write refuses them.
func boundedHTTPClient(timeout time.Duration, max int64, host string) *http.Client {
	return gitsource.HTTPClient(gitsource.HTTPOptions{
		Timeout: timeout,
		Answers: gitsource.Cap{Max: max, Limit: "MaxPackBytes", What: "an answer of " + host},
		Host:    host,
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			return fmt.Errorf("the server redirects to %s: write-back follows no redirect; configure the repository's final URL", req.URL.Host)
		},
	})
}

// source is the remote as gitsource fetches from it.
func (r *remote) source() gitsource.Remote {
	return gitsource.Remote{Endpoint: r.ep, Transport: r.tr, Auth: r.auth}
}

// TooLargeError is a repository over one of Limits' byte caps: a fetch's
// (gitsource's *TooLargeError, in this package's words) or a file's.
type TooLargeError struct {
	// What names what was read; Limit the limit ("MaxPackBytes").
	What, Limit string
	Max         int64
}

func (e *TooLargeError) Error() string { return "writeback: " + e.Public() }

// Public is the limit crossed, in words a user may read.
func (e *TooLargeError) Public() string {
	return fmt.Sprintf("%s is larger than %d bytes (Limits.%s)", e.What, e.Max, e.Limit)
}

// statusOf is the HTTP status of a transport error that says the
// credentials were refused: 401, 403, else 0.
func statusOf(err error) int {
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired):
		return http.StatusUnauthorized
	case errors.Is(err, transport.ErrAuthorizationFailed):
		return http.StatusForbidden
	}
	var he *githttp.Err
	if errors.As(err, &he) && he.Response != nil && (he.Response.StatusCode == 401 || he.Response.StatusCode == 403) {
		return he.Response.StatusCode
	}
	return 0
}
