package writeback

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"

	"github.com/hanzoai/deploy-web/internal/actor"
)

// restoreRequest sets path back to its state at commit.
func restoreRequest(url, path, commit string) Request {
	return Request{
		RepoURL: url, Branch: "main", Mode: envconfig.ModePush,
		Author:  RenderAuthor(envconfig.AuthorTemplate{}, actor.Actor{Name: "Ada", Email: "ada@example.com", Subject: "u-1"}),
		Message: Message("rollback", "dev", "head", "record", actor.Actor{Email: "ada@example.com", Subject: "u-1"}, "bad deploy"),
		Restore: []Restore{{Path: path, Commit: commit}},
		Action:  "rollback", App: "dev", Version: "r1",
		Limits: Limits{Timeout: 30 * time.Second},
	}
}

func TestCommitRestoresAFolder(t *testing.T) {
	s := newGitServer(t, map[string]string{
		"envs/dev/kustomization.yaml":  "resources: [a.yaml]\n",
		"envs/dev/a.yaml":              "a: 1\n",
		"envs/dev/gone.yaml":           "gone: 1\n",
		"envs/prod/kustomization.yaml": "resources: []\n",
	}, serverOptions{})
	a := s.head("main")
	// Commit B: dev's a.yaml changed, b.yaml added, gone.yaml removed;
	// prod changed too.
	writeTree(t, s.work, map[string]string{"envs/dev/a.yaml": "a: 2\n", "envs/dev/b.yaml": "b: 1\n", "envs/prod/kustomization.yaml": "resources: [p.yaml]\n"})
	runGit(t, s.work, "pull", "-q", "--ff-only", "origin", "main")
	runGit(t, s.work, "rm", "-q", "envs/dev/gone.yaml")
	runGit(t, s.work, "add", "-A")
	runGit(t, s.work, "commit", "-q", "-m", "B")
	runGit(t, s.work, "push", "-q", "origin", "HEAD:main")
	b := s.head("main")

	res, err := Commit(context.Background(), restoreRequest(s.url, "envs/dev", a))
	if err != nil {
		t.Fatalf("Commit(restore envs/dev to A): %v", err)
	}
	if res.NoChange || res.Parent != b || s.head("main") != res.SHA {
		t.Fatalf("result = %+v, main %s; want a commit on B (%s)", res, s.head("main"), b)
	}
	if got, want := runGit(t, s.bare, "rev-parse", "main:envs/dev"), runGit(t, s.bare, "rev-parse", a+":envs/dev"); got != want {
		t.Errorf("envs/dev after the restore = tree %s, want A's %s", got, want)
	}
	if got, want := runGit(t, s.bare, "rev-parse", "main:envs/prod"), runGit(t, s.bare, "rev-parse", b+":envs/prod"); got != want {
		t.Errorf("envs/prod after the restore = tree %s, want B's %s (untouched)", got, want)
	}
	if want := []string{"envs/dev/a.yaml", "envs/dev/b.yaml", "envs/dev/gone.yaml"}; !slices.Equal(res.Files, want) {
		t.Errorf("files = %v, want %v", res.Files, want)
	}
	runGit(t, s.bare, "fsck", "--no-progress")

	// Again: the folder is A's already.
	again, err := Commit(context.Background(), restoreRequest(s.url, "envs/dev", a))
	if err != nil || !again.NoChange || again.SHA != res.SHA {
		t.Errorf("Commit(restore again) = %+v, %v; want NoChange at %s", again, err, res.SHA)
	}
}

func TestCommitRestoreRefuses(t *testing.T) {
	s := newGitServer(t, map[string]string{"envs/dev/a.yaml": "a: 1\n"}, serverOptions{})
	a := s.head("main")
	_, err := Commit(context.Background(), restoreRequest(s.url, "envs/prod", a))
	var re *RestoreError
	if !errors.As(err, &re) || re.Path != "envs/prod" {
		t.Errorf("Commit(restore a folder A lacks) = %v, want a *RestoreError naming envs/prod", err)
	}
	for _, r := range []Restore{{Path: "envs/dev", Commit: "abc"}, {Path: "../x", Commit: a}, {Path: ".git/x", Commit: a}} {
		req := restoreRequest(s.url, r.Path, r.Commit)
		if _, err := Commit(context.Background(), req); err == nil {
			t.Errorf("Commit(restore %+v) = nil error, want a refusal", r)
		}
	}
	if n := s.pushCount(); n != 0 {
		t.Errorf("%d pushes, want none", n)
	}
}
