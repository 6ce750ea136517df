package notify

import (
	"context"
	"fmt"
	"github.com/hanzoai/deploy-web/envconfig"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestDeliverSignedToListedHost(t *testing.T) {
	key := []byte("hmac-key-0123456789")
	rcv := newReceiver(t, key, nil)
	d := &countingDialer{}
	var p testPolicy
	body := []byte(`{"summary":"checkout is degraded"}`)
	res := deliver(context.Background(), newHTTPClient([]string{rcv.host(t)}, d, nil), []string{rcv.host(t)}, p.policy(3),
		request{url: rcv.URL + "/hook", publicURL: rcv.URL + "/hook", body: body, key: key, delivery: "d1", secret: string(key)})
	if res.Err != nil || res.Status != 200 || res.Attempts != 1 {
		t.Fatalf("deliver = %+v, want status 200 in 1 attempt", res)
	}
	if n := rcv.count(); n != 1 {
		t.Fatalf("receiver got %d requests, want 1", n)
	}
	if errs := rcv.signatureErrors(); len(errs) > 0 {
		t.Errorf("receiver signature check: %v", errs)
	}
	if got := rcv.headers[0].Get(HeaderDelivery); got != "d1" {
		t.Errorf("%s = %q, want d1", HeaderDelivery, got)
	}
	if string(rcv.bodies[0]) != string(body) {
		t.Errorf("body = %s, want %s", rcv.bodies[0], body)
	}
}

// TestDeliverUnlistedHostNoDial: a host not on the list gets no request,
// and is not even resolved or dialed; nor are look-alikes of a listed
// host, nor plain http to a non-loopback host.
func TestDeliverUnlistedHostNoDial(t *testing.T) {
	rcv := newReceiver(t, nil, nil)
	listed := []string{rcv.host(t), "hooks.example"}
	for _, target := range []string{
		"http://127.0.0.2:1/x",                                // loopback, but not listed
		strings.Replace(rcv.URL, "127.0.0.1", "localhost", 1), // same server, another name
		"https://hooks.example.evil/x",
		"https://evil.hooks.example/x",
		"https://hooks.ex\u0430mple/x", // Cyrillic a
		"https://HOOKS.EXAMPLE:8443/x", // listed without this port
		"http://hooks.example/x",       // listed, but plain http off loopback
		"ftp://hooks.example/x",
	} {
		d := &countingDialer{}
		var p testPolicy
		res := deliver(context.Background(), newHTTPClient(listed, d, nil), listed, p.policy(3), request{url: target, publicURL: target, body: []byte("{}")})
		if res.Err == nil {
			t.Errorf("deliver(%s) succeeded, want refused", target)
		}
		if got := d.dialed(); len(got) > 0 {
			t.Errorf("deliver(%s) dialed %v, want no dial", target, got)
		}
		if res.Attempts != 1 {
			t.Errorf("deliver(%s) made %d attempts, want 1 (a refusal is not retried)", target, res.Attempts)
		}
	}
	if n := rcv.count(); n != 0 {
		t.Errorf("receiver got %d requests, want 0", n)
	}
}

// TestDialGuard: the transport's own check, for a request that got past
// the one before it.
func TestDialGuard(t *testing.T) {
	tests := []struct {
		hosts []string
		addr  string
		want  bool
	}{
		{[]string{"hooks.example"}, "hooks.example:443", true},
		{[]string{"hooks.example"}, "hooks.example:80", false},
		{[]string{"localhost"}, "localhost:80", true},
		{[]string{"hooks.example:8443"}, "hooks.example:8443", true},
		{[]string{"hooks.example:8443"}, "hooks.example:443", false},
		{[]string{"[::1]"}, "[::1]:443", true},
		{[]string{"hooks.example"}, "evil.example:443", false},
		{[]string{"hooks.example"}, "hooks.ex\u0430mple:443", false},
		{[]string{"hooks.example"}, "hooks.example", false},
	}
	for _, tt := range tests {
		if got := dialAllowed(tt.hosts, tt.addr); got != tt.want {
			t.Errorf("dialAllowed(%q, %q) = %v, want %v", tt.hosts, tt.addr, got, tt.want)
		}
	}
	// Through the transport: a listed URL whose dial is redirected (as a
	// proxy or a future code path might) to an unlisted address fails.
	d := &countingDialer{}
	c := newHTTPClient([]string{"hooks.example"}, d, nil)
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:9/", nil)
	if _, err := c.Do(req); err == nil || !strings.Contains(err.Error(), "not in notifications.hosts") {
		t.Errorf("Do(unlisted) error = %v, want the dial guard's refusal", err)
	}
	if got := d.dialed(); len(got) > 0 {
		t.Errorf("dialed %v, want nothing", got)
	}
}

// TestDeliverRedirectNotFollowed: a listed host that redirects to an
// unlisted one: the second gets no request, and the error says so.
func TestDeliverRedirectNotFollowed(t *testing.T) {
	other := newReceiver(t, nil, nil)
	listed := newReceiver(t, nil, func(_ int, w http.ResponseWriter) {
		w.Header().Set("Location", other.URL+"/stolen")
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	hosts := []string{listed.host(t)}
	var p testPolicy
	res := deliver(context.Background(), newHTTPClient(hosts, &countingDialer{}, nil), hosts, p.policy(3), request{url: listed.URL, publicURL: listed.URL, body: []byte("{}")})
	if res.Err == nil || !strings.Contains(res.Err.Error(), "redirects are not followed") || !strings.Contains(res.Err.Error(), other.host(t)) {
		t.Errorf("deliver error = %v, want a redirect not followed, naming %s", res.Err, other.host(t))
	}
	if res.Status != http.StatusTemporaryRedirect || res.Attempts != 1 {
		t.Errorf("deliver = %+v, want status 307 after 1 attempt", res)
	}
	if n := other.count(); n != 0 {
		t.Errorf("redirect target got %d requests, want 0", n)
	}
	// Even with the redirect target listed, nothing follows the redirect.
	hosts = append(hosts, other.host(t))
	res = deliver(context.Background(), newHTTPClient(hosts, &countingDialer{}, nil), hosts, p.policy(3), request{url: listed.URL, publicURL: listed.URL, body: []byte("{}")})
	if res.Err == nil || other.count() != 0 {
		t.Errorf("deliver with both listed = %+v, target got %d requests; want a failure and 0", res, other.count())
	}
}

func TestDeliverRetries(t *testing.T) {
	tests := []struct {
		name         string
		codes        []int
		retryAfter   string
		attempts     int
		wantStatus   int
		wantAttempts int
		wantErr      bool
		wantWaits    func([]time.Duration) bool
	}{
		{name: "503 then 200", codes: []int{503, 200}, attempts: 4, wantStatus: 200, wantAttempts: 2,
			wantWaits: func(w []time.Duration) bool {
				return len(w) == 1 && w[0] >= 500*time.Millisecond && w[0] <= time.Second
			}},
		{name: "5xx until given up", codes: []int{500, 502, 503, 504}, attempts: 3, wantStatus: 502 + 1, wantAttempts: 3, wantErr: true,
			wantWaits: func(w []time.Duration) bool {
				return len(w) == 2 && w[1] >= time.Second && w[1] <= 2*time.Second
			}},
		{name: "400 not retried", codes: []int{400, 200}, attempts: 4, wantStatus: 400, wantAttempts: 1, wantErr: true,
			wantWaits: func(w []time.Duration) bool { return len(w) == 0 }},
		{name: "404 not retried", codes: []int{404, 200}, attempts: 4, wantStatus: 404, wantAttempts: 1, wantErr: true,
			wantWaits: func(w []time.Duration) bool { return len(w) == 0 }},
		{name: "429 Retry-After honoured", codes: []int{429, 200}, retryAfter: "7", attempts: 4, wantStatus: 200, wantAttempts: 2,
			wantWaits: func(w []time.Duration) bool { return len(w) == 1 && w[0] == 7*time.Second }},
		{name: "429 Retry-After capped", codes: []int{429, 200}, retryAfter: "86400", attempts: 4, wantStatus: 200, wantAttempts: 2,
			wantWaits: func(w []time.Duration) bool { return len(w) == 1 && w[0] == time.Minute }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rcv := newReceiver(t, nil, func(n int, w http.ResponseWriter) {
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				w.WriteHeader(tt.codes[min(n, len(tt.codes))-1])
			})
			hosts := []string{rcv.host(t)}
			var p testPolicy
			res := deliver(context.Background(), newHTTPClient(hosts, &countingDialer{}, nil), hosts, p.policy(tt.attempts), request{url: rcv.URL, publicURL: rcv.URL, body: []byte("{}")})
			if res.Status != tt.wantStatus || res.Attempts != tt.wantAttempts || (res.Err != nil) != tt.wantErr {
				t.Errorf("deliver = %+v, want status %d, %d attempts, error %v", res, tt.wantStatus, tt.wantAttempts, tt.wantErr)
			}
			if n := rcv.count(); n != tt.wantAttempts {
				t.Errorf("receiver got %d requests, want %d", n, tt.wantAttempts)
			}
			if !tt.wantWaits(p.waits) {
				t.Errorf("waits = %v, not as expected", p.waits)
			}
		})
	}
}

// TestDeliverResponseCapped: a receiver that streams an endless answer
// does not hold the delivery: at most MaxResponseBytes are read.
func TestDeliverResponseCapped(t *testing.T) {
	rcv := newReceiver(t, nil, func(_ int, w http.ResponseWriter) {
		chunk := []byte(strings.Repeat("x", 32<<10))
		for range 1000 { // 32 MiB if it were all read
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	hosts := []string{rcv.host(t)}
	var p testPolicy
	res := deliver(context.Background(), newHTTPClient(hosts, &countingDialer{}, nil), hosts, p.policy(1), request{url: rcv.URL, publicURL: rcv.URL, body: []byte("{}")})
	if res.Err != nil || res.Status != 200 {
		t.Errorf("deliver = %+v, want 200", res)
	}
}

func TestBackoff(t *testing.T) {
	p := retryPolicy{backoff: time.Second, maxBackoff: 30 * time.Second}
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 5: 16 * time.Second, 6: 30 * time.Second, 40: 30 * time.Second} {
		for range 20 {
			if got := backoff(p, n); got < want/2 || got > want {
				t.Errorf("backoff(%d) = %v, want in [%v, %v]", n, got, want/2, want)
			}
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := map[string]time.Duration{
		"":                              0,
		"5":                             5 * time.Second,
		"-1":                            0,
		"soon":                          0,
		"Thu, 01 Jan 2026 00:00:30 GMT": 30 * time.Second,
		"Wed, 31 Dec 2025 00:00:30 GMT": 0,
	}
	for v, want := range tests {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

// fakeResolver answers from a map.
type fakeResolver map[string][]string

func (f fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	addrs, ok := f[host]
	if !ok {
		return nil, fmt.Errorf("no such host %s", host)
	}
	var out []net.IPAddr
	for _, a := range addrs {
		out = append(out, net.IPAddr{IP: net.ParseIP(a)})
	}
	return out, nil
}

// TestDialResolvedAddressChecked: a listed name that resolves to this
// machine or to the metadata service is not dialed; localhost is; the
// dial goes to the address resolved once, by number.
func TestDialResolvedAddressChecked(t *testing.T) {
	rcv := newReceiver(t, nil, nil)
	_, port, _ := net.SplitHostPort(rcv.host(t))
	tests := []struct {
		name     string
		resolves []string
		wantDial []string
	}{
		{"localhost", []string{"127.0.0.1"}, []string{"127.0.0.1:" + port}},
		{"hooks.example", []string{"127.0.0.1"}, nil},
		{"metadata.example", []string{"169.254.169.254"}, nil},
		{"zero.example", []string{"0.0.0.0"}, nil},
		{"v6.example", []string{"::1", "fe80::1"}, nil},
		// Metadata services outside 169.254.0.0/16: AWS's over IPv6
		// (a unique local address), Alibaba's (shared address space),
		// Oracle's legacy one, and 169.254.169.254 or 127.0.0.1 behind
		// the NAT64 well-known prefix.
		{"imds6.example", []string{"fd00:ec2::254"}, nil},
		{"alibaba.example", []string{"100.100.100.200"}, nil},
		{"oracle.example", []string{"192.0.0.192"}, nil},
		{"nat64.example", []string{"64:ff9b::a9fe:a9fe"}, nil},
		{"nat64lo.example", []string{"64:ff9b::7f00:1"}, nil},
		{"mapped.example", []string{"::ffff:169.254.169.254"}, nil},
		// The refused address is skipped, the good one dialed.
		{"localhost", []string{"169.254.169.254", "127.0.0.1"}, []string{"127.0.0.1:" + port}},
	}
	for _, tt := range tests {
		d := &countingDialer{}
		hosts := []string{tt.name + ":" + port}
		var p testPolicy
		scheme := "https" // never dialed: the guard refuses first
		if tt.name == "localhost" {
			scheme = "http"
		}
		target := scheme + "://" + tt.name + ":" + port + "/"
		c := newHTTPClient(hosts, d, fakeResolver{tt.name: tt.resolves})
		res := deliver(context.Background(), c, hosts, p.policy(3), request{url: target, publicURL: target, body: []byte("{}")})
		if got := d.dialed(); fmt.Sprint(got) != fmt.Sprint(tt.wantDial) {
			t.Errorf("%s -> %v: dialed %v, want %v", tt.name, tt.resolves, got, tt.wantDial)
		}
		if wantOK := tt.wantDial != nil; (res.Err == nil) != wantOK {
			t.Errorf("%s -> %v: deliver = %+v, want ok %v", tt.name, tt.resolves, res, wantOK)
		}
		if tt.wantDial == nil && (res.Attempts != 1 || !strings.Contains(res.Err.Error(), "may not lead there")) {
			t.Errorf("%s -> %v: deliver = %+v, want one attempt refused by the guard", tt.name, tt.resolves, res)
		}
	}
}

// endless is a response body that never ends, counting what was read.
type endless struct{ read int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.read += int64(len(p))
	return len(p), nil
}

func (e *endless) Close() error { return nil }

func TestDrainCapped(t *testing.T) {
	body := &endless{}
	if n := drain(body); n != MaxResponseBytes || body.read > MaxResponseBytes+32<<10 {
		t.Errorf("drain(endless) = %d, read %d bytes; want %d, about as many read", n, body.read, MaxResponseBytes)
	}
}

func TestURLListed(t *testing.T) {
	tests := []struct {
		hosts []string
		url   string
		want  bool
	}{
		{[]string{"prod-1.logic.azure.com"}, "https://prod-1.logic.azure.com:443/workflows/x", true},
		{[]string{"prod-1.logic.azure.com"}, "https://prod-1.logic.azure.com/workflows/x", true},
		{[]string{"prod-1.logic.azure.com:443"}, "https://prod-1.logic.azure.com:443/workflows/x", true},
		{[]string{"prod-1.logic.azure.com"}, "http://prod-1.logic.azure.com:443/x", false},
		{[]string{"prod-1.logic.azure.com"}, "https://prod-1.logic.azure.com:8443/x", false},
		{[]string{"prod-1.logic.azure.com"}, "https://prod-1.logic.azure.com.evil:443/x", false},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := envconfig.URLListed(tt.hosts, u); got != tt.want {
			t.Errorf("urlListed(%q, %s) = %v, want %v", tt.hosts, tt.url, got, tt.want)
		}
	}
}
