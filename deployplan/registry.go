package deployplan

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
)

// registryParallelism bounds the registry HEAD requests in flight.
const registryParallelism = 8

// Registry statuses of the artifact plan and of each service.
const (
	RegistryVerified    = "verified"
	RegistryPresent     = "present"
	RegistryMissing     = "missing"
	RegistryUnreachable = "unreachable"
	RegistryNotChecked  = "not-checked"
)

// RegistryCheck sends a HEAD request for each in-use service's digest
// (repository@digest) and fills the services' Registry field. A registry
// that cannot be reached (network error, timeout, no credentials) makes
// its services "unreachable": the digests are then not proven, which is a
// warning, not a blocker. A registry that answers and does not have the
// digest is a blocker. Credentials come from the static `auths` entries
// of the docker config file only (staticKeychain): no credential helper is
// ever run for a host the catalog or the manifests name.
func RegistryCheck(ctx context.Context, plan *ArtifactPlan, insecure bool, timeout time.Duration, rt http.RoundTripper) ([]Blocker, []string) {
	if timeout <= 0 {
		timeout = DefaultRegistryTimeout
	}
	if rt == nil {
		rt = remote.DefaultTransport
	}
	// Registries answer a HEAD (and a token exchange) with a few kilobytes;
	// nothing more is read, error bodies included.
	rt = &capTransport{rt: rt, max: maxResponseBytes, what: "a registry"}
	// Credentials: the static auths of the docker config only, never a
	// credential helper (staticKeychain).
	keychain := newStaticKeychain()
	var blockers []Blocker
	var warnings []string
	checked, missing, unreachable := 0, 0, 0

	// The HEADs run in parallel (registryParallelism at a time); once a
	// registry host failed to answer, its other digests are not tried.
	// Results are gathered per service, so the output keeps the services'
	// order whatever the timing.
	type result struct {
		host string
		desc *v1.Descriptor
		err  error
		skip bool // not checked (bad reference)
		down bool // its host was already unreachable
	}
	results := make([]*result, len(plan.Services))
	var mu sync.Mutex
	down := map[string]bool{}
	sem := make(chan struct{}, registryParallelism)
	var wg sync.WaitGroup
	for i := range plan.Services {
		s := &plan.Services[i]
		if !s.InUse || !ValidDigest(s.Digest) {
			continue
		}
		img, err := ParseImage(s.Image)
		if err != nil {
			continue
		}
		var opts []name.Option
		if insecure {
			opts = append(opts, name.Insecure)
		}
		ref, err := name.NewDigest(img.Repository+"@"+s.Digest, opts...)
		if err != nil {
			results[i] = &result{skip: true}
			continue
		}
		r := &result{host: ref.Context().RegistryStr()}
		results[i] = r
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			mu.Lock()
			isDown := down[r.host]
			mu.Unlock()
			if isDown {
				r.down = true
				return
			}
			rctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			r.desc, r.err = remote.Head(ref, remote.WithContext(rctx), remote.WithAuthFromKeychain(keychain), remote.WithTransport(rt))
			var terr *transport.Error
			if r.err != nil && !(errors.As(r.err, &terr) && terr.StatusCode == http.StatusNotFound) {
				mu.Lock()
				down[r.host] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	warned := map[string]bool{}
	for i, r := range results {
		if r == nil {
			continue
		}
		s := &plan.Services[i]
		host := r.host
		var terr *transport.Error
		switch {
		case r.skip:
			s.Registry = RegistryNotChecked
		case r.down:
			s.Registry = RegistryUnreachable
			unreachable++
		case r.err == nil && r.desc.Digest.String() == s.Digest:
			s.Registry = RegistryPresent
			checked++
		case r.err == nil:
			s.Registry = RegistryMissing
			missing++
			blockers = append(blockers, Blocker{ID: "registry-digest-mismatch:" + s.ID, Message: fmt.Sprintf("registry %s answered digest %s for %s, not %s", host, r.desc.Digest, s.ID, s.Digest), UnblockHint: "record the pushed digest in the catalog"})
		case errors.As(r.err, &terr) && terr.StatusCode == http.StatusNotFound:
			s.Registry = RegistryMissing
			missing++
			blockers = append(blockers, Blocker{ID: "registry-missing:" + s.ID, Message: fmt.Sprintf("registry %s has no manifest %s for service %s", host, s.Digest, s.ID),
				UnblockHint: fmt.Sprintf("push %s (digest %s), or fix the catalog digest", s.Image, s.Digest)})
		default:
			s.Registry = RegistryUnreachable
			unreachable++
			if warned[host] {
				continue
			}
			warned[host] = true
			why := shortErr(r.err)
			if isTimeout(r.err) && ctx.Err() == nil {
				why = fmt.Sprintf("no answer within %s (limits.registryTimeout)", timeout)
			}
			warnings = append(warnings, fmt.Sprintf("registry %s could not be checked (%s): digests there are not proven", host, why))
		}
	}
	switch {
	case missing > 0:
		plan.RegistryStatus = RegistryMissing
	case unreachable > 0:
		plan.RegistryStatus = RegistryUnreachable
	case checked > 0:
		plan.RegistryStatus = RegistryVerified
	default:
		plan.RegistryStatus = RegistryNotChecked
	}
	return blockers, warnings
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
