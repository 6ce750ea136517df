package notify

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"
)

// receiver is a real HTTP server on loopback that counts requests and
// verifies the webhook signature when it has a key.
type receiver struct {
	*httptest.Server
	key []byte

	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
	sigErrs []error
}

// newReceiver starts a receiver; respond answers the n-th request (from 1).
func newReceiver(t *testing.T, key []byte, respond func(n int, w http.ResponseWriter)) *receiver {
	t.Helper()
	r := &receiver{key: key}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		r.mu.Lock()
		r.bodies = append(r.bodies, body)
		r.headers = append(r.headers, req.Header.Clone())
		if r.key != nil {
			if err := VerifySignature(r.key, body, req.Header.Get(HeaderSignature), req.Header.Get(HeaderTimestamp), time.Now(), SignatureTolerance); err != nil {
				r.sigErrs = append(r.sigErrs, err)
			}
		}
		n := len(r.bodies)
		r.mu.Unlock()
		if respond != nil {
			respond(n, w)
		}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bodies)
}

// revisions are the event revisions of the requests received, in order.
func (r *receiver) revisions(t *testing.T) []string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, b := range r.bodies {
		var p webhookPayload
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Event.Revision)
	}
	return out
}

// got reports whether a request for revision rev was received: with one
// worker delivering in queue order, a marker's arrival says every event
// notified before it was handled (the explicit signal tests wait for,
// rather than a span of time).
func (r *receiver) got(t *testing.T, rev string) bool {
	return slices.Contains(r.revisions(t), rev)
}

func (r *receiver) signatureErrors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.sigErrs...)
}

// host is the receiver's host:port, as a URL and the allowlist name it.
func (r *receiver) host(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// countingDialer records every address dialed.
type countingDialer struct {
	mu    sync.Mutex
	addrs []string
	d     net.Dialer
}

func (c *countingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c.mu.Lock()
	c.addrs = append(c.addrs, addr)
	c.mu.Unlock()
	return c.d.DialContext(ctx, network, addr)
}

func (c *countingDialer) dialed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.addrs...)
}

// testPolicy retries without waiting and records the waits asked for.
type testPolicy struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (p *testPolicy) policy(attempts int) retryPolicy {
	return retryPolicy{maxAttempts: attempts, backoff: time.Second, maxBackoff: 30 * time.Second, maxRetryAfter: time.Minute, now: time.Now,
		sleep: func(ctx context.Context, d time.Duration) error {
			p.mu.Lock()
			p.waits = append(p.waits, d)
			p.mu.Unlock()
			return ctx.Err()
		}}
}
