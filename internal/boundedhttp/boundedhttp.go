// Package boundedhttp is the one bounded HTTP transport of deploy-web's
// outgoing exchanges with hosts that configuration names (git servers,
// registries, health checks): a deadline on the dial, the TLS handshake
// and the response headers, headers capped, and every response body
// capped in bytes.
package boundedhttp

import (
	"net"
	"net/http"
	"time"

	"github.com/hanzoai/deploy-web/internal/capread"
)

// MaxHeaderBytes caps the response headers of every exchange.
const MaxHeaderBytes = 64 << 10

// Transport is an HTTP transport whose dial, TLS handshake and response
// headers each have a deadline of timeout, with headers capped at
// MaxHeaderBytes.
func Transport(timeout time.Duration) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = timeout
	t.ResponseHeaderTimeout = timeout
	t.MaxResponseHeaderBytes = MaxHeaderBytes
	return t
}

// CapBodies is rt with every response body capped at max bytes: a read
// past max fails with over's error (the caller's typed error, naming its
// limit).
func CapBodies(rt http.RoundTripper, max int64, over func() error) http.RoundTripper {
	return &capBodies{rt: rt, max: max, over: over}
}

type capBodies struct {
	rt   http.RoundTripper
	max  int64
	over func() error
}

func (c *capBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = capread.NewReadCloser(resp.Body, c.max, c.over)
	return resp, nil
}
