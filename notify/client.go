package notify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/hostlist"
	"github.com/hanzoai/deploy-web/internal/loopback"
)

// Limits of one delivery.
const (
	// RequestTimeout bounds one attempt: connect, send, headers, body.
	RequestTimeout = 10 * time.Second
	// MaxResponseBytes of a receiver's answer are read (then discarded) so
	// the connection can be reused; the rest is not read.
	MaxResponseBytes = 64 << 10
	// maxResponseHeaderBytes bounds a receiver's response headers.
	maxResponseHeaderBytes = 16 << 10
)

// Dialer opens connections; net.Dialer is one. Tests count dials with
// their own.
type Dialer interface {
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// Resolver looks host names up; net.Resolver is one. Tests map names to
// the addresses they want.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// The dial guard's refusals, never retried.
var (
	errNotListed  = errors.New("not in notifications.hosts")
	errBadAddress = errors.New("a listed name may not lead there: list the address itself if it is really the receiver")
)

// newHTTPClient returns the client deliveries go through: no proxy (the
// dial guard must see the receiver's own host), no redirects followed, and
// a dial guard (guardedDial) that refuses any address whose host is not
// listed, so that nothing (a redirect, a proxy setting, a future code
// path) can reach an unlisted host, or even resolve its name. r nil is
// net.DefaultResolver.
func newHTTPClient(hosts []string, d Dialer, r Resolver) *http.Client {
	if r == nil {
		r = net.DefaultResolver
	}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return guardedDial(ctx, hosts, d, r, network, addr)
		},
		TLSHandshakeTimeout:    RequestTimeout,
		ResponseHeaderTimeout:  RequestTimeout,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		MaxIdleConns:           16,
		IdleConnTimeout:        90 * time.Second,
		ForceAttemptHTTP2:      true,
	}
	return &http.Client{
		Transport: tr,
		// A 3xx comes back as the response: a failed delivery.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// dialAllowed reports whether addr (host:port, as the transport dials it)
// is a listed host: listed with that port, or listed without a port and
// dialed on the default port of https (443) or, to loopback, of http (80).
func dialAllowed(hosts []string, addr string) bool {
	h, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if hostlist.Lists(hosts, addr) {
		return true
	}
	bare := h
	if strings.Contains(h, ":") {
		bare = "[" + h + "]"
	}
	return (port == "443" || (port == "80" && loopback.Host(h))) && hostlist.Lists(hosts, bare)
}

// guardedDial dials addr only if its host is listed. A listed name is
// resolved here, once, and its addresses checked (checkResolved) before
// one is dialed by number: a name cannot point deliveries at this machine
// or at a cloud metadata address, and a second lookup cannot answer
// differently (DNS rebinding). TLS still verifies the certificate against
// the name: the transport sets the server name from the URL.
func guardedDial(ctx context.Context, hosts []string, d Dialer, r Resolver, network, addr string) (net.Conn, error) {
	if !dialAllowed(hosts, addr) {
		return nil, fmt.Errorf("notify: dial %s refused: %w", addr, errNotListed)
	}
	host, port, _ := net.SplitHostPort(addr) // dialAllowed parsed it
	if net.ParseIP(host) != nil {
		return d.DialContext(ctx, network, addr) // an address listed as such
	}
	ips, err := r.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("notify: resolve %s: %w", host, err)
	}
	lastErr := fmt.Errorf("notify: %s has no address", host)
	for _, ip := range ips {
		if err := checkResolved(host, ip.IP); err != nil {
			lastErr = err
			continue
		}
		c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.IP.String(), port))
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// checkResolved says why a listed name may not be dialed at ip: a
// loopback address unless the name is localhost, a link-local address
// (169.254.169.254 is the cloud metadata service), a metadata service
// elsewhere (metadataAddr), an unspecified or a multicast address; an
// IPv4 address behind the NAT64 well-known prefix (64:ff9b::/96) is
// checked as that IPv4 address.
func checkResolved(host string, ip net.IP) error {
	if len(ip) == net.IPv6len && ip.To4() == nil && slices.Equal(ip[:12], nat64Prefix()) {
		ip = net.IPv4(ip[12], ip[13], ip[14], ip[15])
	}
	switch {
	case ip.IsLoopback() && !loopback.Host(host), metadataAddr(ip),
		ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast(), ip.IsUnspecified(), ip.IsMulticast():
		return fmt.Errorf("notify: %s resolves to %s: %w", host, ip, errBadAddress)
	}
	return nil
}

// nat64Prefix is the NAT64 well-known prefix 64:ff9b::/96 (RFC 6052).
func nat64Prefix() []byte {
	return []byte{0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0}
}

// metadataAddr reports whether ip is a cloud metadata service outside
// the link-local range: AWS's over IPv6 (fd00:ec2::254), Alibaba's
// (100.100.100.200) and Oracle's legacy one (192.0.0.192).
func metadataAddr(ip net.IP) bool {
	for _, m := range []string{"fd00:ec2::254", "100.100.100.200", "192.0.0.192"} {
		if ip.Equal(net.ParseIP(m)) {
			return true
		}
	}
	return false
}

// request is one message to one receiver.
type request struct {
	url       string // with the Secret's part: never logged
	publicURL string // without it
	body      []byte
	key       []byte // the HMAC key, nil unless a webhook
	delivery  string
	secret    string // the Secret's value, redacted from every error
}

// retryPolicy says how often and how long to retry.
type retryPolicy struct {
	maxAttempts   int
	backoff       time.Duration // first wait
	maxBackoff    time.Duration
	maxRetryAfter time.Duration
	// sleep waits d or until ctx ends (time-based in production, instant
	// in tests).
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time
}

// result is the outcome of a delivery: the last attempt's status code (0
// when none came back) and latency, how many attempts, and the error
// (redacted) if it failed.
type result struct {
	Status   int
	Latency  time.Duration
	Attempts int
	Err      error
}

// attempt is one try; retry says whether another may help.
type attempt struct {
	status     int
	latency    time.Duration
	retryAfter time.Duration
	retry      bool
	err        error
}

// deliver sends r, retrying network errors, 429 and 5xx with exponential
// backoff and jitter (429's Retry-After honoured, capped), never another
// 4xx or a 3xx.
func deliver(ctx context.Context, c *http.Client, hosts []string, p retryPolicy, r request) result {
	var res result
	for {
		res.Attempts++
		a := tryOnce(ctx, c, hosts, p.now, r)
		res.Status, res.Latency, res.Err = a.status, a.latency, a.err
		if !a.retry || res.Attempts >= p.maxAttempts || ctx.Err() != nil {
			if res.Err != nil && a.retry && res.Attempts >= p.maxAttempts {
				res.Err = fmt.Errorf("%w (gave up after %d attempts)", res.Err, res.Attempts)
			}
			return res
		}
		wait := backoff(p, res.Attempts)
		if a.retryAfter > 0 {
			wait = min(a.retryAfter, p.maxRetryAfter)
		}
		if err := p.sleep(ctx, wait); err != nil {
			res.Err = fmt.Errorf("%w (stopped before attempt %d: %v)", res.Err, res.Attempts+1, err)
			return res
		}
	}
}

// backoff is the wait after the n-th failed attempt: backoff·2^(n-1),
// capped, with "equal jitter" (uniform in [d/2, d]) so replicas and
// subscriptions do not retry in lockstep.
func backoff(p retryPolicy, n int) time.Duration {
	d := p.backoff
	for i := 1; i < n && d < p.maxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.maxBackoff)
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// tryOnce makes one attempt with its own deadline and byte cap.
func tryOnce(ctx context.Context, c *http.Client, hosts []string, now func() time.Time, r request) attempt {
	u, err := url.Parse(r.url)
	if err != nil || u.Host == "" {
		return attempt{err: fmt.Errorf("notify: %s is not a URL", r.publicURL)}
	}
	// Checked here before any connection: the dial guard is the second
	// line, for what this check cannot see.
	if u.Scheme != "https" && !(u.Scheme == "http" && loopback.Host(u.Hostname())) {
		return attempt{err: fmt.Errorf("notify: %s: scheme %q refused: https only (plain http only to localhost)", r.publicURL, u.Scheme)}
	}
	if !envconfig.URLListed(hosts, u) {
		return attempt{err: fmt.Errorf("notify: %s: host %q is not in notifications.hosts: nothing was sent", r.publicURL, u.Host)}
	}
	actx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, r.url, strings.NewReader(string(r.body)))
	if err != nil {
		return attempt{err: fmt.Errorf("notify: %s: %v", r.publicURL, redact(errors.Unwrap(err), r.secret))}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "deploy-web-notify")
	if r.delivery != "" {
		req.Header.Set(HeaderDelivery, r.delivery)
	}
	if r.key != nil {
		sig, ts := Sign(r.key, r.body, now())
		req.Header.Set(HeaderSignature, sig)
		req.Header.Set(HeaderTimestamp, ts)
	}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		// A *url.Error quotes the URL, secret part included: keep its
		// cause only.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		a := attempt{latency: time.Since(start), retry: !errors.Is(err, errNotListed) && !errors.Is(err, errBadAddress), err: fmt.Errorf("notify: POST %s: %s", r.publicURL, redact(err, r.secret))}
		return a
	}
	drain(resp.Body)
	a := attempt{status: resp.StatusCode, latency: time.Since(start)}
	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
	case s >= 300 && s < 400:
		where := "no Location"
		if loc, err := resp.Location(); err == nil {
			where = "Location host " + strconv.Quote(loc.Host)
		}
		a.err = fmt.Errorf("notify: POST %s: answered %d, a redirect (%s): redirects are not followed; put the final URL in the subscription", r.publicURL, s, where)
	case s == http.StatusTooManyRequests:
		a.retry, a.retryAfter = true, parseRetryAfter(resp.Header.Get("Retry-After"), now())
		a.err = fmt.Errorf("notify: POST %s: answered 429 Too Many Requests", r.publicURL)
	case s >= 500:
		a.retry = true
		a.err = fmt.Errorf("notify: POST %s: answered %d", r.publicURL, s)
	default:
		a.err = fmt.Errorf("notify: POST %s: answered %d: not retried; check the URL and the receiver's configuration", r.publicURL, s)
	}
	return a
}

// drain reads at most MaxResponseBytes of body (so that a short answer
// leaves the connection reusable), discards them and closes body.
func drain(body io.ReadCloser) int64 {
	n, _ := io.Copy(io.Discard, io.LimitReader(body, MaxResponseBytes))
	body.Close()
	return n
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date; 0
// when absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// redact returns err's text with every occurrence of secret replaced.
func redact(err error, secret string) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if secret != "" {
		s = strings.ReplaceAll(s, secret, "[redacted]")
		// The URL form of the secret too (a query or path escapes it).
		if esc := url.PathEscape(secret); esc != secret {
			s = strings.ReplaceAll(s, esc, "[redacted]")
		}
		if esc := url.QueryEscape(secret); esc != secret {
			s = strings.ReplaceAll(s, esc, "[redacted]")
		}
	}
	return s
}
