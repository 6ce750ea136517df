package envconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const goodConfig = `
environments:
  - name: sample-dev
    cluster: {context: devcluster}
    namespace: sample-dev
    source: {repo: "file:///tmp/repo", ref: main, path: deploy/dev}
    catalog: catalog.json
    templateJobs: {allowlist: [migrate, seed]}
    healthChecks:
      - {name: api, url: "http://127.0.0.1:8080/healthz", required: true}
    envMirrors: {image: [IMAGE], commit: [GIT_COMMIT]}
  - name: prod
    cluster: {inCluster: true}
    namespace: prod
    protected: true
    source: {path: ./deploy/prod}
    catalog: catalog.json
`

func TestParseConfig(t *testing.T) {
	cfg, err := ParseConfig([]byte(goodConfig), "/etc/deploy")
	if err != nil {
		t.Fatalf("ParseConfig(good) = %v", err)
	}
	env, err := cfg.Env("sample-dev")
	if err != nil {
		t.Fatal(err)
	}
	if !env.Allowlisted("seed") || env.Allowlisted("other") {
		t.Errorf("Allowlisted wrong for %v", env.TemplateJobs.Allowlist)
	}
	prod, _ := cfg.Env("prod")
	if got := prod.Resolve(prod.Source.Path); got != "/etc/deploy/deploy/prod" {
		t.Errorf("resolve = %q, want /etc/deploy/deploy/prod", got)
	}
	if _, err := cfg.Env("nope"); err == nil || !strings.Contains(err.Error(), "sample-dev, prod") {
		t.Errorf("Env(nope) = %v, want an error listing the environments", err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // fields named in the error
	}{
		{"empty", `environments: []`, []string{"environments: at least one"}},
		{"unknown field", `environments: [{name: a, nmespace: x}]`, []string{"nmespace"}},
		{"missing everything", `environments: [{name: a}]`, []string{
			"environments[0] (a).cluster.context", "environments[0] (a).namespace", "environments[0] (a).source.path", "environments[0] (a).catalog"}},
		{"bad values", `
environments:
  - name: Bad_Name
    cluster: {context: c, inCluster: true}
    namespace: NotADNS
    source: {repo: "ftp://x", path: ../up}
    catalog: ../../c.json
    templateJobs: {allowlist: [ok, ok, "Bad Job"]}
    healthChecks: [{name: "", url: "not a url"}]
`, []string{".name: \"Bad_Name\"", ".cluster: inCluster", ".namespace: \"NotADNS\"", ".source.repo", ".source.ref: required", ".source.path", ".catalog", "allowlist[1]: \"ok\" is listed twice", "allowlist[2]", "healthChecks[0].name", "healthChecks[0].url"}},
		{"duplicate env", `
environments:
  - {name: a, cluster: {context: c}, namespace: a, source: {path: x}, catalog: c.json}
  - {name: a, cluster: {context: c}, namespace: a, source: {path: x}, catalog: c.json}
`, []string{"environments[1] (a).name: \"a\" is also the name of environments[0]"}},
		{"negative limits", `
environments:
  - name: a
    cluster: {context: c}
    namespace: a
    source: {path: x}
    catalog: c.json
    limits: {maxRepoBytes: -1, maxRepoFiles: -2, sourceTimeout: -1s, registryTimeout: -2s, healthCheckTimeout: -3s}
`, []string{"limits.maxRepoBytes: -1 must not be negative", "limits.maxRepoFiles", "limits.sourceTimeout", "limits.registryTimeout", "limits.healthCheckTimeout"}},
		{"bad limit duration", `environments: [{name: a, cluster: {context: c}, namespace: a, source: {path: x}, catalog: c.json, limits: {sourceTimeout: soon}}]`, []string{"soon"}},
		{"registry hosts", `
environments:
  - name: a
    cluster: {context: c}
    namespace: a
    source: {path: x}
    catalog: c.json
    registry:
      hosts:
        - "https://reg.example"
        - "reg.example/acme"
        - "user:pw@reg.example"
        - "reg.example:0"
        - "reg.example:65536"
        - "reg.example:http"
        - "reg.example:"
        - ""
        - "ghcr.io"
        - "GHCR.io"
        - "docker.io"
        - "index.docker.io"
        - "::1"
        - "[::1]:5000"
        - "[127.0.0.1]"
        - "reg_example"
        - "registry.gİtlab.com"
        - "Key.example"
`, []string{
			`registry.hosts[0]: "https://reg.example" has a scheme`,
			`registry.hosts[1]: "reg.example/acme" has a path`,
			`registry.hosts[2]: "user:pw@reg.example" has userinfo`,
			`registry.hosts[3]: "reg.example:0" has a bad port`,
			`registry.hosts[4]: "reg.example:65536" has a bad port`,
			`registry.hosts[5]: "reg.example:http" has a bad port`,
			`registry.hosts[6]: "reg.example:" has a bad port`,
			`registry.hosts[7]: empty host`,
			`registry.hosts[9]: "GHCR.io" is the same host as registry.hosts[8]`,
			`registry.hosts[11]: "index.docker.io" is the same host as registry.hosts[10]`,
			`registry.hosts[12]: "::1": an IPv6 address needs brackets`,
			`registry.hosts[14]: "[127.0.0.1]" is not a valid IPv6 address`,
			`registry.hosts[15]: "reg_example" is not a valid host name`,
			`registry.hosts[16]: "registry.gİtlab.com" is not an ASCII host name`,
			`registry.hosts[17]: "Key.example" is not an ASCII host name`,
		}},
		{"registry hosts with skip", `environments: [{name: a, cluster: {context: c}, namespace: a, source: {path: x}, catalog: c.json, registry: {skip: true, hosts: [ghcr.io]}}]`,
			[]string{"environments[0] (a).registry.hosts: excludes registry.skip: true"}},
		{"ref without repo", `environments: [{name: a, cluster: {context: c}, namespace: a, source: {path: x, ref: main}, catalog: c.json}]`, []string{"source.ref: only meaningful"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.yaml), "/")
			if err == nil {
				t.Fatal("ParseConfig = nil, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParseConfig error = %q\nwant it to mention %q", err, w)
				}
			}
			var ce *ConfigError
			if tt.name != "unknown field" && tt.name != "bad limit duration" && !errors.As(err, &ce) {
				t.Errorf("error %v holds no *ConfigError", err)
			}
		})
	}
}

// TestParseConfigRegistryHosts: well-formed registry.hosts entries are
// accepted, and a rejected list names only its bad entries (the valid
// ones around them are not reported).
func TestParseConfigRegistryHosts(t *testing.T) {
	good := `environments: [{name: a, cluster: {context: c}, namespace: a, source: {path: x}, catalog: c.json,
  registry: {insecure: true, hosts: [ghcr.io, "reg.example:5000", "127.0.0.1:5000", "[::1]:5000", localhost, index.docker.io]}}]`
	cfg, err := ParseConfig([]byte(good), "/")
	if err != nil {
		t.Fatalf("ParseConfig(good hosts) = %v", err)
	}
	if got := cfg.Environments[0].Registry.Hosts; len(got) != 6 {
		t.Errorf("hosts = %q, want the six listed", got)
	}
	_, err = ParseConfig([]byte(strings.Replace(good, "localhost", "https://localhost", 1)), "/")
	if err == nil || strings.Count(err.Error(), "registry.hosts") != 1 || !strings.Contains(err.Error(), "registry.hosts[4]") {
		t.Errorf("ParseConfig(one bad host) = %v, want one error naming registry.hosts[4]", err)
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "deploy.yaml")
	os.WriteFile(p, []byte(goodConfig), 0o644)
	cfg, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Path != p {
		t.Errorf("Path = %q, want %q", cfg.Path, p)
	}
	if _, err := LoadConfig(filepath.Join(dir, "missing.yaml")); err == nil {
		t.Error("LoadConfig(missing) = nil error")
	}
}

func TestLimitsDefaults(t *testing.T) {
	cfg, err := ParseConfig([]byte(`
environments:
  - {name: a, cluster: {context: c}, namespace: a, source: {path: x}, catalog: c.json}
  - {name: b, cluster: {context: c}, namespace: b, source: {path: x}, catalog: c.json,
     limits: {maxRepoBytes: 1000, maxRepoFiles: 10, sourceTimeout: 2m, registryTimeout: 1s, healthCheckTimeout: 3s}}
`), "/")
	if err != nil {
		t.Fatal(err)
	}
	a, b := cfg.Environments[0].Limits, cfg.Environments[1].Limits
	if a.MaxRepoBytesOrDefault() != DefaultMaxRepoBytes || a.MaxRepoFilesOrDefault() != DefaultMaxRepoFiles || a.SourceTimeoutOrDefault() != DefaultSourceTimeout ||
		a.RegistryTimeoutOrDefault() != DefaultRegistryTimeout || a.HealthCheckTimeoutOrDefault() != DefaultHealthCheckTimeout {
		t.Errorf("default limits = %+v", a)
	}
	if b.MaxRepoBytesOrDefault() != 1000 || b.MaxRepoFilesOrDefault() != 10 || b.SourceTimeoutOrDefault() != 2*time.Minute || b.RegistryTimeoutOrDefault() != time.Second || b.HealthCheckTimeoutOrDefault() != 3*time.Second {
		t.Errorf("configured limits = %+v", b)
	}
}
