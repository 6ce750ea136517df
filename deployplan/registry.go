package deployplan

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
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
// (repository@digest) and fills the services' Registry field.
//
// Only the registries of ro.Hosts are contacted: the image references come
// from the catalog and the rendered manifests (hostile input), so they
// never choose a host deploy-web connects to. An image of a registry the
// list does not name is a registry-not-listed blocker and its registry
// gets no connection; with no list at all, no registry is contacted and
// one warning names the registries that would have been checked. With
// ro.Skip nothing is checked either (one warning).
//
// A listed registry that cannot be reached (network error, timeout, a
// 5xx or 429 after go-containerregistry's retries) makes its services
// "unreachable": the digests are then not proven, which is a warning, not
// a blocker, and its other digests are not tried (registryHostDown). A
// refusal about one repository (401, 403, 400: no credentials for it, a
// bogus name) makes that service "unreachable" with a warning naming the
// repository, and says nothing about the host's other repositories. A
// registry that answers and does not have the digest is a blocker. Credentials come from the static
// `auths` entries of the docker config file only (staticKeychain): no
// credential helper is ever run.
func RegistryCheck(ctx context.Context, plan *ArtifactPlan, ro RegistryOptions, timeout time.Duration, rt http.RoundTripper) ([]Blocker, []string) {
	if ro.Skip {
		plan.RegistryStatus = RegistryNotChecked
		return nil, []string{"registry checks are disabled (registry.skip): digests are not proven"}
	}
	if timeout <= 0 {
		timeout = DefaultRegistryTimeout
	}
	if rt == nil {
		rt = remote.DefaultTransport
	}
	// Registries answer a HEAD (and a token exchange) with a few kilobytes;
	// nothing more is read, error bodies included.
	rt = capAnswers(listedTransport{rt: rt, ro: ro}, "a registry")
	// Credentials: the static auths of the docker config only, never a
	// credential helper (staticKeychain).
	keychain := newStaticKeychain()
	var blockers []Blocker
	var warnings []string
	checked, missing, unreachable, notListed := 0, 0, 0, 0

	// The HEADs run in parallel (registryParallelism at a time); once a
	// registry host failed to answer (registryHostDown), its other digests
	// are not tried.
	// Results are gathered per service, so the output keeps the services'
	// order whatever the timing.
	type result struct {
		host      string
		repo      string // the repository, for a refusal about it alone
		desc      *v1.Descriptor
		err       error
		skip      bool // not checked (bad reference)
		down      bool // its host was already unreachable
		notListed bool // its host is not in registry.hosts: never contacted
		noList    bool // registry.hosts is empty: nothing is contacted
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
		if ro.Insecure {
			opts = append(opts, name.Insecure)
		}
		ref, err := name.NewDigest(img.Repository+"@"+s.Digest, opts...)
		if err != nil {
			results[i] = &result{skip: true}
			continue
		}
		r := &result{host: ref.Context().RegistryStr(), repo: ref.Context().RepositoryStr()}
		results[i] = r
		// The allowlist decides before anything is dialled.
		switch {
		case len(ro.Hosts) == 0:
			r.noList = true
			continue
		case !ro.Lists(r.host):
			r.notListed = true
			continue
		}
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
			if registryHostDown(r.err) {
				mu.Lock()
				down[r.host] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	warned := map[string]bool{}
	var unchecked []string // hosts not contacted for want of a list
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
		case r.noList:
			s.Registry = RegistryNotChecked
			if !contains(unchecked, host) {
				unchecked = append(unchecked, host)
			}
		case r.notListed:
			s.Registry = RegistryNotChecked
			notListed++
			blockers = append(blockers, Blocker{ID: "registry-not-listed", Affected: []string{s.ID},
				Message:     fmt.Sprintf("registry %s is not in registry.hosts: it was not contacted and its digests are not proven", host),
				UnblockHint: fmt.Sprintf("if %s is a registry you trust, add it to registry.hosts; else take the image from a listed registry", host)})
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
		case errors.As(r.err, &terr) && !registryHostDown(r.err):
			// The registry answered about this repository alone.
			s.Registry = RegistryUnreachable
			unreachable++
			if warned[host+"/"+r.repo] {
				continue
			}
			warned[host+"/"+r.repo] = true
			warnings = append(warnings, fmt.Sprintf("registry %s refused %s (%d %s): its digests are not proven, the registry's other repositories are checked as usual; check the image name, and the credentials for %s in the docker config's auths", host, r.repo, terr.StatusCode, http.StatusText(terr.StatusCode), host))
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
	if len(unchecked) > 0 {
		warnings = append(warnings, fmt.Sprintf("registry checks are off: registry.hosts lists no registry, so none was contacted; the digests at %s are not proven (list the registries you trust in registry.hosts)", strings.Join(unchecked, ", ")))
	}
	switch {
	case missing > 0:
		plan.RegistryStatus = RegistryMissing
	case unreachable > 0:
		plan.RegistryStatus = RegistryUnreachable
	case notListed > 0:
		// Some digests were not checked: "verified" would claim them too.
		plan.RegistryStatus = RegistryNotChecked
	case checked > 0:
		plan.RegistryStatus = RegistryVerified
	default:
		plan.RegistryStatus = RegistryNotChecked
	}
	return blockers, warnings
}

// registryHostDown reports whether err says that a registry host failed as
// a whole, so that its other digests are not tried: no HTTP answer at all
// (connection refused or reset, DNS, TLS, a timeout, a request the
// allowlist stopped) or a 5xx, 429 or 408, which go-containerregistry has
// already retried with its backoff. Any other HTTP answer (401, 403, 400,
// 405, ...) is about one repository, as a 404 is, and says nothing about
// the host's other repositories: an image a catalog names wrongly, or one
// without credentials, must not take the verdict of every other digest of
// its registry with it.
func registryHostDown(err error) bool {
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

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// listedTransport sends a request only to a host of registry.hosts, the
// second guard behind the check of each image's registry: a redirect or a
// token service (a WWW-Authenticate realm) that a registry names is a
// request of its own, and goes out only when its host is listed too.
type listedTransport struct {
	rt http.RoundTripper
	ro RegistryOptions
}

func (l listedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !l.ro.Lists(r.URL.Host) {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, fmt.Errorf("deployplan: %q is not in registry.hosts (a registry's redirect or token service): not contacted", r.URL.Host)
	}
	return l.rt.RoundTrip(r)
}
