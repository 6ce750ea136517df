package gitops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/release"
	"github.com/hanzoai/deploy-web/writeback"
)

// manifestTree is a repository whose overlays/<env> put base/api.yaml's App
// api in namespace apps.
func manifestTree(overlayExtra string) fstest.MapFS {
	overlay := "resources: [../../base]\nnamespace: apps\n" + overlayExtra
	return fstest.MapFS{
		"base/kustomization.yaml":         {Data: []byte("resources: [api.yaml]\n")},
		"base/api.yaml":                   {Data: []byte("apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: api\nspec:\n  image: reg.example/acme/api:1.2.0\n  replicas: 2\n")},
		"overlays/dev/kustomization.yaml": {Data: []byte(overlay)},
	}
}

// twoReleasesCatalog is a version-mode catalog listing api at 1.2.0 and
// 1.1.0; oneReleaseCatalog lists 1.2.0 alone.
const (
	twoReleasesCatalog = `{"mode": "version", "services": [
  {"id": "api", "image": "reg.example/acme/api", "tag": "1.2.0", "digest": "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "published": true},
  {"id": "api-1.1.0", "image": "reg.example/acme/api", "tag": "1.1.0", "digest": "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "published": true}]}
`
	oneReleaseCatalog = `{"mode": "version", "services": [
  {"id": "api", "image": "reg.example/acme/api", "tag": "1.2.0", "digest": "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "published": true}]}
`
	// commitCatalog is a commit-mode catalog publishing api at its commit.
	commitCatalog = `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": [
  {"id": "api", "image": "reg.example/acme/api:0123456789ab", "digest": "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "published": true}]}
`
)

// Catalog commits: A an earlier release, B one no catalog has, C the
// current.
const (
	commitA = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
	commitB = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
	commitC = "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
)

// onDiskConfig: dev (push, catalog in the repository), plain (no
// writeBack) and ondisk (push, catalog on disk).
func onDiskConfig(t *testing.T) *envconfig.Config {
	t.Helper()
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(`
environments:
  - name: dev
    cluster: {context: test}
    namespace: apps
    source: {repo: %[1]q, ref: main, path: overlays/dev}
    catalog: catalog.json
    writeBack: {mode: push}
  - name: plain
    cluster: {context: test}
    namespace: apps
    source: {repo: %[1]q, ref: main, path: overlays/plain}
    catalog: catalog.json
  - name: ondisk
    cluster: {context: test}
    namespace: apps
    source: {repo: %[1]q, ref: main, path: overlays/dev}
    catalog: /nonexistent/catalog.json
    writeBack: {mode: push}
`, "file:///nonexistent/m.git")), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestDecideWrite(t *testing.T) {
	push := &envconfig.WriteBack{Mode: envconfig.ModePush}
	branch := &envconfig.WriteBack{Mode: envconfig.ModeBranch}
	tests := []struct {
		name string
		env  *envconfig.Environment
		want WritePath
	}{
		{"not rendered", nil, WritePatch},
		{"no writeBack", &envconfig.Environment{Name: "dev"}, WriteRefused},
		{"push", &envconfig.Environment{Name: "dev", WriteBack: push}, WriteCommitApply},
		{"branch", &envconfig.Environment{Name: "dev", WriteBack: branch}, WriteCommitOnly},
		{"protected", &envconfig.Environment{Name: "prod", Protected: true, WriteBack: branch}, WriteCommitOnly},
		// Validation refuses push on a protected environment; the decision
		// never applies one anyway.
		{"protected push", &envconfig.Environment{Name: "prod", Protected: true, WriteBack: push}, WriteCommitOnly},
	}
	for _, tt := range tests {
		if got := DecideWrite(tt.env); got != tt.want {
			t.Errorf("DecideWrite(%s) = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestWriteBackError(t *testing.T) {
	// A real refusal of Locate (a typed *writeback.LocateError): the
	// overlay declares no App api.
	_, locErr := writeback.Locate(fstest.MapFS{"dev/kustomization.yaml": {Data: []byte("resources: []\n")}},
		writeback.ImageChange{Dir: "dev", Kind: "App", Name: "api", Repository: "reg.example/api", Tag: "1.0.0"}, 1<<20)
	if locErr == nil {
		t.Fatal("Locate(no App) = nil error, want a refusal")
	}
	tests := []struct {
		name   string
		err    error
		kind   Kind
		reason string
		public string // a substring
	}{
		{"auth", &writeback.AuthError{Repo: "https://git.example/m.git", Status: 401}, KindUpstream, "WriteBackAuth", "the repository refused deploy-web's credentials (HTTP 401)"},
		{"hook", &writeback.RefusedError{Repo: "r", Branch: "main", Status: "pre-receive hook declined", Remote: "main is protected"}, KindConflict, "PushRefused", "the server says: main is protected"},
		{"conflict", &writeback.ConflictError{Repo: "r", Branch: "main", Reason: "fetch first"}, KindConflict, "PushConflict", "branch main moved during the push twice"},
		{"branch exists", &writeback.BranchExistsError{Repo: "r", Branch: "deploy-web/rollback-api-1.0.0"}, KindConflict, "BranchExists", "deploy-web/rollback-api-1.0.0 already exists"},
		{"edit", &writeback.EditError{File: "overlays/dev/kustomization.yaml", Reason: "not YAML"}, KindUnprocessable, "EditError", "the edit of overlays/dev/kustomization.yaml cannot be made: not YAML"},
		{"locate", &locateError{locErr}, KindUnprocessable, "EditError", "locate: no App api in the files"},
		// An untyped cause of a locate refusal is for the log only.
		{"locate untyped", &locateError{errors.New("writeback: dial tcp: open /srv/secret")}, KindUnprocessable, "EditError", "could not be located in the repository (see the server log); nothing was pushed"},
		{"too large", &writeback.TooLargeError{What: "file dev/app.yaml", Limit: "MaxFileBytes", Max: 10}, KindUnprocessable, "TooLarge", "over a write-back limit: file dev/app.yaml is larger than 10 bytes (Limits.MaxFileBytes)"},
		{"check", &checkError{"after the edit, dev renders App api with image x"}, KindUnprocessable, "EditError", "after the edit"},
		{"other", errors.New("writeback: dial tcp: refused"), KindUpstream, "WriteBackFailed", "see the server log"},
	}
	for _, tt := range tests {
		he := writeBackError("dev", tt.err)
		if he.Kind != tt.kind || he.Reason != tt.reason || !strings.Contains(he.Public, tt.public) {
			t.Errorf("writeBackError(%s) = %d %s %q, want %d %s containing %q", tt.name, he.Kind, he.Reason, he.Public, tt.kind, tt.reason, tt.public)
		}
		if strings.Contains(he.Public, "dial tcp") || strings.Contains(he.Public, "writeback:") {
			t.Errorf("writeBackError(%s) = %q: an untyped error's text reaches the answer", tt.name, he.Public)
		}
	}
}

func TestCheckRenderedImage(t *testing.T) {
	env := &envconfig.Environment{Name: "dev", Namespace: "apps", Source: envconfig.Source{Repo: "file:///m.git", Ref: "main", Path: "overlays/dev"}}
	tests := []struct {
		name, overlayExtra, want string // want: "" for no error, else a substring
	}{
		{"at the target", "images: [{name: reg.example/acme/api, newTag: 1.1.0}]\nconfigurations: [images.yaml]\n", ""},
		// An images: entry without configurations: does not reach a custom
		// resource's spec.image: the App stays at 1.2.0.
		{"images: without configurations", "images: [{name: reg.example/acme/api, newTag: 1.1.0}]\n", `with image "reg.example/acme/api:1.2.0", not reg.example/acme/api:1.1.0`},
		{"renamed away", "namePrefix: x-\n", "no longer renders App api"},
		{"does not render", "resources: [missing.yaml]\n", "does not render"},
	}
	for _, tt := range tests {
		tree := manifestTree(tt.overlayExtra)
		tree["overlays/dev/images.yaml"] = &fstest.MapFile{Data: []byte("images:\n  - {path: spec/image, kind: App}\n")}
		err := checkRenderedImage(context.Background(), env, tree, "hanzo.ai", "App", "api", "reg.example/acme/api", "1.1.0")
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("checkRenderedImage(%s) = %v, want nil", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("checkRenderedImage(%s) = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestCheckCatalogAdmits(t *testing.T) {
	cfg := onDiskConfig(t)
	tree := func(catalog string) fstest.MapFS {
		return fstest.MapFS{"catalog.json": {Data: []byte(catalog)}}
	}
	tests := []struct {
		name  string
		env   string
		tree  fstest.MapFS
		image string
		// want is a substring of the refusal; "" admits.
		want string
	}{
		{"version mode lists the release", "dev", tree(twoReleasesCatalog), "reg.example/acme/api:1.1.0", ""},
		{"version mode, the running release", "dev", tree(twoReleasesCatalog), "reg.example/acme/api:1.2.0", ""},
		{"version mode without the release", "dev", tree(oneReleaseCatalog), "reg.example/acme/api:1.1.0",
			"environment dev's catalog catalog.json (version mode) does not admit reg.example/acme/api:1.1.0"},
		{"a release no catalog lists", "dev", tree(twoReleasesCatalog), "reg.example/acme/api:0.9.0", "does not admit reg.example/acme/api:0.9.0"},
		{"commit mode never admits a version", "dev", tree(commitCatalog), "reg.example/acme/api:1.1.0",
			"catalog.json is in commit mode: every image must be tagged with its commit 0123456789abcdef0123456789abcdef01234567"},
		{"an image the catalog does not know", "dev", tree(twoReleasesCatalog), "reg.example/other/api:1.1.0", "does not admit reg.example/other/api:1.1.0"},
		{"no catalog in the repository", "dev", fstest.MapFS{}, "reg.example/acme/api:1.1.0", "environment dev's catalog catalog.json does not read"},
		{"the catalog is a folder", "dev", fstest.MapFS{"catalog.json/x": {Data: []byte("{}")}}, "reg.example/acme/api:1.1.0", "catalog.json is not a regular file"},
		{"not a catalog", "dev", tree(`{"mode": "version", "services": [{"id": "api"}]}`), "reg.example/acme/api:1.1.0", "catalog.services[0].image: required"},
		{"one release listed twice", "dev", tree(`{"mode": "version", "services": [
  {"id": "a", "image": "reg.example/acme/api", "tag": "1.1.0"}, {"id": "b", "image": "reg.example/acme/api", "tag": "1.1.0"}]}`), "reg.example/acme/api:1.1.0", "listed twice"},
		{"a catalog on disk is the plan's to read", "ondisk", fstest.MapFS{}, "reg.example/acme/api:1.1.0", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := cfg.Env(tt.env)
			if err != nil {
				t.Fatal(err)
			}
			err = checkCatalogAdmits(tt.tree, env, "App", "api", tt.image)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("checkCatalogAdmits(%s) = %v, want nil", tt.image, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasSuffix(err.Error(), "nothing was pushed") {
				t.Fatalf("checkCatalogAdmits(%s) = %v, want a refusal containing %q", tt.image, err, tt.want)
			}
		})
	}
}

func TestGitRollbackGate(t *testing.T) {
	cfg := onDiskConfig(t)
	env := func(name string) *envconfig.Environment {
		e, err := cfg.Env(name)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	history := []string{commitC[:12], commitA[:12], "1.1.0"}
	tests := []struct {
		name    string
		env     *envconfig.Environment
		version string
		want    error // nil, release.ErrInvalidVersion or release.ErrNotInHistory
	}{
		{"a commit tag it ran, catalog in the repository", env("dev"), commitA[:12], nil},
		{"a commit tag it never ran", env("dev"), commitB[:12], release.ErrNotInHistory},
		{"a version it ran", env("dev"), "1.1.0", nil},
		{"a version it never ran", env("dev"), "0.9.0", release.ErrNotInHistory},
		{"not a commit (uppercase)", env("dev"), strings.ToUpper(commitA[:12]), release.ErrInvalidVersion},
		{"too short for a commit", env("dev"), commitA[:6], release.ErrInvalidVersion},
		{"a catalog on disk: semver only", env("ondisk"), commitA[:12], release.ErrInvalidVersion},
		{"no writeBack: semver only", env("plain"), commitA[:12], release.ErrInvalidVersion},
		{"no environment: semver only", nil, commitA[:12], release.ErrInvalidVersion},
	}
	for _, tt := range tests {
		err := RollbackGate(tt.env, tt.version, history)
		if (tt.want == nil) != (err == nil) || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("RollbackGate(%s: %q) = %v, want %v", tt.name, tt.version, err, tt.want)
		}
	}
}

// TestCredentialsPublic: an environment without a usable writeBack is
// refused in the config's own words (field and message), with no
// package prefix.
func TestCredentialsPublic(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  *envconfig.Environment
		want string
	}{
		{"none", &envconfig.Environment{Name: "dev"}, "environment dev: writeBack: not configured"},
		{"commit ref", &envconfig.Environment{Name: "dev", Source: envconfig.Source{Ref: strings.Repeat("a", 40)}, WriteBack: &envconfig.WriteBack{Mode: envconfig.ModePush}},
			"environment dev: writeBack.branch: required: source.ref"},
	} {
		_, _, err := credentials(tt.env)
		var e *Error
		if !errors.As(err, &e) || e.Reason != "NoWriteBack" || !strings.HasPrefix(e.Public, tt.want) || strings.Contains(e.Public, "envconfig:") {
			t.Errorf("credentials(%s) = %v, want NoWriteBack, public starting %q", tt.name, err, tt.want)
		}
	}
}
