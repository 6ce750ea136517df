package writeback

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestCommitLocalRepository(t *testing.T) {
	s := newGitServer(t, fixture(t), serverOptions{})
	before := s.head("main")
	res, err := Commit(context.Background(), request("file://"+s.bare, "1.2.0"))
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if got := s.head("main"); got != res.SHA {
		t.Errorf("main = %s, want %s", got, res.SHA)
	}
	if got := runGit(t, s.bare, "rev-parse", "main^"); got != before {
		t.Errorf("main^ = %s, want %s", got, before)
	}
	if got, want := runGit(t, s.bare, "show", "--name-only", "--format=", "main"), prodKust; got != want {
		t.Errorf("changed files = %q, want %q", got, want)
	}
	runGit(t, s.bare, "fsck", "--no-progress")

	// The branch moved and a writer holds its lock: no update, twice.
	s.remoteCommit("README.md", "moved\n")
	lock := filepath.Join(s.bare, "refs", "heads", "main.lock")
	writeTree(t, filepath.Dir(lock), map[string]string{"main.lock": "held\n"})
	head := s.head("main")
	_, err = Commit(context.Background(), request("file://"+s.bare, "1.1.0"))
	var ce *ConflictError
	if !errors.As(err, &ce) || s.head("main") != head {
		t.Errorf("Commit with main.lock held = %v, main %s; want *ConflictError and main at %s", err, s.head("main"), head)
	}

	// A repository with a work tree on the branch is refused.
	_, err = Commit(context.Background(), request("file://"+s.work, "1.1.0"))
	var re *RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "checked out") {
		t.Errorf("Commit to a checked-out branch = %v, want *RefusedError saying it is checked out", err)
	}
}

func TestNewRemoteRefuses(t *testing.T) {
	for _, tc := range []struct {
		url, want string
	}{
		{"https://user:" + testToken + "@github.com/acme/m.git", "holds credentials"},
		{"http://git.example.com/acme/m.git", "use https"},
		{"ssh://git@github.com/acme/m.git", "not supported"},
		{"git@github.com:acme/m.git", "not a URL"},
		{"file://host/srv/m.git", "file:///absolute/path"},
	} {
		_, err := newRemote(tc.url, Token{}, Limits{})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), testToken) {
			t.Errorf("newRemote(%q) = %v, want an error saying %q without the token", redactURL(tc.url), err, tc.want)
		}
	}
}

func TestCommitFollowsNoRedirect(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer other.Close()
	// "localhost" is another host than 127.0.0.1 for the client.
	target := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+r.URL.RequestURI(), http.StatusFound)
	}))
	defer redirector.Close()
	req := request(redirector.URL+"/repo.git", "1.2.0")
	req.Auth = NewToken("", testToken)
	_, err := Commit(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "follows no redirect") || strings.Contains(err.Error(), testToken) {
		t.Errorf("Commit through a redirect = %v, want a refusal saying no redirect is followed", err)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the redirect's target got %d requests, want none", n)
	}
}

func TestCommitPackCap(t *testing.T) {
	files := fixture(t)
	files["blob.txt"] = noise(256<<10, 1) // well over the cap, incompressible
	s := newGitServer(t, files, serverOptions{})
	req := request(s.url, "1.2.0")
	req.Limits.MaxPackBytes = 64 << 10
	_, err := Commit(context.Background(), req)
	var tl *TooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "MaxPackBytes") {
		t.Errorf("Commit over the pack cap = %v, want *TooLargeError naming MaxPackBytes", err)
	}
}

func TestCommitDeadline(t *testing.T) {
	release := make(chan struct{})
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer stall.Close()
	defer close(release)
	req := request(stall.URL+"/repo.git", "1.2.0")
	req.Limits.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, err := Commit(context.Background(), req)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "within 300ms") {
		t.Errorf("Commit against a silent server = %v, want the deadline error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Commit returned after %s, want about the 300ms deadline", d)
	}
}

// noise is n bytes that do not compress.
func noise(n int, seed uint32) string {
	var b strings.Builder
	x := seed
	for b.Len() < n {
		x = x*1664525 + 1013904223
		b.WriteByte(byte('a' + x>>24%26))
	}
	return b.String()
}

func TestCommitInflatedCap(t *testing.T) {
	blob := noise(600<<10, 7)
	for _, tc := range []struct {
		name  string
		files map[string]string
	}{
		// 2 MiB of one byte: a few kilobytes on the wire.
		{"a blob that compresses", map[string]string{"zeros.bin": strings.Repeat("0", 2<<20)}},
		// Two near-identical 600 KiB files: the second travels as a small
		// delta that makes 600 KiB, and counts for that.
		{"a delta that expands", map[string]string{"data/a.bin": blob, "data/b.bin": blob + "tail"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := fixture(t)
			for k, v := range tc.files {
				files[k] = v
			}
			s := newGitServer(t, files, serverOptions{})
			req := request(s.url, "1.2.0")
			req.Limits.MaxInflatedBytes = 1 << 20
			_, err := Commit(context.Background(), req)
			var tl *TooLargeError
			if !errors.As(err, &tl) || tl.Limit != "MaxInflatedBytes" {
				t.Errorf("Commit = %v, want *TooLargeError of MaxInflatedBytes", err)
			}
			req.Limits.MaxInflatedBytes = 4 << 20
			if _, err := Commit(context.Background(), req); err != nil {
				t.Errorf("Commit under a 4 MiB cap = %v, want success", err)
			}
		})
	}
}
