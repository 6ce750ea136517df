package handlers

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envsource"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/writeback"
)

// oneReleaseCatalog is twoReleasesCatalog without 1.1.0.
const oneReleaseCatalog = `{"mode": "version", "services": [
  {"id": "api", "image": "reg.example/acme/api", "tag": "1.2.0", "digest": "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "published": true}]}
`

// commitCatalog is a commit-mode catalog publishing api at its commit.
const commitCatalog = `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": [
  {"id": "api", "image": "reg.example/acme/api:0123456789ab", "digest": "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "published": true}]}
`

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
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(gitEnvConfig, srv.URL)), t.TempDir())
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
	// The App's version lives in base/, which other environments render:
	// dev's rollback overrides it in dev's own overlay.
	if got := gitservertest.Run(t, srv.Bare, "show", "--name-only", "--format=", res.Commit.SHA); got != "overlays/dev/kustomization.yaml" {
		t.Errorf("the rollback commit changes %q, want overlays/dev/kustomization.yaml alone", got)
	}
	if got := gitservertest.Run(t, srv.Bare, "show", "main:catalog.json"); got != strings.TrimSpace(twoReleasesCatalog) {
		t.Errorf("catalog.json after the rollback = %q, want it untouched", got)
	}
	if len(rel.got()) != 0 {
		t.Errorf("the live App was patched: %v", rel.got())
	}
}

// Catalog commits of the commit-mode tests: A the earlier release, B one
// the App ran but no catalog revision of the branch has, C the current.
const (
	commitA = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
	commitB = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
	commitC = "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
	redis   = "docker.io/library/redis:7.4@sha256:dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
)

// commitModeCatalog is a commit-mode catalog at commit publishing
// services (api, worker) tagged with its first 12 characters, and redis as
// a third-party image.
func commitModeCatalog(commit string, services ...string) string {
	var svcs []string
	for _, s := range services {
		svcs = append(svcs, fmt.Sprintf(`{"id": %q, "image": "reg.example/acme/%s:%s", "digest": "sha256:%s", "published": true}`, s, s, commit[:12], strings.Repeat(commit[:1], 64)))
	}
	return fmt.Sprintf(`{"commit": %q, "services": [%s], "thirdParty": [{"image": %q}]}`+"\n", commit, strings.Join(svcs, ", "), redis)
}

// commitModeFiles is a repository whose overlays/<env> render Apps api and
// worker, both at commit's image, and cache (redis, not a catalog
// service), with catalog.json at commit. With overlay, the versions are
// set by the overlay's images: entries (reaching spec.image through
// configurations:), else in the Apps' files.
func commitModeFiles(commit string, overlay bool) map[string]string {
	tag := commit[:12]
	app := func(name, image string) string {
		return fmt.Sprintf("apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: %s\nspec:\n  image: %s\n", name, image)
	}
	files := map[string]string{
		"base/kustomization.yaml": "resources: [api.yaml, worker.yaml, cache.yaml]\n",
		"base/api.yaml":           app("api", "reg.example/acme/api:"+tag),
		"base/worker.yaml":        app("worker", "reg.example/acme/worker:"+tag),
		"base/cache.yaml":         app("cache", redis),
		"catalog.json":            commitModeCatalog(commit, "api", "worker"),
	}
	kust := "resources: [../../base]\nnamespace: apps\n"
	if overlay {
		files["base/api.yaml"] = app("api", "reg.example/acme/api:"+commitA[:12])
		files["base/worker.yaml"] = app("worker", "reg.example/acme/worker:"+commitA[:12])
		kust += "configurations: [images.yaml]\nimages:\n  - {name: reg.example/acme/api, newTag: " + tag + "}\n  - {name: reg.example/acme/worker, newTag: " + tag + "}\n"
	}
	for _, env := range []string{"dev", "plain", "review"} {
		files["overlays/"+env+"/kustomization.yaml"] = kust
		files["overlays/"+env+"/images.yaml"] = "images:\n  - {path: spec/image, kind: App}\n"
	}
	return files
}

func mapFS(files map[string]string) fstest.MapFS {
	out := fstest.MapFS{}
	for p, c := range files {
		out[p] = &fstest.MapFile{Data: []byte(c)}
	}
	return out
}

// historyFS is a tree with a file history: revs, newest first, each
// revision counting as one commit of the walk.
type historyFS struct {
	fstest.MapFS
	revs []writeback.Revision
}

func (h historyFS) FileRevisions(name string, maxCommits int, maxBytes int64, visit func(writeback.Revision) (bool, error)) (writeback.HistoryWalk, error) {
	var w writeback.HistoryWalk
	for _, r := range h.revs {
		if w.Commits == maxCommits {
			return w, nil
		}
		w.Commits++
		found, err := visit(r)
		if err != nil || found {
			w.Found = found
			return w, err
		}
	}
	w.Complete = true
	return w, nil
}

// commitView is gitView for an App tagged with catalog commits: it
// declares C and has run A, B and C.
type commitView struct{ gitView }

func (v commitView) Row(namespace, name string) (kubeview.AppRow, bool) {
	row, ok := v.gitView.Row(namespace, name)
	row.Version = commitC[:12]
	return row, ok
}

func (v commitView) LookupApp(namespace, name string) (*unstructured.Unstructured, error) {
	if _, err := v.gitView.LookupApp(namespace, name); err != nil {
		return nil, err
	}
	return appObject(name, "reg.example/acme/api:"+commitC[:12]), nil
}

func (v commitView) History(namespace, name string) ([]kubeview.Release, error) {
	var out []kubeview.Release
	for i, c := range []string{commitC, commitB, commitA} {
		out = append(out, kubeview.Release{Revision: int64(3 - i), Version: c[:12], Image: "reg.example/acme/api:" + c[:12]})
	}
	return out, nil
}

// commitModeRepo is a file:// repository of files (commitModeFiles at C
// when nil).
func commitModeRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	if files == nil {
		files = commitModeFiles(commitC, false)
	}
	return "file://" + gitservertest.New(t, files, gitservertest.Options{}).Bare
}

// ownCatalogConfig is gitEnvConfig with dev's catalog its own: a
// commit-mode move edits dev's catalog, and one plain and review read too
// would reach them (TestCommitModeSharedCatalogRefused).
var ownCatalogConfig = strings.Replace(strings.Replace(gitEnvConfig,
	"path: overlays/plain}\n    catalog: catalog.json", "path: overlays/plain}\n    catalog: catalogs/plain.json", 1),
	"path: overlays/review}\n    catalog: catalog.json", "path: overlays/review}\n    catalog: catalogs/review.json", 1)

// commitModeServer is gitServer for commitView, its environments reading
// repository repo (dev's catalog its own), its write-back fc (nil:
// writeback.Commit).
func commitModeServer(t *testing.T, repo string, fc *fakeCommit, opts ...func(*Options)) (*testServer, *recordingReleaser) {
	t.Helper()
	return commitModeServerWith(t, ownCatalogConfig, repo, fc, opts...)
}

func commitModeServerWith(t *testing.T, config, repo string, fc *fakeCommit, opts ...func(*Options)) (*testServer, *recordingReleaser) {
	t.Helper()
	if !strings.Contains(ownCatalogConfig, "catalogs/review.json") {
		t.Fatal("ownCatalogConfig did not give plain and review their own catalogs")
	}
	cfg, err := envconfig.ParseConfig([]byte(fmt.Sprintf(config, repo)), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rel := &recordingReleaser{}
	ts := newTestServer(t, newFakeView(nil), func(o *Options) {
		o.Clusters = []Cluster{{Name: "in-cluster", View: commitView{gitView{newFakeView(nil)}}, Release: rel}}
		o.Environments = hangingRunner(t, cfg)
		o.Desired = desiredIn{"dev"}
		if fc != nil {
			o.GitCommit = fc.commit
		}
		for _, f := range opts {
			f(o)
		}
	})
	return ts, rel
}

// TestRollbackThroughGitCommitMode: a rollback to the image of an earlier
// catalog commit moves the catalog back to that commit's revision and every
// App at the current commit with it, in one commit; each way it cannot is
// refused with nothing written.
func TestRollbackThroughGitCommitMode(t *testing.T) {
	rollback := func(t *testing.T, fc *fakeCommit, files map[string]string, version string) (int, string) {
		t.Helper()
		ts, rel := commitModeServer(t, commitModeRepo(t, files), fc)
		w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader, body: `{"version": "` + version + `", "reason": "5xx since C"}`})
		if len(rel.got()) != 0 {
			t.Errorf("the live App was patched: %v", rel.got())
		}
		return w.Code, w.Body.String()
	}
	revisions := func(contents ...string) []writeback.Revision {
		var out []writeback.Revision
		for i, c := range contents {
			out = append(out, writeback.Revision{Commit: fmt.Sprintf("%040x", len(contents)-i), Content: []byte(c)})
		}
		return out
	}
	current := commitModeCatalog(commitC, "api", "worker")
	earlier := commitModeCatalog(commitA, "api", "worker")

	t.Run("the catalog and every App at its commit move", func(t *testing.T) {
		fc := &fakeCommit{tree: mapFS(commitModeFiles(commitC, false)), history: revisions(current, commitModeCatalog(commitC, "api"), earlier, commitModeCatalog(commitB[:1]+commitA[1:], "api", "worker"))}
		code, body := rollback(t, fc, nil, commitA[:12])
		var res rollbackResponse
		if err := json.Unmarshal([]byte(body), &res); err != nil || code != http.StatusOK {
			t.Fatalf("rollback = %d %s, want 200", code, body)
		}
		wantMoved := []movedJSON{
			{Namespace: "apps", App: "api", From: "reg.example/acme/api:" + commitC[:12], To: "reg.example/acme/api:" + commitA[:12]},
			{Namespace: "apps", App: "worker", From: "reg.example/acme/worker:" + commitC[:12], To: "reg.example/acme/worker:" + commitA[:12]},
		}
		if diff := cmp.Diff(wantMoved, res.Moved); diff != "" {
			t.Errorf("moved (-want +got):\n%s", diff)
		}
		if want := (&catalogMoveJSON{Path: "catalog.json", From: commitC, To: commitA}); res.Catalog == nil || *res.Catalog != *want {
			t.Errorf("catalog = %+v, want %+v", res.Catalog, want)
		}
		if res.Run == nil || res.Commit == nil {
			t.Errorf("rollback = %s, want the commit and its run", body)
		}
		if got := fc.changed["catalog.json"]; got != earlier {
			t.Errorf("catalog.json after the move = %q, want the revision of commit A %q", got, earlier)
		}
		// The Apps' files are in base/: the overlay overrides both.
		for _, img := range []string{"reg.example/acme/api:" + commitA[:12], "reg.example/acme/worker:" + commitA[:12]} {
			if !strings.Contains(fc.changed["overlays/dev/kustomization.yaml"], img) {
				t.Errorf("overlays/dev/kustomization.yaml after the move = %q, want an override to %s", fc.changed["overlays/dev/kustomization.yaml"], img)
			}
		}
		if len(fc.changed) != 2 {
			t.Errorf("changed files = %v, want catalog.json and dev's overlay (cache is no catalog service)", slices.Sorted(maps.Keys(fc.changed)))
		}
		for _, want := range []string{"catalog.json moves from commit " + commitC + " back to commit " + commitA, "- apps/api: ", "- apps/worker: reg.example/acme/worker:" + commitC[:12] + " -> reg.example/acme/worker:" + commitA[:12], "5xx since C"} {
			if !strings.Contains(res.Commit.Message, want) {
				t.Errorf("commit message %q does not say %q", res.Commit.Message, want)
			}
		}
		if reqs := fc.requests(); len(reqs) != 1 || reqs[0].History != writeback.MaxHistory {
			t.Errorf("write-backs = %d, want one fetching %d commits of history", len(reqs), writeback.MaxHistory)
		}
	})

	t.Run("Apps sharing an images: entry move to the tag asked for", func(t *testing.T) {
		// The earlier catalog tags its images with the whole commit; the
		// App asked for ran its first 12 characters, and so must the canary
		// of the same image, as they share the overlay's images: entry.
		files := commitModeFiles(commitC, true)
		files["base/kustomization.yaml"] = "resources: [api.yaml, worker.yaml, cache.yaml, canary.yaml]\n"
		files["base/canary.yaml"] = "apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: api-canary\nspec:\n  image: reg.example/acme/api:" + commitA[:12] + "\n"
		whole := strings.ReplaceAll(earlier, ":"+commitA[:12]+`"`, ":"+commitA+`"`)
		fc := &fakeCommit{tree: mapFS(files), history: revisions(current, whole)}
		code, body := rollback(t, fc, files, commitA[:12])
		var res rollbackResponse
		if err := json.Unmarshal([]byte(body), &res); err != nil || code != http.StatusOK {
			t.Fatalf("rollback = %d %s, want 200", code, body)
		}
		var got []string
		for _, m := range res.Moved {
			got = append(got, m.App+" "+m.To)
		}
		want := []string{"api reg.example/acme/api:" + commitA[:12], "api-canary reg.example/acme/api:" + commitA[:12], "worker reg.example/acme/worker:" + commitA}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("moved (-want +got):\n%s", diff)
		}
		if len(fc.changed) != 2 || !strings.Contains(fc.changed["overlays/dev/kustomization.yaml"], "newTag: "+commitA[:12]) {
			t.Errorf("changed = %v, want catalog.json and the overlay's entries", fc.changed)
		}
	})

	t.Run("hostile revisions are passed over", func(t *testing.T) {
		// Each claims commit A and would be taken first if it were read
		// as a catalog.
		hostile := []string{
			strings.Replace(earlier, `"services"`, `"SERVICES": [], "services"`, 1),                                     // another spelling of a key
			strings.Replace(earlier, `"thirdParty"`, strings.Repeat(" ", deployplan.MaxCatalogBytes)+`"thirdParty"`, 1), // a catalog, but over the budget
			`{"commit": "` + commitA + `", "services": [` + strings.Repeat(`{"id": "x"},`, 20) + `]}`,                   // not a catalog
		}
		fc := &fakeCommit{tree: mapFS(commitModeFiles(commitC, false)), history: revisions(append(append([]string{current}, hostile...), earlier)...)}
		code, body := rollback(t, fc, nil, commitA[:12])
		if code != http.StatusOK || fc.changed["catalog.json"] != earlier {
			t.Errorf("rollback past hostile revisions = %d %s, catalog %.80q; want the good revision of A", code, body, fc.changed["catalog.json"])
		}
	})

	for _, tt := range []struct {
		name    string
		files   map[string]string // the tree (nil: commitModeFiles at C)
		history []writeback.Revision
		version string
		want    []string
	}{
		{"no revision has the commit", nil, revisions(current, earlier), commitB[:12],
			[]string{"catalog catalog.json is in commit mode and no revision of it has commit " + commitB[:12], "searched the whole history of branch main (2 commits)", "nothing was pushed"}},
		{"the search's bound", nil, revisions(append(slices.Repeat([]string{current}, writeback.MaxHistory), earlier)...), commitA[:12],
			[]string{"no revision of it has commit " + commitA[:12], "the last 500 commits of branch main (the search stops there)"}},
		{"only unreadable revisions", nil, revisions(current, `{"commit": "`+commitA+`", "services": [{"id": "x"}]}`), commitA[:12],
			[]string{"no revision of it has commit " + commitA[:12], "1 revisions that do not read as a catalog were passed over"}},
		{"a service the earlier catalog lacks", nil, revisions(current, commitModeCatalog(commitA, "api")), commitA[:12],
			[]string{"the catalog catalog.json at commit " + commitA + " has no service of image reg.example/acme/worker, which App worker runs"}},
		{"a version-mode catalog takes releases", func() map[string]string {
			f := commitModeFiles(commitC, false)
			f["catalog.json"] = twoReleasesCatalog
			return f
		}(), nil, commitA[:12], []string{"catalog.json is in version mode: a rollback takes a release it lists (MAJOR.MINOR.PATCH), not the commit tag " + commitA[:12]}},
		{"a workload the move leaves behind", func() map[string]string {
			f := commitModeFiles(commitC, false)
			f["base/kustomization.yaml"] = "resources: [api.yaml, worker.yaml, cache.yaml, job.yaml]\n"
			f["base/job.yaml"] = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: migrate, image: reg.example/acme/api:" + commitC[:12] + "}]\n"
			return f
		}(), revisions(current, earlier), commitA[:12],
			[]string{"after the move to commit " + commitA + ", the plan of environment dev would be blocked by its catalog catalog.json", "Job/migrate/migrate"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := tt.files
			if files == nil {
				files = commitModeFiles(commitC, false)
			}
			fc := &fakeCommit{tree: mapFS(files), history: tt.history}
			code, body := rollback(t, fc, files, tt.version)
			if code != http.StatusUnprocessableEntity || !strings.Contains(body, "CatalogRefuses") || strings.Contains(body, `"run"`) {
				t.Errorf("rollback = %d %s, want 422 CatalogRefuses and no run", code, body)
			}
			for _, want := range tt.want {
				if !strings.Contains(body, want) {
					t.Errorf("rollback = %s, want it to say %q", body, want)
				}
			}
			if len(fc.changed) != 0 && tt.name != "a workload the move leaves behind" {
				t.Errorf("a refused rollback edited %v", slices.Sorted(maps.Keys(fc.changed)))
			}
		})
	}
}

// TestRollbackThroughGitServerCommitMode: the commit-mode rollback through
// writeback.Commit against the git binary's smart HTTP on loopback. A
// commit no catalog revision of the branch has is refused with nothing
// pushed; an earlier catalog commit is one commit that puts the catalog
// back to that commit's revision and moves the overlay's images: entries of
// every App at the current commit, and nothing else.
func TestRollbackThroughGitServerCommitMode(t *testing.T) {
	srv := gitservertest.New(t, commitModeFiles(commitA, true), gitservertest.Options{})
	ts, rel := commitModeServer(t, srv.URL, nil)
	rollback := func(version string) (int, string) {
		w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader, body: `{"version": "` + version + `", "reason": "errors since C"}`})
		return w.Code, w.Body.String()
	}
	// The release of C, then a commit that leaves the catalog alone.
	atC := commitModeFiles(commitC, true)
	srv.RemoteCommitFiles(map[string]string{"catalog.json": atC["catalog.json"], "overlays/dev/kustomization.yaml": atC["overlays/dev/kustomization.yaml"]}, "release C")
	srv.RemoteCommit("README.md", "manifests\n")

	head, pushes := srv.Head("main"), srv.PushCount()
	code, body := rollback(commitB[:12])
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "CatalogRefuses") || !strings.Contains(body, "catalog catalog.json is in commit mode and no revision of it has commit "+commitB[:12]) {
		t.Errorf("rollback to a commit no catalog revision has = %d %s, want 422 CatalogRefuses naming the catalog and the commit", code, body)
	}
	if got := srv.Head("main"); got != head || srv.PushCount() != pushes {
		t.Errorf("after a refused rollback: head %s (was %s), %d pushes; want none", got, head, srv.PushCount()-pushes)
	}

	code, body = rollback(commitA[:12])
	var res rollbackResponse
	if err := json.Unmarshal([]byte(body), &res); err != nil || code != http.StatusOK || res.Commit == nil {
		t.Fatalf("rollback to commit A = %d %s, want the commit", code, body)
	}
	if got := srv.Head("main"); got != res.Commit.SHA || gitservertest.Run(t, srv.Bare, "rev-parse", got+"^") != head {
		t.Errorf("head %s, answer %s; want one commit on %s", got, res.Commit.SHA, head)
	}
	if got, want := gitservertest.Run(t, srv.Bare, "show", "--name-only", "--format=", res.Commit.SHA), "catalog.json\noverlays/dev/kustomization.yaml"; got != want {
		t.Errorf("the rollback commit changes %q, want %q", got, want)
	}
	cat, err := deployplan.ParseCatalog([]byte(gitservertest.Run(t, srv.Bare, "show", "main:catalog.json")))
	if err != nil || cat.Commit != commitA {
		t.Errorf("catalog.json after the rollback: %+v, %v; want commit A", cat, err)
	}
	if got := gitservertest.Run(t, srv.Bare, "show", "main:overlays/dev/kustomization.yaml"); strings.Count(got, "newTag: "+commitA[:12]) != 2 || strings.Contains(got, commitC[:12]) {
		t.Errorf("the overlay after the rollback =\n%s\nwant both images: entries at %s", got, commitA[:12])
	}
	var moved []string
	for _, m := range res.Moved {
		moved = append(moved, m.Namespace+"/"+m.App+" "+m.To)
	}
	if want := []string{"apps/api reg.example/acme/api:" + commitA[:12], "apps/worker reg.example/acme/worker:" + commitA[:12]}; !slices.Equal(moved, want) {
		t.Errorf("moved = %q, want %q", moved, want)
	}
	if msg := gitservertest.Run(t, srv.Bare, "log", "-1", "--format=%B", "main"); !strings.Contains(msg, "- apps/worker: reg.example/acme/worker:"+commitC[:12]+" -> reg.example/acme/worker:"+commitA[:12]) || !strings.Contains(msg, "back to commit "+commitA) {
		t.Errorf("the commit message =\n%s\nwant it to list the catalog move and worker", msg)
	}
	if res.Run == nil || len(rel.got()) != 0 {
		t.Errorf("rollback = %s, patches %v; want a run and no patch", body, rel.got())
	}
}

// desiredObjectsIn is desiredIn that also lists environment env's
// rendered objects, as envsource.Index does.
type desiredObjectsIn struct {
	desiredIn
	objs []*unstructured.Unstructured
}

// Lookup finds App api among the objects.
func (d desiredObjectsIn) Lookup(group, kind, namespace, name string) (envsource.Desired, bool) {
	des, ok := d.desiredIn.Lookup(group, kind, namespace, name)
	for _, o := range d.objs {
		if ok && o.GetName() == name {
			des.Object = o.DeepCopy()
		}
	}
	return des, ok
}

func (d desiredObjectsIn) Objects(env string) []*unstructured.Unstructured {
	if env != d.env {
		return nil
	}
	return d.objs
}

// TestRollbackThroughGitCommitModePage: the app page's confirmation of a
// rollback to a commit tag says the catalog and the other Apps at the
// App's commit move with it, and the result lists what moved.
func TestRollbackThroughGitCommitModePage(t *testing.T) {
	fc := &fakeCommit{tree: mapFS(commitModeFiles(commitC, false)), history: []writeback.Revision{
		{Commit: commitC, Content: []byte(commitModeCatalog(commitC, "api", "worker"))},
		{Commit: commitA, Content: []byte(commitModeCatalog(commitA, "api", "worker"))}}}
	ts, _ := commitModeServer(t, commitModeRepo(t, nil), fc, func(o *Options) {
		o.Desired = desiredObjectsIn{desiredIn{"dev"}, []*unstructured.Unstructured{
			appObject("api", "reg.example/acme/api:"+commitC[:12]), appObject("worker", "reg.example/acme/worker:"+commitC),
			appObject("cache", redis), appObject("old", "reg.example/acme/old:"+commitB[:12])}}
	})
	w := ts.get(t, "/clusters/in-cluster/apps/apps/api/rollback?version="+commitA[:12], htmxHeader)
	confirm := parseHTML(t, w.Body.String())
	if len(byTestID(confirm, "confirm-rollback-button")) != 1 {
		t.Fatalf("the confirmation of a rollback to a commit tag = %s, want a confirm button", w.Body)
	}
	if got := text(oneByTestID(t, confirm, "rollback-catalog-move")); !strings.Contains(got, "catalog catalog.json is in commit mode, the commit puts it back to its revision of "+commitA[:12]) {
		t.Errorf("rollback-catalog-move = %q, want it to name the catalog and the commit", got)
	}
	// worker is at C (its whole commit), cache is no catalog image, old
	// at another commit.
	if got := text(oneByTestID(t, confirm, "rollback-moves")); got != "apps/worker" {
		t.Errorf("rollback-moves = %q, want apps/worker", got)
	}

	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "HX-Request": "true"}
	w = ts.do(t, request{method: "POST", target: "/clusters/in-cluster/apps/apps/api/rollback", admin: true, header: form, body: "version=" + commitA[:12]})
	if w.Code != http.StatusOK {
		t.Fatalf("POST rollback page: status = %d, body %s", w.Code, w.Body)
	}
	doc := parseHTML(t, w.Body.String())
	if got := text(oneByTestID(t, doc, "commit-catalog")); !strings.Contains(got, "catalog.json: "+commitC[:12]+" → "+commitA[:12]) {
		t.Errorf("commit-catalog = %q, want the catalog's move %s → %s", got, commitC[:12], commitA[:12])
	}
	var moved []string
	for _, n := range byTestID(doc, "commit-moved") {
		moved = append(moved, strings.Join(strings.Fields(text(n)), " "))
	}
	want := []string{
		"apps/api reg.example/acme/api:" + commitC[:12] + " → reg.example/acme/api:" + commitA[:12],
		"apps/worker reg.example/acme/worker:" + commitC[:12] + " → reg.example/acme/worker:" + commitA[:12],
	}
	if diff := cmp.Diff(want, moved); diff != "" {
		t.Errorf("commit-moved (-want +got):\n%s", diff)
	}
}

// TestCommitModeSharedCatalogRefused: a commit-mode rollback moves the
// catalog file; when other environments of the branch read the same file,
// moving it would change what they may run, so the write is refused
// naming each, and nothing is committed.
func TestCommitModeSharedCatalogRefused(t *testing.T) {
	fc := &fakeCommit{tree: mapFS(commitModeFiles(commitC, false)), history: []writeback.Revision{
		{Commit: fmt.Sprintf("%040x", 2), Content: []byte(commitModeCatalog(commitC, "api", "worker"))},
		{Commit: fmt.Sprintf("%040x", 1), Content: []byte(commitModeCatalog(commitA, "api", "worker"))},
	}}
	ts, rel := commitModeServerWith(t, gitEnvConfig, commitModeRepo(t, nil), fc)
	w := ts.do(t, request{method: "POST", target: "/v1/deploy/api/rollback", admin: true, header: jsonHeader, body: `{"version": "` + commitA[:12] + `", "reason": "5xx since C"}`})
	var e struct{ Error, Reason string }
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || w.Code != http.StatusUnprocessableEntity || e.Reason != "ReachesOtherEnvironments" ||
		!strings.Contains(e.Error, "plain (catalog catalog.json)") || !strings.Contains(e.Error, "review (catalog catalog.json)") {
		t.Fatalf("rollback with a shared catalog = %d %s, want 422 ReachesOtherEnvironments naming plain's and review's catalog", w.Code, w.Body)
	}
	if len(rel.got()) != 0 {
		t.Errorf("the live App was patched: %v", rel.got())
	}
}
