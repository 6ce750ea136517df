package deployplan

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/hanzoai/deploy-web/envconfig"
	"k8s.io/client-go/rest"
)

// countingRegistry is go-containerregistry's registry on loopback that
// counts the requests it receives once armed (the pushes that fill it
// are not counted).
type countingRegistry struct {
	host  string
	armed atomic.Bool
	n     atomic.Int64
}

func newCountingRegistry(t *testing.T) *countingRegistry {
	t.Helper()
	c := &countingRegistry{}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.armed.Load() {
			c.n.Add(1)
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c.host = strings.TrimPrefix(srv.URL, "http://")
	return c
}

// hostRecorder is the registry transport of a plan: it records every
// host a request is sent to, whoever chose it.
type hostRecorder struct {
	mu    sync.Mutex
	hosts []string
}

func (h *hostRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	if !slices.Contains(h.hosts, r.URL.Host) {
		h.hosts = append(h.hosts, r.URL.Host)
	}
	h.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// TestRegistryContactsListedHostsOnly: a plan contacts only the
// registries of registry.hosts. Of two real registries on loopback, the
// listed one is asked for its digest; the other, named by the catalog and
// the manifests, gets no request at all, and the plan carries one
// registry-not-listed blocker naming its services (a Docker Hub image
// too: index.docker.io is never dialled). With no list, neither is
// contacted and one warning names both hosts.
func TestRegistryContactsListedHostsOnly(t *testing.T) {
	listed, unlisted := newCountingRegistry(t), newCountingRegistry(t)
	apiDigest := pushImage(t, listed.host+"/acme/api:"+commitA)
	workerDigest := pushImage(t, unlisted.host+"/acme/worker:"+commitA)
	jobDigest := pushImage(t, unlisted.host+"/acme/job:"+commitA)
	redisDigest := "sha256:" + strings.Repeat("c", 64)

	deploy := func(name, image string) string {
		return fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s}\nspec:\n  selector: {matchLabels: {app: %s}}\n  template:\n    metadata: {labels: {app: %s}}\n    spec:\n      containers:\n        - {name: main, image: %q}\n", name, name, name, image)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"m/kustomization.yaml": "resources: [api.yaml, worker.yaml, job.yaml, redis.yaml]\n",
		"m/api.yaml":           deploy("api", listed.host+"/acme/api:"+commitA),
		"m/worker.yaml":        deploy("worker", unlisted.host+"/acme/worker:"+commitA),
		"m/job.yaml":           deploy("job", unlisted.host+"/acme/job:"+commitA),
		"m/redis.yaml":         deploy("redis", "redis:7.4@"+redisDigest),
		"catalog.json": fmt.Sprintf(`{"commit": %q, "services": [
  {"id": "api", "image": "%s/acme/api:%s", "digest": %q, "published": true},
  {"id": "worker", "image": "%s/acme/worker:%s", "digest": %q, "published": true},
  {"id": "job", "image": "%s/acme/job:%s", "digest": %q, "published": true}],
 "thirdParty": [{"image": "docker.io/library/redis:7.4@%s"}]}`, commitA,
			listed.host, commitA, apiDigest, unlisted.host, commitA, workerDigest, unlisted.host, commitA, jobDigest, redisDigest),
	})
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(`environments:
  - {name: listed, cluster: {context: test}, namespace: dev, source: {path: m}, catalog: catalog.json, registry: {hosts: [%q]}}
  - {name: nolist, cluster: {context: test}, namespace: dev, source: {path: m}, catalog: catalog.json}
`, listed.host)), dir)
	if err != nil {
		t.Fatal(err)
	}
	// The cluster refuses connections: the registry step does not need it.
	refused := &rest.Config{Host: "https://127.0.0.1:1"}
	plan := func(t *testing.T, envName string) (*Report, []string) {
		t.Helper()
		env, err := cfg.Env(envName)
		if err != nil {
			t.Fatal(err)
		}
		listed.n.Store(0)
		unlisted.n.Store(0)
		listed.armed.Store(true)
		unlisted.armed.Store(true)
		rec := &hostRecorder{}
		rep, err := Plan(context.Background(), env, Options{RestConfig: refused, RegistryTransport: rec})
		listed.armed.Store(false)
		unlisted.armed.Store(false)
		if err != nil {
			t.Fatal(err)
		}
		b, err := rep.JSON()
		if err != nil {
			t.Fatal(err)
		}
		if vs := ValidateReport(b); len(vs) > 0 {
			t.Errorf("the report breaks the contract: %v", vs)
		}
		return rep, rec.hosts
	}
	registryOf := func(d DeployApply) map[string]string {
		got := map[string]string{}
		for _, s := range d.ArtifactPlan.Services {
			got[s.ID] = s.Registry
		}
		return got
	}
	redisID := "index.docker.io/library/redis:7.4"

	t.Run("listed", func(t *testing.T) {
		rep, hosts := plan(t, "listed")
		d := rep.DeployApply
		if n := unlisted.n.Load(); n != 0 {
			t.Errorf("the unlisted registry %s got %d requests, want 0", unlisted.host, n)
		}
		if n := listed.n.Load(); n == 0 {
			t.Errorf("the listed registry %s got no request: its digest was not checked", listed.host)
		}
		if !slices.Equal(hosts, []string{listed.host}) {
			t.Errorf("registry requests went to %v, want %s only", hosts, listed.host)
		}
		want := map[string]string{"api": RegistryPresent, "worker": RegistryNotChecked, "job": RegistryNotChecked, redisID: RegistryNotChecked}
		if got := registryOf(d); !mapsEqual(got, want) {
			t.Errorf("services' registry = %v, want %v", got, want)
		}
		if d.ArtifactPlan.RegistryStatus != RegistryNotChecked {
			t.Errorf("registryStatus = %q, want %q (not every digest was checked)", d.ArtifactPlan.RegistryStatus, RegistryNotChecked)
		}
		var nl *Blocker
		for i, b := range d.RemainingBlockers {
			if b.ID == "registry-not-listed" {
				if nl != nil {
					t.Errorf("two registry-not-listed blockers: %+v", d.RemainingBlockers)
				}
				nl = &d.RemainingBlockers[i]
			}
		}
		if nl == nil {
			t.Fatalf("blockers %+v: want registry-not-listed", d.RemainingBlockers)
		}
		if want := []string{"worker", "job", redisID}; !slices.Equal(sorted(nl.Affected), sorted(want)) {
			t.Errorf("registry-not-listed affected = %v, want %v", nl.Affected, want)
		}
		for _, h := range []string{unlisted.host, "index.docker.io"} {
			if !strings.Contains(nl.Message, h) || !strings.Contains(nl.UnblockHint, h) {
				t.Errorf("registry-not-listed = %+v, want message and hint naming %s", nl, h)
			}
		}
		if d.Conclusion.Status != StatusBlocked {
			t.Errorf("conclusion %q, want blocked", d.Conclusion.Status)
		}
	})

	t.Run("no list", func(t *testing.T) {
		rep, hosts := plan(t, "nolist")
		d := rep.DeployApply
		if n := listed.n.Load() + unlisted.n.Load(); n != 0 || len(hosts) != 0 {
			t.Errorf("with no registry.hosts the registries got %d requests (hosts %v), want none", n, hosts)
		}
		for id, got := range registryOf(d) {
			if got != RegistryNotChecked {
				t.Errorf("service %s registry = %q, want %q", id, got, RegistryNotChecked)
			}
		}
		if d.ArtifactPlan.RegistryStatus != RegistryNotChecked {
			t.Errorf("registryStatus = %q, want %q", d.ArtifactPlan.RegistryStatus, RegistryNotChecked)
		}
		for _, b := range d.RemainingBlockers {
			if strings.HasPrefix(b.ID, "registry-") {
				t.Errorf("blocker %+v: with no list the registries are a warning, not a blocker", b)
			}
		}
		var ws []string
		for _, w := range d.Warnings {
			if strings.Contains(w, "registry.hosts") {
				ws = append(ws, w)
			}
		}
		if len(ws) != 1 {
			t.Fatalf("warnings %q: want one about registry.hosts", d.Warnings)
		}
		for _, h := range []string{listed.host, unlisted.host, "index.docker.io"} {
			if !strings.Contains(ws[0], h) {
				t.Errorf("warning %q does not name %s", ws[0], h)
			}
		}
	})
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestRegistryOptionsLists: hosts match exactly (host and port), letter
// case aside; Docker Hub's images are index.docker.io, listed as that or
// as docker.io; registry-1.docker.io is another host.
func TestRegistryOptionsLists(t *testing.T) {
	tests := []struct {
		hosts []string
		host  string
		want  bool
	}{
		{[]string{"reg.example:5000"}, "reg.example:5000", true},
		{[]string{"reg.example"}, "reg.example:5000", false},
		{[]string{"reg.example:5000"}, "reg.example", false},
		{[]string{"reg.example:5000"}, "reg.example:5001", false},
		{[]string{"Reg.Example"}, "reg.example", true},
		{[]string{"reg.example"}, "evil.reg.example", false},
		{[]string{"reg.example"}, "reg.example.evil", false},
		{[]string{"docker.io"}, "index.docker.io", true},
		{[]string{"index.docker.io"}, "index.docker.io", true},
		{[]string{"docker.io"}, "registry-1.docker.io", false},
		{[]string{"registry-1.docker.io"}, "index.docker.io", false},
		{nil, "reg.example", false},
		// Unicode case folding would turn these into the listed names
		// (U+0130 and the Kelvin sign lower to ASCII i and k), while
		// net/http dials their IDNA forms, other domains: never listed.
		{[]string{"registry.gitlab.com"}, "registry.g\u0130tlab.com", false},
		{[]string{"key.example"}, "\u212Aey.example", false},
		{[]string{"reg.example"}, "reg.example\x00", false},
	}
	for _, tt := range tests {
		if got := (envconfig.RegistryOptions{Hosts: tt.hosts}).Lists(tt.host); got != tt.want {
			t.Errorf("RegistryOptions{Hosts: %q}.Lists(%q) = %v, want %v", tt.hosts, tt.host, got, tt.want)
		}
	}
	// The host an image is matched by is the one go-containerregistry dials.
	for image, want := range map[string]string{
		"nginx": "index.docker.io", "docker.io/library/nginx": "index.docker.io", "index.docker.io/library/nginx": "index.docker.io",
		"registry-1.docker.io/library/nginx": "registry-1.docker.io", "ghcr.io/acme/api": "ghcr.io", "127.0.0.1:5000/acme/api": "127.0.0.1:5000",
	} {
		plan := &ArtifactPlan{Services: []ArtifactService{{ID: "x", Image: image, Digest: "sha256:" + strings.Repeat("a", 64), InUse: true}}}
		bs, _ := RegistryCheck(context.Background(), plan, envconfig.RegistryOptions{Hosts: []string{"listed.invalid"}}, 0, roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			t.Errorf("RegistryCheck(%s) sent a request to %s", image, r.URL.Host)
			return nil, fmt.Errorf("no")
		}))
		bs = dedupeBlockers(bs)
		if len(bs) != 1 || bs[0].ID != "registry-not-listed" || !strings.Contains(bs[0].Message, "registry "+want+" ") {
			t.Errorf("RegistryCheck(%s) blockers = %+v, want registry-not-listed naming %s", image, bs, want)
		}
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestRegistryRedirectsAndRealmsStayListed: a listed registry cannot send
// the digest check to a host nobody listed. One listed registry answers
// every request with a redirect to another server, a second asks for a
// token at that server (its WWW-Authenticate realm); the other server is
// never contacted and both digests stay unproven. Listed too, the realm
// is asked.
func TestRegistryRedirectsAndRealmsStayListed(t *testing.T) {
	var elsewhere atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		http.Error(w, "no", http.StatusNotFound)
	}))
	t.Cleanup(other.Close)
	otherHost := strings.TrimPrefix(other.URL, "http://")
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	t.Cleanup(redirecting.Close)
	realm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="`+other.URL+`/token",service="reg"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(realm.Close)
	redirectHost := strings.TrimPrefix(redirecting.URL, "http://")
	realmHost := strings.TrimPrefix(realm.URL, "http://")
	digest := "sha256:" + strings.Repeat("d", 64)
	check := func(hosts ...string) *ArtifactPlan {
		plan := &ArtifactPlan{Services: []ArtifactService{
			{ID: "redirected", Image: redirectHost + "/acme/api", Digest: digest, InUse: true},
			{ID: "realm", Image: realmHost + "/acme/worker", Digest: digest, InUse: true},
		}}
		RegistryCheck(context.Background(), plan, envconfig.RegistryOptions{Hosts: hosts}, 0, http.DefaultTransport)
		return plan
	}

	plan := check(redirectHost, realmHost)
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the unlisted host %s got %d requests through a listed registry's redirect or token realm, want 0", otherHost, n)
	}
	for _, s := range plan.Services {
		if s.Registry == RegistryPresent {
			t.Errorf("service %s: registry %q, want the digest unproven", s.ID, s.Registry)
		}
	}
	// The control: with the other host listed as well, the redirect and
	// the realm are followed to it.
	check(redirectHost, realmHost, otherHost)
	if elsewhere.Load() == 0 {
		t.Errorf("with %s listed, neither the redirect nor the token realm reached it: the check above proves nothing", otherHost)
	}
}
