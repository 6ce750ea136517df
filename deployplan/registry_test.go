package deployplan

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/ociregistry"
)

// pushRandom pushes a small random image to host/acme/api:tag and returns
// its digest.
func pushRandom(t *testing.T, host, tag string) string {
	t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(fmt.Sprintf("%s/acme/api:%s", host, tag))
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// registryScenarios runs the digest checks against a registry at host.
func registryScenarios(t *testing.T, host string) {
	pushed := pushRandom(t, host, commitA)
	absent := "sha256:" + strings.Repeat("0", 64)
	closed := closedPort(t)
	tests := []struct {
		name         string
		services     []ArtifactService
		wantStatus   string
		wantBlockers []string
		wantWarn     bool
	}{
		{"present", []ArtifactService{{ID: "api", Image: host + "/acme/api:" + commitA, Digest: pushed, InUse: true}}, RegistryVerified, nil, false},
		{"missing digest", []ArtifactService{{ID: "api", Image: host + "/acme/api:" + commitA, Digest: absent, InUse: true}}, RegistryMissing, []string{"registry-missing:api"}, false},
		{"missing repository", []ArtifactService{{ID: "web", Image: host + "/acme/web:" + commitA, Digest: pushed, InUse: true}}, RegistryMissing, []string{"registry-missing:web"}, false},
		{"unreachable registry", []ArtifactService{{ID: "api", Image: closed + "/acme/api:" + commitA, Digest: pushed, InUse: true}}, RegistryUnreachable, nil, true},
		{"not in use is not checked", []ArtifactService{{ID: "api", Image: host + "/acme/api:" + commitA, Digest: absent}}, RegistryNotChecked, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := &ArtifactPlan{Services: tt.services}
			bs, ws := RegistryCheck(context.Background(), plan, envconfig.RegistryOptions{Hosts: []string{host, closed}}, 5*time.Second, nil)
			if plan.RegistryStatus != tt.wantStatus {
				t.Errorf("RegistryStatus = %q, want %q (warnings %v)", plan.RegistryStatus, tt.wantStatus, ws)
			}
			got := ids(bs)
			if len(got) != len(tt.wantBlockers) || (len(got) > 0 && got[0] != tt.wantBlockers[0]) {
				t.Errorf("blockers = %v, want %v", got, tt.wantBlockers)
			}
			if (len(ws) > 0) != tt.wantWarn {
				t.Errorf("warnings = %v, want some: %v", ws, tt.wantWarn)
			}
		})
	}
}

// thirdPartyRegistryScenario: a third-party image admitted by the
// catalog's thirdParty list is HEAD-checked like a service's: present when
// the registry has its digest, a registry-missing blocker naming it when
// not.
func thirdPartyRegistryScenario(t *testing.T, host string) {
	t.Run("third party through the gates", func(t *testing.T) {
		pushed := pushImage(t, host+"/library/redis:7.4")
		absent := "sha256:" + strings.Repeat("0", 64)
		for _, tt := range []struct {
			digest, want string
		}{{pushed, RegistryPresent}, {absent, RegistryMissing}} {
			img := host + "/library/redis:7.4@" + tt.digest
			cat := &Catalog{Mode: CatalogModeCommit, Commit: commitA, ThirdParty: []ThirdPartyImage{{Image: img}}}
			ws := []Workload{{Kind: "StatefulSet", Name: "cache", Containers: []Container{{Name: "redis", Image: img}}}}
			if bs := SourceChecks(ws, cat, envconfig.EnvMirrors{}); len(bs) != 0 {
				t.Fatalf("SourceChecks = %+v, want none", bs)
			}
			plan, bs := ArtifactGates(ws, cat, commitA, nil)
			if len(bs) != 0 || len(plan.Services) != 1 || !plan.Services[0].ThirdParty {
				t.Fatalf("ArtifactGates = %+v, %+v", plan, bs)
			}
			bs, _ = RegistryCheck(context.Background(), &plan, envconfig.RegistryOptions{Hosts: []string{host}}, 5*time.Second, nil)
			bs = dedupeBlockers(bs)
			if got := plan.Services[0].Registry; got != tt.want {
				t.Errorf("digest %s: registry %q, want %q", tt.digest, got, tt.want)
			}
			if tt.want == RegistryMissing && (len(bs) != 1 || bs[0].ID != "registry-missing" || len(bs[0].Affected) != 1 || bs[0].Affected[0] != host+"/library/redis:7.4") {
				t.Errorf("blockers = %+v, want registry-missing naming the image", bs)
			}
		}
	})
}

func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestRegistryCheckInProcess runs against go-containerregistry's own
// registry on loopback.
func TestRegistryCheckInProcess(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	registryScenarios(t, strings.TrimPrefix(srv.URL, "http://"))
	thirdPartyRegistryScenario(t, strings.TrimPrefix(srv.URL, "http://"))
}

// TestRegistryCheckDockerRegistry runs against Debian's docker-registry
// (the CNCF distribution registry) on loopback.
func TestRegistryCheckDockerRegistry(t *testing.T) {
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		if os.Getenv("DEPLOY_WEB_REQUIRE_DOCKER_REGISTRY") != "" {
			t.Fatal("docker-registry is not installed: apt-get install -y docker-registry")
		}
		t.Skip("docker-registry is not installed (apt-get install -y docker-registry)")
	}
	dir := t.TempDir()
	addr := closedPort(t)
	cfg := fmt.Sprintf("version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\nhttp:\n  addr: %s\n", filepath.Join(dir, "data"), addr)
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve", cfgPath)
	logf, _ := os.Create(filepath.Join(dir, "registry.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait(); logf.Close() })
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			logText, _ := os.ReadFile(filepath.Join(dir, "registry.log"))
			t.Fatalf("docker-registry did not start: %v\n%s", err, logText)
		}
		time.Sleep(100 * time.Millisecond)
	}
	registryScenarios(t, addr)
	thirdPartyRegistryScenario(t, addr)
}

// TestNetworkStepsThatNeverAnswer: a registry and a health check that
// accept and never answer end at their deadlines with a clear message; a
// registry that answers an endless error body is cut at the cap.
func TestNetworkStepsThatNeverAnswer(t *testing.T) {
	hang, accepted := hangListener(t)
	digest := "sha256:" + strings.Repeat("1", 64)
	plan := &ArtifactPlan{Services: []ArtifactService{{ID: "api", Image: hang + "/acme/api:" + commitA, Digest: digest, InUse: true}}}
	_, ws := RegistryCheck(context.Background(), plan, envconfig.RegistryOptions{Hosts: []string{hang}}, 200*time.Millisecond, nil)
	if plan.RegistryStatus != RegistryUnreachable || len(ws) != 1 || !strings.Contains(ws[0], "no answer within 200ms (limits.registryTimeout)") {
		t.Errorf("RegistryCheck(never answers) = %q, %v; want unreachable, the registry timeout", plan.RegistryStatus, ws)
	}

	rs := runHealthChecks(context.Background(), []envconfig.HealthCheck{{Name: "api", URL: "http://" + hang + "/healthz", Required: true}}, nil, 200*time.Millisecond)
	if len(rs) != 1 || rs[0].OK || rs[0].Message != "no answer within 200ms (limits.healthCheckTimeout)" {
		t.Errorf("health check (never answers) = %+v, want failed at the health-check timeout", rs)
	}
	if accepted.Load() < 2 {
		t.Errorf("the never-answering server got %d connections, want the registry and the health check", accepted.Load())
	}

	// An endless error body: the check ends, having read a bounded part.
	var served atomic.Int64
	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		buf := make([]byte, 32<<10)
		for served.Load() < 256<<20 {
			n, err := w.Write(buf)
			served.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	endlessHost := strings.TrimPrefix(endless.URL, "http://")
	plan = &ArtifactPlan{Services: []ArtifactService{{ID: "api", Image: endlessHost + "/acme/api:" + commitA, Digest: digest, InUse: true}}}
	_, ws = RegistryCheck(context.Background(), plan, envconfig.RegistryOptions{Hosts: []string{endlessHost}, Insecure: true}, 10*time.Second, nil)
	endless.Close() // waits for the handler
	if plan.RegistryStatus != RegistryUnreachable || len(ws) != 1 {
		t.Errorf("RegistryCheck(endless body) = %q, %v; want unreachable", plan.RegistryStatus, ws)
	}
	if n := served.Load(); n >= 256<<20 {
		t.Errorf("the registry check read an endless body to its end (%d bytes)", n)
	}
}

// TestRegistryCredentialsNeverRunHelpers: with credHelpers and credsStore
// in the docker config, a registry check never starts a
// docker-credential-* program (the hosts come from hostile input); the
// static auths entries are still sent.
func TestRegistryCredentialsNeverRunHelpers(t *testing.T) {
	shimDir, cfgDir := t.TempDir(), t.TempDir()
	ran := filepath.Join(t.TempDir(), "ran")
	shim := "#!/bin/sh\necho \"$@\" >> " + ran + "\necho '{\"Username\":\"x\",\"Secret\":\"y\"}'\n"
	if err := os.WriteFile(filepath.Join(shimDir, "docker-credential-shim"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	var authz sync.Map // host -> Authorization header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		authz.Store(r.Host, r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	static, helped := "127.0.0.1:"+port, "localhost:"+port
	cfg := fmt.Sprintf(`{"auths":{"http://%s/v1/":{"auth":"dTpw"}},"credHelpers":{"%s":"shim","%s":"shim"},"credsStore":"shim"}`, static, helped, static)
	if err := os.WriteFile(filepath.Join(cfgDir, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", cfgDir)
	t.Setenv("PATH", shimDir+string(os.PathListSeparator)+os.Getenv("PATH"))

	digest := "sha256:" + strings.Repeat("a", 64)
	plan := &ArtifactPlan{Services: []ArtifactService{
		{ID: "a", Image: static + "/acme/a:" + commitA, Digest: digest, InUse: true},
		{ID: "b", Image: helped + "/acme/b:" + commitA, Digest: digest, InUse: true},
	}}
	RegistryCheck(context.Background(), plan, envconfig.RegistryOptions{Hosts: []string{static, helped}, Insecure: true}, 10*time.Second, nil)
	if out, err := os.ReadFile(ran); err == nil {
		t.Errorf("a registry check ran the credential helper: %q", out)
	}
	if got, _ := authz.Load(static); got != "Basic dTpw" {
		t.Errorf("Authorization sent to %s = %v, want the static auths entry", static, got)
	}

	// The control: go-containerregistry's default keychain does run it.
	ref, err := name.ParseReference(helped+"/acme/b:x", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	authn.DefaultKeychain.Resolve(ref.Context())
	if _, err := os.Stat(ran); err != nil {
		t.Skipf("the shim did not run with the default keychain either (%v): the test proves nothing here", err)
	}
}

// TestRegistryRefusalIsPerRepository: a registry that refuses one
// repository (a bogus third-party entry, or one without credentials: 401,
// 403, 400) leaves that repository's digest unproven with a warning naming
// it, and every other digest of the same registry keeps its exact verdict
// (present, or a registry-missing blocker), even those checked after the
// refusal.
func TestRegistryRefusalIsPerRepository(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusBadRequest} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
			refused := make(chan struct{})
			var once sync.Once
			var armed atomic.Bool // not while the image is pushed
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !armed.Load() || !strings.Contains(r.URL.Path, "/manifests/") || r.Method != http.MethodHead {
					reg.ServeHTTP(w, r)
					return
				}
				if strings.HasPrefix(r.URL.Path, "/v2/acme/bogus/") {
					w.WriteHeader(status)
					once.Do(func() { time.AfterFunc(100*time.Millisecond, func() { close(refused) }) })
					return
				}
				// The other digests are answered only once the refusal
				// is known to the check, so most of them start after it.
				select {
				case <-refused:
				case <-time.After(5 * time.Second):
				}
				reg.ServeHTTP(w, r)
			}))
			defer srv.Close()
			host := strings.TrimPrefix(srv.URL, "http://")
			pushed := pushRandom(t, host, commitA)
			absent := "sha256:" + strings.Repeat("0", 64)

			services := []ArtifactService{{ID: "bogus", Image: host + "/acme/bogus:1", Digest: absent, InUse: true}}
			want := map[string]string{"bogus": RegistryUnreachable}
			for i := range 2 * ociregistry.Parallelism {
				id := fmt.Sprintf("api-%d", i)
				services = append(services, ArtifactService{ID: id, Image: host + "/acme/api:" + commitA, Digest: pushed, InUse: true})
				want[id] = RegistryPresent
			}
			services = append(services, ArtifactService{ID: "absent", Image: host + "/acme/api:" + commitA, Digest: absent, InUse: true})
			want["absent"] = RegistryMissing

			plan := &ArtifactPlan{Services: services}
			armed.Store(true)
			bs, ws := RegistryCheck(context.Background(), plan, envconfig.RegistryOptions{Hosts: []string{host}}, 10*time.Second, nil)
			got := map[string]string{}
			for _, s := range plan.Services {
				got[s.ID] = s.Registry
			}
			if !mapsEqual(got, want) {
				t.Errorf("services' registry = %v, want %v", got, want)
			}
			if plan.RegistryStatus != RegistryMissing {
				t.Errorf("RegistryStatus = %q, want %q", plan.RegistryStatus, RegistryMissing)
			}
			if g := ids(bs); len(g) != 1 || g[0] != "registry-missing:absent" {
				t.Errorf("blockers = %v, want [registry-missing:absent]", g)
			}
			wantWarn := fmt.Sprintf("registry %s refused acme/bogus (%d %s)", host, status, http.StatusText(status))
			if len(ws) != 1 || !strings.HasPrefix(ws[0], wantWarn) {
				t.Errorf("warnings = %q, want one starting %q", ws, wantWarn)
			}
		})
	}
}
