// Package ociregistry is deploy-web's OCI registry client: it asks
// registries whether they hold image digests (a HEAD per digest), only
// the registries the caller lists, with the static credentials of the
// docker config (never a credential helper), under a deadline per request
// and a cap on every answer. What the answers mean for a plan (blockers,
// warnings, statuses) is deployplan's RegistryCheck.
package ociregistry

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/hanzoai/deploy-web/internal/boundedhttp"
	"github.com/hanzoai/deploy-web/internal/hostlist"
	"github.com/hanzoai/deploy-web/internal/limit"
)

// Parallelism bounds the HEAD requests in flight.
const Parallelism = 8

// DefaultTimeout bounds a request when Options.Timeout is unset.
const DefaultTimeout = 5 * time.Second

// MaxAnswerBytes caps every answer of a registry: a HEAD (and a token
// exchange) is answered with a few kilobytes; nothing more is read, error
// bodies included.
const MaxAnswerBytes = 1 << 20

// Docker Hub's registry host, and the alias image references use, which
// go-containerregistry rewrites to it.
const (
	dockerHub      = "index.docker.io"
	dockerHubAlias = "docker.io"
)

// CanonicalHost is the form registry hosts are compared in
// (hostlist.Canonical: ASCII lower case, "" for a host with a byte outside
// printable ASCII), Docker Hub's alias as the host it stands for.
func CanonicalHost(h string) string {
	h = hostlist.Canonical(h)
	if h == dockerHubAlias {
		return dockerHub
	}
	return h
}

// Options of Head.
type Options struct {
	// Listed says whether a host may be contacted (registry.hosts); nil
	// is no list: nothing is contacted.
	Listed func(host string) bool
	// Insecure allows plain HTTP registries.
	Insecure bool
	// Timeout bounds each request (DefaultTimeout when unset).
	Timeout time.Duration
	// Transport is the HTTP transport (nil: go-containerregistry's
	// default); Head sends through it only to listed hosts, answers
	// capped at MaxAnswerBytes.
	Transport http.RoundTripper
}

// Lookup is one digest to look up: repository@digest.
type Lookup struct {
	Repository, Digest string
}

// Result is what Head learnt of one Lookup.
type Result struct {
	// Host and Repo are the registry and repository of the reference.
	Host, Repo string
	// BadRef: the reference does not parse; nothing was asked.
	BadRef bool
	// NoList: Options.Listed is nil, NotListed: it does not list Host;
	// nothing was asked.
	NoList, NotListed bool
	// Skipped: Host failed as a whole (HostDown) on another lookup;
	// nothing was asked.
	Skipped bool
	// Desc is the registry's answer, Err its failure.
	Desc *v1.Descriptor
	Err  error
	// Status is the HTTP status of a registry's refusal in Err (0 when
	// the registry did not answer).
	Status int
}

// Head asks each lookup's registry for its manifest (a HEAD), Parallelism
// at a time, each under o.Timeout; once a host failed as a whole
// (HostDown), its other lookups are skipped. Results are in the lookups'
// order whatever the timing.
func Head(ctx context.Context, lookups []Lookup, o Options) []Result {
	rt := o.Transport
	if rt == nil {
		rt = remote.DefaultTransport
	}
	if o.Listed != nil {
		rt = listedTransport{rt: rt, listed: o.Listed}
	}
	rt = boundedhttp.CapBodies(rt, MaxAnswerBytes, func() error {
		return fmt.Errorf("ociregistry: an answer is larger than %d bytes", MaxAnswerBytes)
	})
	timeout := limit.Or(o.Timeout, DefaultTimeout)
	keychain := newStaticKeychain()
	results := make([]Result, len(lookups))
	var mu sync.Mutex
	down := map[string]bool{}
	sem := make(chan struct{}, Parallelism)
	var wg sync.WaitGroup
	for i, l := range lookups {
		r := &results[i]
		var opts []name.Option
		if o.Insecure {
			opts = append(opts, name.Insecure)
		}
		ref, err := name.NewDigest(l.Repository+"@"+l.Digest, opts...)
		if err != nil {
			r.BadRef = true
			continue
		}
		r.Host, r.Repo = ref.Context().RegistryStr(), ref.Context().RepositoryStr()
		// The allowlist decides before anything is dialled.
		switch {
		case o.Listed == nil:
			r.NoList = true
			continue
		case !o.Listed(r.Host):
			r.NotListed = true
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			mu.Lock()
			isDown := down[r.Host]
			mu.Unlock()
			if isDown {
				r.Skipped = true
				return
			}
			rctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			r.Desc, r.Err = remote.Head(ref, remote.WithContext(rctx), remote.WithAuthFromKeychain(keychain), remote.WithTransport(rt))
			var terr *transport.Error
			if errors.As(r.Err, &terr) {
				r.Status = terr.StatusCode
			}
			if HostDown(r.Err) {
				mu.Lock()
				down[r.Host] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return results
}

// HostDown reports whether err says that a registry host failed as
// a whole, so that its other digests are not tried: no HTTP answer at all
// (connection refused or reset, DNS, TLS, a timeout, a request the
// allowlist stopped) or a 5xx, 429 or 408, which go-containerregistry has
// already retried with its backoff. Any other HTTP answer (401, 403, 400,
// 405, ...) is about one repository, as a 404 is, and says nothing about
// the host's other repositories: an image a catalog names wrongly, or one
// without credentials, must not take the verdict of every other digest of
// its registry with it.
func HostDown(err error) bool {
	if err == nil {
		return false
	}
	var terr *transport.Error
	if !errors.As(err, &terr) {
		return true
	}
	switch c := terr.StatusCode; {
	case c >= 500, c == http.StatusTooManyRequests, c == http.StatusRequestTimeout:
		return true
	}
	return false
}

// listedTransport sends a request only to a host of registry.hosts, the
// second guard behind the check of each image's registry: a redirect or a
// token service (a WWW-Authenticate realm) that a registry names is a
// request of its own, and goes out only when its host is listed too.
type listedTransport struct {
	rt     http.RoundTripper
	listed func(host string) bool
}

func (l listedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !l.listed(r.URL.Host) {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, fmt.Errorf("ociregistry: %q is not in registry.hosts (a registry's redirect or token service): not contacted", r.URL.Host)
	}
	return l.rt.RoundTrip(r)
}
