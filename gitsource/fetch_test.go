package gitsource

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// testRemote is a repository with one commit on main holding a file of
// size zeros, served by go-git's in-process upload-pack.
func testRemote(t *testing.T, size int) (Remote, plumbing.Hash) {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "zeros"), make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Add("zeros"); err != nil {
		t.Fatal(err)
	}
	head, err := wt.Commit("zeros", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(0, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := transport.NewEndpoint("file:///repo")
	if err != nil {
		t.Fatal(err)
	}
	return Remote{Endpoint: ep, Transport: server.NewServer(server.MapLoader{ep.String(): repo.Storer})}, head
}

// TestFetch fetches a commit within the caps into a store on disk, and
// refuses the same pack over the wire cap and over the inflate cap, each
// with a *TooLargeError naming the caller's limit; no temporary pack file
// is left in the store.
func TestFetch(t *testing.T) {
	rem, head := testRemote(t, 1<<20) // 1 MiB of zeros: a pack of about 1 KiB
	big := Cap{Max: 64 << 20, Limit: "big", What: "the pack"}
	tests := []struct {
		name      string
		lim       Limits
		wantLimit string
		wantUnit  string
	}{
		{"within the caps", Limits{Pack: big, Inflated: big}, "", ""},
		{"over the wire cap", Limits{Pack: Cap{Max: 100, Limit: "MaxPackBytes", What: "the pack"}, Inflated: big}, "MaxPackBytes", "bytes"},
		{"over the inflate cap", Limits{Pack: big, Inflated: Cap{Max: 512 << 10, Limit: "MaxInflatedBytes", What: "the objects"}}, "MaxInflatedBytes", "bytes inflated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
			sess, err := Open(context.Background(), rem)
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			if got := sess.Refs[plumbing.NewBranchReferenceName("master")]; got == nil || got.Hash() != head {
				t.Fatalf("Open().Refs[master] = %v, want %s", got, head)
			}
			err = sess.Fetch(context.Background(), st, []plumbing.Hash{head}, 1, tt.lim)
			if tt.wantLimit == "" {
				if err != nil {
					t.Fatalf("Fetch = %v, want nil", err)
				}
				if _, err := object.GetCommit(st, head); err != nil {
					t.Errorf("the fetched store lacks the head %s: %v", head, err)
				}
			} else {
				var tl *TooLargeError
				if !errors.As(err, &tl) || tl.Limit != tt.wantLimit || tl.Unit != tt.wantUnit {
					t.Fatalf("Fetch = %v, want a *TooLargeError of %s in %s", err, tt.wantLimit, tt.wantUnit)
				}
				var se *StepError
				if !errors.As(err, &se) || se.Step != "read the pack" {
					t.Errorf("Fetch = %v, want it a *StepError of step %q", err, "read the pack")
				}
			}
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && strings.HasPrefix(d.Name(), "incoming-") {
					t.Errorf("Fetch left its temporary pack %s", p)
				}
				return nil
			})
		})
	}
}

// TestCapFS: writes to a CapFS fail once they pass the cap in all.
func TestCapFS(t *testing.T) {
	fsys := CapFS(osfs.New(t.TempDir()), Cap{Max: 10, Limit: "disk", What: "the store"})
	f, err := fsys.Create("a")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 10)); err != nil {
		t.Fatalf("Write(10 bytes, cap 10) = %v, want nil", err)
	}
	_, err = f.Write([]byte{0})
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Unit != "bytes written" || tl.Read != 11 {
		t.Errorf("Write(the 11th byte, cap 10) = %v, want a *TooLargeError of 11 bytes written", err)
	}
}

// TestHTTPClient: an answer over the cap fails with a *TooLargeError of
// HTTPOptions.Answers, and with Host set no other host is contacted.
func TestHTTPClient(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 100))
	}))
	defer ts.Close()
	host := strings.TrimPrefix(ts.URL, "http://")
	answers := Cap{Max: 50, Limit: "MaxPackBytes", What: "an answer"}
	c := HTTPClient(HTTPOptions{Timeout: 5 * time.Second, Answers: answers, Host: host})
	resp, err := c.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != "MaxPackBytes" {
		t.Errorf("read 100 bytes, cap 50 = %v, want a *TooLargeError of MaxPackBytes", err)
	}
	if _, err := c.Get("http://127.0.0.2:1/"); err == nil || !strings.Contains(err.Error(), "only "+host+" is contacted") {
		t.Errorf("Get(another host) = %v, want it refused before any connection", err)
	}
}
