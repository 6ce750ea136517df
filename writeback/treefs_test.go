package writeback

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	git "github.com/go-git/go-git/v5"
)

// headTreeFS is a treeFS over the HEAD tree of a repository made by the
// git binary from files and links.
func headTreeFS(t *testing.T, files, links map[string]string, maxFile int64) *treeFS {
	t.Helper()
	dir := locateTree(t, files, links)
	runGit(t, dir, "init", "-q", "-b", "main")
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-q", "-m", "tree")
	repo, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	head, err := repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.CommitObject(head.Hash())
	if err != nil {
		t.Fatal(err)
	}
	tree, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	return &treeFS{st: repo.Storer, root: tree, maxFile: maxFile}
}

func TestTreeFS(t *testing.T) {
	files := fixture(t)
	tfs := headTreeFS(t, files, nil, DefaultMaxFileBytes)
	if err := fstest.TestFS(tfs, "base/api.yaml", "overlays/dev/kustomization.yaml", "artifacts/catalog.json"); err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(tfs, "base/api.yaml")
	if err != nil || string(b) != files["base/api.yaml"] {
		t.Errorf("ReadFile(base/api.yaml) = %q, %v; want the file", b, err)
	}
}

func TestTreeFSLinksAndCaps(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	tfs := headTreeFS(t, map[string]string{"a/big.yaml": strings.Repeat("x", 2048), "a/ok.yaml": "k: v\n"},
		map[string]string{"a/link.yaml": secret, "dirlink": "a"}, 1024)
	for _, tc := range []struct {
		name, want string
	}{
		{"a/link.yaml", "not a regular file"},
		{"dirlink/ok.yaml", "does not exist"},
		{"a/big.yaml", "MaxFileBytes"},
		{"../a/ok.yaml", "invalid"},
	} {
		_, err := fs.ReadFile(tfs, tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadFile(%s) = %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	fi, err := fs.Lstat(tfs, "a/link.yaml")
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat(a/link.yaml) = %v, %v; want a symbolic link", fi, err)
	}
	if _, err := fs.ReadLink(tfs, "a/link.yaml"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("ReadLink = %v, want ErrUnsupported (a link's target is never used)", err)
	}
}
