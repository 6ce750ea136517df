package envconfig

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/yaml"

	"github.com/hanzoai/deploy-web/internal/strictyaml/strictyamltest"
)

// readmeConfig is the environments file of README's "The environment
// config", every key set.
const readmeConfig = `
environments:
  - name: sample-dev                 # --env; a DNS label; also reports/<name>/
    cluster:
      context: dev-cluster           # a kubeconfig context ...
      kubeconfig: ~/.kube/dev.yaml   # optional; else --kubeconfig, $KUBECONFIG, ~/.kube/config
      # inCluster: true              # ... or the pod's service account (excludes context)
    namespace: sample-dev            # the only namespace ever written
    protected: false                 # true for production: apply is always refused
    source:
      repo: https://github.com/acme/manifests.git   # file://, https://, ssh:// or git@host:path;
      ref: main                      # branch, tag or commit (required with repo)
      path: deploy/overlays/dev      # the kustomize folder inside the repo
      tokenEnv: DEPLOY_WEB_GIT_TOKEN # optional: env var with an HTTPS token (never stored)
    catalog: artifacts/catalog.json  # in the repo at the same commit (or a local file without repo / when absolute)
    templateJobs:
      allowlist: [db-migrate, seed]  # suspended template Jobs that may be replaced
    healthChecks:
      - {name: api, url: "https://api.dev.example.com/healthz", required: true}
    envMirrors:                      # container env vars that must mirror ...
      image: [IMAGE]                 # ... the container's image
      commit: [GIT_COMMIT, APP_VERSION]  # ... the catalog commit
    registry:
      hosts: [ghcr.io, index.docker.io, auth.docker.io]   # the only hosts ever contacted (host or host:port; token services too)
      insecure: false                # plain HTTP beyond loopback
      # skip: true                   # no HEAD checks at all (excludes hosts)
    skeletonPatterns: [skeleton, placeholder]  # marks placeholder images (default)
    limits:                          # optional; zero or absent = the default shown
      maxRepoBytes: 67108864         # 64 MiB: fetched pack, then the tree's files
      maxRepoFiles: 20000            # files of the tree (or of the local folder's repository)
      sourceTimeout: 1m              # the whole git fetch
      registryTimeout: 5s            # each registry HEAD (token exchange included)
      healthCheckTimeout: 5s         # each health check
  - name: prod
    cluster: {inCluster: true}
    namespace: prod
    protected: true
    source: {repo: "git@github.com:acme/manifests.git", ref: v1.4.2, path: deploy/overlays/prod}
    catalog: artifacts/catalog-prod.json
notifications:
  hosts: [hooks.slack.com, hooks.example.com:8443]   # the only hosts notifications go to
`

// TestParseConfigExactKeys: every key of the environments file (from
// Config's json tags, so a new key is covered), in every other spelling,
// instead of the key or beside it, is refused with an error naming it.
func TestParseConfigExactKeys(t *testing.T) {
	strictyamltest.CaseVariants(t, []byte(readmeConfig), reflect.TypeFor[Config](), false, func(doc []byte) error {
		_, err := ParseConfig(doc, "/etc/deploy")
		return err
	})
}

// TestParseConfigProtectedSpellings is the reported exploit and its
// kin: encoding/json matched keys in any letter case, the last one
// winning, so `PROTECTED: true` then `protected: false` made a
// protected environment appliable. Each must fail to load, naming the
// line and the path.
func TestParseConfigProtectedSpellings(t *testing.T) {
	env := func(lines string) string {
		return "environments:\n" +
			"  - {name: dev, cluster: {context: c}, namespace: dev, source: {repo: \"https://git.example/m.git\", ref: main, path: dev}, catalog: c.json}\n" +
			"  - name: prod\n    cluster: {context: c}\n    namespace: prod\n" + lines +
			"    source: {repo: \"https://git.example/m.git\", ref: main, path: prod}\n    catalog: c.json\n"
	}
	tests := []struct {
		name string
		yaml string
		// oldProtected is what sigs.k8s.io/yaml (encoding/json) decoded
		// prod's protected as: the exploit's effect (its YAML to JSON step
		// sorts the keys, so the lower-case one came last and won).
		oldProtected bool
		want         string
	}{
		{"PROTECTED then protected", env("    PROTECTED: true\n    protected: false\n"), false,
			`line 6: environments[1] (prod).PROTECTED: unknown key: keys are case-sensitive, did you mean "protected"?`},
		{"protected then Protected", env("    protected: true\n    Protected: false\n"), true,
			`line 7: environments[1] (prod).Protected: "protected" on line 6 is the same key in another spelling: keys are case-sensitive, write "protected" once`},
		{"Protected alone", env("    Protected: true\n"), true,
			`line 6: environments[1] (prod).Protected: unknown key: keys are case-sensitive, did you mean "protected"?`},
		{"protected twice", env("    protected: true\n    protected: false\n"), false,
			`line 7: environments[1] (prod).protected: written twice (also on line 6): keep one`},
		{"protected: yes", env("    protected: yes\n"), false,
			`line 6: environments[1] (prod).protected: want true or false, got a string ("yes")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var old Config
			if err := yaml.Unmarshal([]byte(tt.yaml), &old); tt.name != "protected twice" && tt.name != "protected: yes" &&
				(err != nil || old.Environments[1].Protected != tt.oldProtected) {
				t.Fatalf("the old decoder: %v, protected %v; want protected %v (the test input is not the exploit)", err, old.Environments[1].Protected, tt.oldProtected)
			}
			cfg, err := ParseConfig([]byte(tt.yaml), "/etc/deploy")
			if cfg != nil || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseConfig = %v, %v\nwant no config and an error containing %q", cfg, err, tt.want)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Line == 0 || !strings.HasPrefix(ce.Field, "environments[1] (prod).") {
				t.Errorf("ParseConfig error = %#v, want a *ConfigError with the line and the path", ce)
			}
		})
	}
	// tokenenv is no key either.
	cfg, err := ParseConfig([]byte(strings.Replace(readmeConfig, "tokenEnv:", "tokenenv:", 1)), "/etc/deploy")
	if want := `environments[0] (sample-dev).source.tokenenv: unknown key: keys are case-sensitive, did you mean "tokenEnv"?`; cfg != nil || err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ParseConfig(tokenenv) = %v, %v; want an error containing %q", cfg, err, want)
	}
}

// TestParseConfigNamesThePath: a misspelt key is named by line and path
// with the right spelling (it was `json: unknown field "namesapce"`).
func TestParseConfigNamesThePath(t *testing.T) {
	doc := "environments:\n  - name: a\n  - name: prod\n    namesapce: prod\n"
	_, err := ParseConfig([]byte(doc), "/")
	want := `line 4: environments[1] (prod).namesapce: unknown key: did you mean "namespace"?`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ParseConfig = %v, want an error containing %q", err, want)
	}
	// Through LoadConfig the file is named too.
	path := filepath.Join(t.TempDir(), "deploy.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(path); err == nil || !strings.Contains(err.Error(), "config "+path+": "+want) {
		t.Errorf("LoadConfig = %v, want an error naming %s and containing %q", err, path, want)
	}
	// Anchors and aliases are refused: a config has no need for them.
	_, err = ParseConfig([]byte("environments:\n  - &e {name: a}\n  - *e\n"), "/")
	if err == nil || !strings.Contains(err.Error(), "line 2: environments[0] (a): anchors (&name) and aliases (*name) are not allowed") {
		t.Errorf("ParseConfig(alias) = %v, want the anchor refused", err)
	}
	// A file over the cap is not read.
	if err := os.WriteFile(path, []byte("# "+strings.Repeat("x", maxConfigBytes)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(path); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("LoadConfig(over %d bytes) = %v, want it refused", maxConfigBytes, err)
	}
}

// TestParseConfigDecodesAsBefore: the configs of the README and the tests
// decode to what sigs.k8s.io/yaml made of them.
func TestParseConfigDecodesAsBefore(t *testing.T) {
	for name, doc := range map[string]string{"README": readmeConfig, "goodConfig": goodConfig} {
		var old Config
		if err := yaml.UnmarshalStrict([]byte(doc), &old); err != nil {
			t.Fatalf("%s: the old decoder: %v", name, err)
		}
		got, err := ParseConfig([]byte(doc), "/etc/deploy")
		if err != nil {
			t.Fatalf("%s: ParseConfig = %v", name, err)
		}
		if diff := cmp.Diff(&old, got, cmpopts.IgnoreUnexported(Environment{}), cmpopts.IgnoreFields(Environment{}, "ConfigDir")); diff != "" {
			t.Errorf("%s: ParseConfig differs from the old decoder (-old +new):\n%s", name, diff)
		}
	}
}
