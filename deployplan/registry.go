package deployplan

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/ociregistry"
)

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
func RegistryCheck(ctx context.Context, plan *ArtifactPlan, ro envconfig.RegistryOptions, timeout time.Duration, rt http.RoundTripper) ([]Blocker, []string) {
	if ro.Skip {
		plan.RegistryStatus = RegistryNotChecked
		return nil, []string{"registry checks are disabled (registry.skip): digests are not proven"}
	}
	if timeout <= 0 {
		timeout = envconfig.DefaultRegistryTimeout
	}
	// The lookups of the in-use services with a digest; the rest are not
	// looked up.
	var lookups []ociregistry.Lookup
	var of []int // the service of each lookup
	for i := range plan.Services {
		s := &plan.Services[i]
		if !s.InUse || !ValidDigest(s.Digest) {
			continue
		}
		img, err := ParseImage(s.Image)
		if err != nil {
			continue
		}
		lookups = append(lookups, ociregistry.Lookup{Repository: img.Repository, Digest: s.Digest})
		of = append(of, i)
	}
	o := ociregistry.Options{Insecure: ro.Insecure, Timeout: timeout, Transport: rt}
	if len(ro.Hosts) > 0 {
		o.Listed = ro.Lists
	}
	results := make([]*ociregistry.Result, len(plan.Services))
	for k, r := range ociregistry.Head(ctx, lookups, o) {
		results[of[k]] = &r
	}
	var blockers []Blocker
	var warnings []string
	checked, missing, unreachable, notListed := 0, 0, 0, 0
	warned := map[string]bool{}
	var unchecked []string // hosts not contacted for want of a list
	for i, r := range results {
		if r == nil {
			continue
		}
		s := &plan.Services[i]
		host := r.Host
		switch {
		case r.BadRef:
			s.Registry = RegistryNotChecked
		case r.NoList:
			s.Registry = RegistryNotChecked
			if !contains(unchecked, host) {
				unchecked = append(unchecked, host)
			}
		case r.NotListed:
			s.Registry = RegistryNotChecked
			notListed++
			blockers = append(blockers, Blocker{ID: "registry-not-listed", Affected: []string{s.ID},
				Message:     fmt.Sprintf("registry %s is not in registry.hosts: it was not contacted and its digests are not proven", host),
				UnblockHint: fmt.Sprintf("if %s is a registry you trust, add it to registry.hosts; else take the image from a listed registry", host)})
		case r.Skipped:
			s.Registry = RegistryUnreachable
			unreachable++
		case r.Err == nil && r.Desc.Digest.String() == s.Digest:
			s.Registry = RegistryPresent
			checked++
		case r.Err == nil:
			s.Registry = RegistryMissing
			missing++
			blockers = append(blockers, Blocker{ID: "registry-digest-mismatch:" + s.ID, Message: fmt.Sprintf("registry %s answered digest %s for %s, not %s", host, r.Desc.Digest, s.ID, s.Digest), UnblockHint: "record the pushed digest in the catalog"})
		case r.Status == http.StatusNotFound:
			s.Registry = RegistryMissing
			missing++
			blockers = append(blockers, Blocker{ID: "registry-missing:" + s.ID, Message: fmt.Sprintf("registry %s has no manifest %s for service %s", host, s.Digest, s.ID),
				UnblockHint: fmt.Sprintf("push %s (digest %s), or fix the catalog digest", s.Image, s.Digest)})
		case r.Status != 0 && !ociregistry.HostDown(r.Err):
			// The registry answered about this repository alone.
			s.Registry = RegistryUnreachable
			unreachable++
			if warned[host+"/"+r.Repo] {
				continue
			}
			warned[host+"/"+r.Repo] = true
			warnings = append(warnings, fmt.Sprintf("registry %s refused %s (%d %s): its digests are not proven, the registry's other repositories are checked as usual; check the image name, and the credentials for %s in the docker config's auths", host, r.Repo, r.Status, http.StatusText(r.Status), host))
		default:
			s.Registry = RegistryUnreachable
			unreachable++
			if warned[host] {
				continue
			}
			warned[host] = true
			why := shortErr(r.Err)
			if isTimeout(r.Err) && ctx.Err() == nil {
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

// shortErr is err's text cut at 200 bytes, for a warning or a message.
func shortErr(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
