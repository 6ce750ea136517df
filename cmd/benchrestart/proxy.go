package main

import (
	"context"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
)

// proxy is the loopback load balancer in front of the replicas: round
// robin over the replicas in rotation, as a Service's endpoints are (a
// replica leaves the rotation before its SIGTERM and comes back once
// ready). It does not retry a request a replica failed: what fails here
// fails for a browser behind a real load balancer.
type proxy struct {
	mu       sync.Mutex
	backends []*url.URL
	in       []bool
	next     int

	errors atomic.Int64 // requests the proxy answered 502 or 503
	rp     *httputil.ReverseProxy
}

func newProxy(backends []string) (*proxy, error) {
	p := &proxy{in: make([]bool, len(backends))}
	for _, b := range backends {
		u, err := url.Parse(b)
		if err != nil {
			return nil, err
		}
		p.backends = append(p.backends, u)
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(r.In.Context().Value(backendKey{}).(*url.URL))
			r.Out.Host = r.In.Host // the site's own host: cookies, origins, redirects
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			p.errors.Add(1)
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	return p, nil
}

type backendKey struct{}

// set puts replica i in or out of the rotation.
func (p *proxy) set(i int, in bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.in[i] = in
}

// pick returns the next replica in rotation, or nil when none is.
func (p *proxy) pick() *url.URL {
	p.mu.Lock()
	defer p.mu.Unlock()
	for range p.backends {
		i := p.next % len(p.backends)
		p.next++
		if p.in[i] {
			return p.backends[i]
		}
	}
	return nil
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b := p.pick()
	if b == nil {
		p.errors.Add(1)
		http.Error(w, "no replica in rotation", http.StatusServiceUnavailable)
		return
	}
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), backendKey{}, b)))
}
