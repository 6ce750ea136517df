package gitservertest

import (
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// LocalCommits makes a local repository (no server) with one empty commit
// per message, oldest first, by author, a minute apart; it returns the
// repository's folder and the commits' hashes in order. For tests that
// read commit messages (release notes).
func LocalCommits(t testing.TB, author string, msgs ...string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	w, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	var hashes []string
	for i, m := range msgs {
		h, err := w.Commit(m, &git.CommitOptions{AllowEmptyCommits: true,
			Author: &object.Signature{Name: author, Email: "dev@example.com", When: time.Date(2026, 12, 1, 10, i, 0, 0, time.UTC)}})
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, h.String())
	}
	return dir, hashes
}
