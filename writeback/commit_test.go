package writeback

import (
	"context"
	"encoding/base64"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/hanzoai/deploy-web/internal/actor"
)

const (
	apiRepo   = "registry.demo.local/inventory/api"
	prodKust  = "overlays/prod/kustomization.yaml"
	baseApi   = "base/api.yaml"
	testToken = "ghp_s3cretTokenValue0123456789"
)

// fixture is the demo-shaped repository of testdata/inventory.
func fixture(t testing.TB) map[string]string {
	t.Helper()
	files := map[string]string{}
	root := filepath.Join("testdata", "inventory")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// request is a push-mode request setting prod's api tag to tag.
func request(url, tag string) Request {
	return Request{
		RepoURL: url,
		Branch:  "main",
		Mode:    envconfig.ModePush,
		Author:  RenderAuthor(envconfig.AuthorTemplate{}, actor.Actor{Name: "Ada", Email: "ada@example.com", Subject: "u-1"}),
		Message: Message("rollback", "staging/api", "1.4.2", tag, actor.Actor{Email: "ada@example.com", Subject: "u-1"}, "bad deploy"),
		Edits:   []Edit{SetKustomizeImage{File: prodKust, Name: apiRepo, NewTag: tag}},
		Action:  "rollback", App: "api", Version: tag,
		Limits: Limits{Timeout: 30 * time.Second},
	}
}

func TestCommitPushChangesOneFile(t *testing.T) {
	s := newGitServer(t, fixture(t), serverOptions{})
	before := s.head("main")
	res, err := Commit(context.Background(), request(s.url, "1.2.0"))
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if got := s.head("main"); got != res.SHA {
		t.Errorf("main = %s, want the pushed commit %s", got, res.SHA)
	}
	if res.Parent != before || runGit(t, s.bare, "rev-parse", "main^") != before {
		t.Errorf("parent = %s (main^ %s), want %s", res.Parent, runGit(t, s.bare, "rev-parse", "main^"), before)
	}
	if got, want := runGit(t, s.bare, "show", "--stat", "--format=", "main"), prodKust+" | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)"; got != want {
		t.Errorf("git show --stat main =\n%s\nwant\n%s", got, want)
	}
	if got := runGit(t, s.bare, "show", "main:"+prodKust); !strings.Contains(got, `- {name: registry.demo.local/inventory/api, newTag: "1.2.0"}`) {
		t.Errorf("%s after the push =\n%s\nwant the api entry at 1.2.0", prodKust, got)
	}
	if got, want := runGit(t, s.bare, "log", "-1", "--format=%an <%ae>|%s", "main"), "Ada via deploy-web <ada@example.com>|deploy-web: rollback staging/api 1.4.2 -> 1.2.0"; got != want {
		t.Errorf("author|subject = %q, want %q", got, want)
	}
	if len(res.Files) != 1 || res.Files[0] != prodKust || res.Branch != "main" || res.NoChange || res.Retried || res.CompareURL != "" {
		t.Errorf("result = %+v, want main, files [%s], no retry, no compare link", res, prodKust)
	}
	// The remote is a valid repository with the commit in it.
	runGit(t, s.bare, "fsck", "--no-progress")
}

func TestCommitNoChange(t *testing.T) {
	s := newGitServer(t, fixture(t), serverOptions{})
	before := s.head("main")
	res, err := Commit(context.Background(), request(s.url, "1.4.2"))
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if !res.NoChange || res.SHA != before || s.head("main") != before || s.pushCount() != 0 {
		t.Errorf("Commit(tag already there) = %+v, main %s, %d pushes; want NoChange at %s and no push", res, s.head("main"), s.pushCount(), before)
	}
}

func TestCommitBranchMode(t *testing.T) {
	s := newGitServer(t, fixture(t), serverOptions{})
	before := s.head("main")
	req := request(s.url, "1.2.0")
	req.Mode = envconfig.ModeBranch
	res, err := Commit(context.Background(), req)
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if res.Branch != "deploy-web/rollback-api-1.2.0" {
		t.Errorf("branch = %q, want deploy-web/rollback-api-1.2.0", res.Branch)
	}
	if got := s.head("deploy-web/rollback-api-1.2.0"); got != res.SHA {
		t.Errorf("review branch = %s, want %s", got, res.SHA)
	}
	if got := s.head("main"); got != before {
		t.Errorf("main = %s, want it untouched at %s", got, before)
	}
	if got := runGit(t, s.bare, "rev-parse", res.SHA+"^"); got != before {
		t.Errorf("review commit's parent = %s, want main's head %s", got, before)
	}
	// The same change again: the branch exists, nothing is moved.
	_, err = Commit(context.Background(), req)
	var be *BranchExistsError
	if !errors.As(err, &be) || s.head("deploy-web/rollback-api-1.2.0") != res.SHA {
		t.Errorf("second Commit = %v (branch at %s), want *BranchExistsError and the branch at %s", err, s.head("deploy-web/rollback-api-1.2.0"), res.SHA)
	}
}

func TestCommitHostileBranchParts(t *testing.T) {
	s := newGitServer(t, fixture(t), serverOptions{})
	before := s.head("main")
	req := request(s.url, "1.2.0")
	req.Mode = envconfig.ModeBranch
	req.Action, req.App, req.Version = "rollback", "../../heads/main", "1.2.0:refs/heads/main\n"
	req.Author = Identity{Name: "Eve\nCommitter: root <root@x>", Email: "eve@x>\n"}
	res, err := Commit(context.Background(), req)
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if want := "deploy-web/rollback-heads-main-1.2.0-refs-heads-main"; res.Branch != want {
		t.Errorf("branch = %q, want %q", res.Branch, want)
	}
	if got := s.head("main"); got != before {
		t.Errorf("main = %s, want it untouched at %s", got, before)
	}
	if got, want := runGit(t, s.bare, "log", "-1", "--format=%an|%ae|%cn", res.SHA), "Eve Committer: root root@x|eve@x|Eve Committer: root root@x"; got != want {
		t.Errorf("author|email|committer = %q, want %q", got, want)
	}
	if got := runGit(t, s.bare, "show", "--name-only", "--format=", res.SHA); got != prodKust {
		t.Errorf("the review commit changes %q, want only %s", got, prodKust)
	}
	refs := runGit(t, s.bare, "for-each-ref", "--format=%(refname)")
	if want := "refs/heads/deploy-web/rollback-heads-main-1.2.0-refs-heads-main\nrefs/heads/main"; refs != want {
		t.Errorf("refs =\n%s\nwant\n%s", refs, want)
	}
}

func TestCommitRetriesWhenBranchMoves(t *testing.T) {
	s := newGitServer(t, fixture(t), serverOptions{})
	req := request(s.url, "1.2.0")
	var concurrent string
	calls := 0
	// Check runs between the fetch and the push: another writer commits
	// then, once.
	req.Check = func(context.Context, fs.FS) error {
		calls++
		if calls == 1 {
			concurrent = s.remoteCommit("README.md", "changed by someone else\n")
		}
		return nil
	}
	res, err := Commit(context.Background(), req)
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if !res.Retried || calls != 2 {
		t.Errorf("retried = %t after %d checks, want a retry (2 checks)", res.Retried, calls)
	}
	if got := runGit(t, s.bare, "rev-parse", "main^"); got != concurrent || res.Parent != concurrent {
		t.Errorf("main^ = %s, parent %s, want the concurrent commit %s (a fast-forward on top of it)", got, res.Parent, concurrent)
	}
	if got := runGit(t, s.bare, "show", "main:README.md"); got != "changed by someone else" {
		t.Errorf("README.md = %q, want the concurrent change kept", got)
	}
	if got := runGit(t, s.bare, "show", "--stat", "--format=", "main"); !strings.HasPrefix(got, prodKust+" | 2 +-") {
		t.Errorf("git show --stat main = %s, want only %s", got, prodKust)
	}
}

func TestCommitRetriesWhenServerRejects(t *testing.T) {
	s := newGitServer(t, fixture(t), serverOptions{})
	var concurrent string
	// The branch moves after the update was prepared, as the pack
	// arrives: receive-pack itself rejects the stale old value.
	s.setBeforeReceive(func() {
		if concurrent == "" {
			concurrent = s.remoteCommit("README.md", "moved during the push\n")
		}
	})
	res, err := Commit(context.Background(), request(s.url, "1.2.0"))
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if !res.Retried || s.pushCount() != 2 {
		t.Errorf("retried = %t, %d pushes; want a rejected push and a second one", res.Retried, s.pushCount())
	}
	if got := runGit(t, s.bare, "rev-parse", "main^"); got != concurrent {
		t.Errorf("main^ = %s, want the concurrent commit %s", got, concurrent)
	}
}

func TestCommitFailsWhenBranchMovesTwice(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(s *gitServer, req *Request)
		// wantPushes is the push requests that reach the server.
		wantPushes int
	}{
		{"before each push", func(s *gitServer, req *Request) {
			n := 0
			req.Check = func(context.Context, fs.FS) error {
				n++
				s.remoteCommit("README.md", strings.Repeat("x", n)+"\n")
				return nil
			}
		}, 0},
		{"during each push", func(s *gitServer, _ *Request) {
			n := 0
			s.setBeforeReceive(func() {
				n++
				s.remoteCommit("README.md", strings.Repeat("y", n)+"\n")
			})
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newGitServer(t, fixture(t), serverOptions{})
			req := request(s.url, "1.2.0")
			tc.set(s, &req)
			_, err := Commit(context.Background(), req)
			t.Logf("Commit: %v", err)
			var ce *ConflictError
			if !errors.As(err, &ce) {
				t.Fatalf("Commit = %v, want *ConflictError", err)
			}
			if ce.Reason == "" || !strings.Contains(err.Error(), "nothing was forced") {
				t.Errorf("error = %q, want the reason and that nothing was forced", err)
			}
			if got := runGit(t, s.bare, "show", "main:"+prodKust); strings.Contains(got, "1.2.0") {
				t.Errorf("main holds the edit after a failed write-back:\n%s", got)
			}
			if s.pushCount() != tc.wantPushes {
				t.Errorf("%d pushes reached the server, want %d", s.pushCount(), tc.wantPushes)
			}
		})
	}
}

func TestCommitAuth(t *testing.T) {
	s := newGitServer(t, fixture(t), serverOptions{user: "x-access-token", password: testToken})
	for _, tc := range []struct {
		name    string
		token   Token
		wantErr bool
	}{
		{"wrong token", NewToken("", "ghp_wrongTokenValue9876543210"), true},
		{"no token", Token{}, true},
		{"right token", NewToken("", testToken), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := request(s.url, "1.2.0")
			req.Auth = tc.token
			_, err := Commit(context.Background(), req)
			if !tc.wantErr {
				if err != nil {
					t.Fatalf("Commit = %v, want success", err)
				}
				return
			}
			t.Logf("Commit: %v", err)
			var ae *AuthError
			if !errors.As(err, &ae) || ae.Status != 401 {
				t.Fatalf("Commit = %v, want *AuthError 401", err)
			}
			if strings.Contains(err.Error(), tc.token.secret) && tc.token.secret != "" || strings.Contains(err.Error(), testToken) {
				t.Errorf("error %q holds a token", err)
			}
			if !strings.Contains(err.Error(), "credentials") {
				t.Errorf("error %q does not say the credentials were refused", err)
			}
		})
	}
}

func TestCommitReadOnlyToken(t *testing.T) {
	s := newGitServer(t, fixture(t), serverOptions{readOnly: true})
	before := s.head("main")
	req := request(s.url, "1.2.0")
	req.Auth = NewToken("", testToken)
	_, err := Commit(context.Background(), req)
	var ae *AuthError
	if !errors.As(err, &ae) || ae.Status != 403 || !strings.Contains(err.Error(), "push rights") || strings.Contains(err.Error(), testToken) {
		t.Errorf("Commit with a read-only token = %v, want *AuthError 403 asking for push rights, without the token", err)
	}
	if s.head("main") != before {
		t.Errorf("main moved after a refused push")
	}
}

func TestCommitRedactsToken(t *testing.T) {
	// A server that echoes the Authorization it got into its error: the
	// token must not come back out of Commit.
	header := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + testToken))
	err := redactError(NewToken("", testToken), &EditError{File: "f", Reason: "bad answer: " + testToken + " refused; Authorization: Basic " + header})
	if strings.Contains(err.Error(), testToken) || strings.Contains(err.Error(), header) || strings.Count(err.Error(), "[redacted]") != 2 {
		t.Errorf("redactError = %q, want the token and its header replaced", err)
	}
	var ee *EditError
	if !errors.As(err, &ee) || strings.Contains(ee.Error(), testToken) || strings.Contains(ee.Error(), header) {
		t.Errorf("redactError = %T, want a redacted *EditError reachable (got %v)", err, ee)
	}
}

func TestCommitRefusedByHook(t *testing.T) {
	s := newGitServer(t, fixture(t), serverOptions{preReceive: "#!/bin/sh\necho 'GL-HOOK-ERR: branch main is protected: open a merge request' >&2\nexit 1\n"})
	before := s.head("main")
	_, err := Commit(context.Background(), request(s.url, "1.2.0"))
	t.Logf("Commit: %v", err)
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("Commit = %v, want *RefusedError", err)
	}
	for _, want := range []string{"pre-receive hook declined", "branch main is protected", "mode: branch"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if s.head("main") != before || s.pushCount() != 1 {
		t.Errorf("main moved or %d pushes; want main at %s after one refused push", s.pushCount(), before)
	}
}

func TestCommitRefusesFilesOutsideTheEdit(t *testing.T) {
	s := newGitServer(t, fixture(t), serverOptions{symlinks: map[string]string{
		"overlays/link/kustomization.yaml": "../prod/kustomization.yaml",
		"linked":                           "overlays",
	}})
	before := s.head("main")
	for _, tc := range []struct {
		file, want string
	}{
		{"overlays/link/kustomization.yaml", "symbolic link"},
		{"linked/prod/kustomization.yaml", "linked is a symbolic link"},
		{"../outside.yaml", "leaves the repository"},
		{".git/config", "inside .git"},
		{"overlays/../base/api.yaml", "not a clean path"},
		{"/etc/passwd", "not a relative"},
		{"overlays/prod/new.yaml", "no such file"},
		{"overlays/prod", "is a folder"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			req := request(s.url, "1.2.0")
			req.Edits = []Edit{SetKustomizeImage{File: tc.file, Name: apiRepo, NewTag: "1.2.0"}}
			_, err := Commit(context.Background(), req)
			var ee *EditError
			if !errors.As(err, &ee) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Commit(edit of %s) = %v, want *EditError saying %q", tc.file, err, tc.want)
			}
		})
	}
	if s.head("main") != before || s.pushCount() != 0 {
		t.Errorf("main moved or %d pushes after refused edits", s.pushCount())
	}
}

func TestCommitPlanAndLocate(t *testing.T) {
	s := newGitServer(t, fixture(t), serverOptions{})
	req := request(s.url, "1.2.0")
	req.Edits = nil
	req.Plan = func(repo fs.FS) ([]Edit, error) {
		edits, err := Locate(repo, ImageChange{Dir: "overlays/dev", Kind: "App", Name: "api", Repository: apiRepo, Tag: "1.2.0"}, 0)
		if err != nil {
			return nil, err
		}
		return append(edits, SetCatalogEntries{File: "artifacts/catalog.json", Content: []byte(`{"commit": "1111111", "services": []}`)}), nil
	}
	var checked string
	req.Check = func(_ context.Context, repo fs.FS) error {
		b, err := fs.ReadFile(repo, baseApi)
		checked = string(b)
		return err
	}
	res, err := Commit(context.Background(), req)
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if !strings.Contains(checked, "image: registry.demo.local/inventory/api:1.2.0\n") {
		t.Errorf("Check saw %s =\n%s\nwant the edited image", baseApi, checked)
	}
	if got, want := runGit(t, s.bare, "show", "--name-only", "--format=", "main"), "artifacts/catalog.json\n"+baseApi; got != want {
		t.Errorf("changed files =\n%s\nwant\n%s", got, want)
	}
	if len(res.Files) != 2 {
		t.Errorf("result files = %v, want 2", res.Files)
	}
}

func TestCommitCheckStopsThePush(t *testing.T) {
	s := newGitServer(t, fixture(t), serverOptions{})
	req := request(s.url, "1.2.0")
	req.Check = func(context.Context, fs.FS) error { return errors.New("render: App api still at 1.4.2") }
	_, err := Commit(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "still at 1.4.2") || s.pushCount() != 0 {
		t.Errorf("Commit = %v with %d pushes, want the check's error and no push", err, s.pushCount())
	}
}

func TestCommitRemovesTheClone(t *testing.T) {
	s := newGitServer(t, fixture(t), serverOptions{})
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ok := request(s.url, "1.2.0")
	failing := request(s.url, "1.3.0")
	failing.Check = func(context.Context, fs.FS) error { return errors.New("refused by the check") }
	for _, req := range []Request{ok, failing} {
		_, err := Commit(context.Background(), req)
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("after Commit (error %v) the temporary folder holds %d entries (%s), want none", err, len(left), left[0].Name())
		}
	}
}

func TestCommitRefusesBadRequests(t *testing.T) {
	base := request("http://127.0.0.1:1/repo.git", "1.2.0")
	for _, tc := range []struct {
		name string
		set  func(*Request)
		want string
	}{
		{"hostile branch", func(r *Request) { r.Branch = "main:refs/heads/prod" }, "not a valid branch name"},
		{"refs branch", func(r *Request) { r.Branch = "refs/heads/main" }, "without refs/heads/"},
		{"no mode", func(r *Request) { r.Mode = "" }, "want push or branch"},
		{"empty message", func(r *Request) { r.Message = " \n\t" }, "message is empty"},
		{"NUL in message", func(r *Request) { r.Message = "a\x00b" }, "NUL"},
		{"huge message", func(r *Request) { r.Message = strings.Repeat("m", maxMessageBytes+1) }, "more than"},
		{"no edit", func(r *Request) { r.Edits = nil }, "no edit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := base
			tc.set(&req)
			_, err := Commit(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Commit = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestCommitContainerImageStaysInTheOverlay: against the git binary's
// smart HTTP, a Deployment's image declared in a base that dev and
// staging share is changed for dev by an images: entry of dev's overlay
// alone (added, then edited by the next write); dev's render runs the
// new image and staging's the old one.
func TestCommitContainerImageStaysInTheOverlay(t *testing.T) {
	const repo = "reg.example/acme/api"
	s := newGitServer(t, map[string]string{
		"base/kustomization.yaml":             "resources: [api.yaml]\n",
		"base/api.yaml":                       "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  template:\n    spec:\n      containers: [{name: api, image: " + repo + ":1.0.0}]\n",
		"overlays/dev/kustomization.yaml":     "resources: [../../base]\nnamespace: dev\n",
		"overlays/staging/kustomization.yaml": "resources: [../../base]\nnamespace: staging\n",
	}, serverOptions{})
	render := func(sha, dir string) string {
		t.Helper()
		clone := filepath.Join(t.TempDir(), "m")
		runGit(t, t.TempDir(), "clone", "-q", s.bare, clone)
		runGit(t, clone, "checkout", "-q", sha)
		m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(clone, dir))
		if err != nil {
			t.Fatalf("render %s at %s: %v", dir, sha, err)
		}
		out, err := m.AsYaml()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	for i, tag := range []string{"1.1.0", "1.2.0"} {
		before := s.head("main")
		req := request(s.url, tag)
		req.Edits = nil
		req.Plan = func(repoFS fs.FS) ([]Edit, error) {
			return Locate(repoFS, ImageChange{Dir: "overlays/dev", Kind: "Deployment", Name: "api", Repository: repo, Tag: tag}, 0)
		}
		res, err := Commit(context.Background(), req)
		if err != nil {
			t.Fatalf("Commit %s: %v", tag, err)
		}
		if got := runGit(t, s.bare, "diff", "--name-only", before, res.SHA); got != "overlays/dev/kustomization.yaml" {
			t.Errorf("write %d changed %q, want overlays/dev/kustomization.yaml alone", i+1, got)
		}
		kust := runGit(t, s.bare, "show", res.SHA+":overlays/dev/kustomization.yaml")
		if strings.Count(kust, "name: "+repo) != 1 || !strings.Contains(kust, "newTag: "+tag) {
			t.Errorf("write %d: dev's overlay =\n%s\nwant one images: entry of %s at %s", i+1, kust, repo, tag)
		}
		if got := render(res.SHA, "overlays/dev"); !strings.Contains(got, "image: "+repo+":"+tag) {
			t.Errorf("write %d: dev renders\n%s\nwant image %s:%s", i+1, got, repo, tag)
		}
		if got := render(res.SHA, "overlays/staging"); !strings.Contains(got, "image: "+repo+":1.0.0") {
			t.Errorf("write %d: staging renders\n%s\nwant image %s:1.0.0 (untouched)", i+1, got, repo)
		}
	}
}
