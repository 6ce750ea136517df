package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
)

// oneReleaseCatalog is twoReleasesCatalog without 1.1.0.
const oneReleaseCatalog = `{"mode": "version", "services": [
  {"id": "api", "image": "reg.example/acme/api", "tag": "1.2.0", "digest": "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "published": true}]}
`

// commitCatalog is a commit-mode catalog publishing api at its commit.
const commitCatalog = `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": [
  {"id": "api", "image": "reg.example/acme/api:0123456789ab", "digest": "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "published": true}]}
`

func TestCheckCatalogAdmits(t *testing.T) {
	cfg, err := deployplan.ParseConfig([]byte(fmt.Sprintf(gitEnvConfig, "file:///nonexistent/m.git")+`
  - name: ondisk
    cluster: {context: test}
    namespace: apps
    source: {repo: "file:///nonexistent/m.git", ref: main, path: overlays/dev}
    catalog: /nonexistent/catalog.json
`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
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

// TestRollbackThroughGitCatalog: a rollback to a release the environment's
// catalog (in the repository) does not admit is refused before anything
// is committed; one it lists is committed without touching the catalog.
func TestRollbackThroughGitCatalog(t *testing.T) {
	for _, tt := range []struct {
		name, catalog string
		wantCode      int
		want          string
	}{
		{"release not listed", oneReleaseCatalog, http.StatusUnprocessableEntity, "does not admit reg.example/acme/api:1.1.0"},
		{"commit mode", commitCatalog, http.StatusUnprocessableEntity, "is in commit mode"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fc := &fakeCommit{tree: manifestTree("")}
			fc.tree["catalog.json"] = &fstest.MapFile{Data: []byte(tt.catalog)}
			ts, rel := gitServer(t, "dev", fc)
			w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader, body: `{"version": "1.1.0"}`})
			if w.Code != tt.wantCode || !strings.Contains(w.Body.String(), tt.want) || !strings.Contains(w.Body.String(), "CatalogRefuses") || strings.Contains(w.Body.String(), `"run"`) {
				t.Errorf("POST rollback = %d %s, want %d with %q and no run", w.Code, w.Body, tt.wantCode, tt.want)
			}
			if len(fc.changed) != 0 || len(rel.got()) != 0 {
				t.Errorf("a refused rollback wrote %v, patched %v; want nothing", fc.changed, rel.got())
			}
		})
	}
}

// TestRollbackThroughGitServer: the write-back itself (writeback.Commit)
// against the git binary's smart HTTP on loopback, with the catalog in the
// repository: a release the catalog does not list leaves the branch where
// it was; a listed one is one commit changing the App's file alone.
func TestRollbackThroughGitServer(t *testing.T) {
	files := map[string]string{"catalog.json": oneReleaseCatalog}
	for p, f := range manifestTree("") {
		if p != "catalog.json" {
			files[p] = string(f.Data)
		}
	}
	srv := gitservertest.New(t, files, gitservertest.Options{})
	cfg, err := deployplan.ParseConfig([]byte(fmt.Sprintf(gitEnvConfig, srv.URL)), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rel := &recordingReleaser{}
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Clusters = []Cluster{{Name: "in-cluster", View: gitView{newFakeView(nil)}, Release: rel}}
		o.Environments = hangingRunner(t, cfg)
		o.Desired = desiredIn{"dev"}
	})
	rollback := func() (int, string) {
		w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader, body: `{"version": "1.1.0", "reason": "errors since 1.2.0"}`})
		return w.Code, w.Body.String()
	}

	head := srv.Head("main")
	if code, body := rollback(); code != http.StatusUnprocessableEntity || !strings.Contains(body, "does not admit reg.example/acme/api:1.1.0") {
		t.Errorf("rollback to an unlisted release = %d %s, want 422 saying why", code, body)
	}
	if got := srv.Head("main"); got != head || srv.PushCount() != 0 {
		t.Errorf("after a refused rollback: head %s (was %s), %d pushes; want no push", got, head, srv.PushCount())
	}

	listed := srv.RemoteCommitFiles(map[string]string{"catalog.json": twoReleasesCatalog}, "catalog: 1.1.0 listed")
	code, body := rollback()
	var res rollbackResponse
	if err := json.Unmarshal([]byte(body), &res); err != nil || code != http.StatusOK || res.Commit == nil {
		t.Fatalf("rollback to a listed release = %d %s, want the commit", code, body)
	}
	if got := srv.Head("main"); got != res.Commit.SHA || gitservertest.Run(t, srv.Bare, "rev-parse", got+"^") != listed {
		t.Errorf("head %s, answer %s; want one commit on %s", got, res.Commit.SHA, listed)
	}
	if got := gitservertest.Run(t, srv.Bare, "show", "--name-only", "--format=", res.Commit.SHA); got != "base/api.yaml" {
		t.Errorf("the rollback commit changes %q, want base/api.yaml alone", got)
	}
	if got := gitservertest.Run(t, srv.Bare, "show", "main:catalog.json"); got != strings.TrimSpace(twoReleasesCatalog) {
		t.Errorf("catalog.json after the rollback = %q, want it untouched", got)
	}
	if len(rel.got()) != 0 {
		t.Errorf("the live App was patched: %v", rel.got())
	}
}
