// Package gitservertest serves a bare git repository with the git binary's
// smart HTTP (git http-backend through net/http/cgi) on loopback, for the
// tests of the write-back and of the console's rollback through git: a
// real git server process answers fetches and pushes, runs hooks and
// checks credentials. Everything stops at the end of the test. Only
// _test.go files import it (internal/buildtags TestBinaryLinksNoTestPackage
// fails if the binary ever links it): the product starts no process.
package gitservertest

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Env isolates the git binary from the machine's configuration.
func Env(home string) []string {
	return append(os.Environ(),
		"HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.invalid",
		"GIT_TERMINAL_PROMPT=0")
}

// Run runs the git binary in dir and returns its trimmed output; a failure
// ends the test.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = Env(dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// WriteTree writes files (slash paths relative to dir) into dir.
func WriteTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Options configure a Server.
type Options struct {
	// User and Password, when set, are required as basic auth.
	User, Password string
	// PreReceive is a pre-receive hook script, when set.
	PreReceive string
	// Symlinks are links (path -> target) committed with the files.
	Symlinks map[string]string
	// ReadOnly leaves receive-pack off: git http-backend answers a push
	// with 403, as a forge does for a token that may only read.
	ReadOnly bool
}

// Server is a bare repository served over smart HTTP on loopback.
type Server struct {
	t testing.TB
	// URL is the repository's URL (http://127.0.0.1:PORT/repo.git), Bare
	// its folder on disk.
	URL, Bare string
	// Work is a clone of the repository, for commits made "by someone
	// else" (RemoteCommit).
	Work string

	mu sync.Mutex
	// beforeReceive runs when a push's pack arrives, before git
	// receive-pack sees it.
	beforeReceive func()
	// pushes counts the push requests that reached receive-pack.
	pushes int
}

// New creates a bare repository holding files (one commit on main) and
// serves it until the test ends.
func New(t testing.TB, files map[string]string, opt Options) *Server {
	t.Helper()
	root := t.TempDir()
	seed := filepath.Join(root, "seed")
	WriteTree(t, seed, files)
	for p, target := range opt.Symlinks {
		full := filepath.Join(seed, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
	}
	Run(t, seed, "init", "-q", "-b", "main")
	Run(t, seed, "add", "-A")
	Run(t, seed, "commit", "-q", "-m", "seed")
	projects := filepath.Join(root, "srv")
	if err := os.MkdirAll(projects, 0o755); err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(projects, "repo.git")
	Run(t, root, "clone", "-q", "--bare", seed, bare)
	if !opt.ReadOnly {
		Run(t, bare, "config", "http.receivepack", "true")
	}
	if opt.PreReceive != "" {
		hook := filepath.Join(bare, "hooks", "pre-receive")
		if err := os.WriteFile(hook, []byte(opt.PreReceive), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := &Server{t: t, Bare: bare, Work: filepath.Join(root, "work")}
	Run(t, root, "clone", "-q", bare, s.Work)
	backend := &cgi.Handler{
		Path: filepath.Join(Run(t, root, "--exec-path"), "git-http-backend"),
		Env:  append(Env(root), "GIT_PROJECT_ROOT="+projects, "GIT_HTTP_EXPORT_ALL=1"),
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if opt.User != "" {
			u, p, ok := r.BasicAuth()
			if !ok || u != opt.User || p != opt.Password {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
			s.mu.Lock()
			s.pushes++
			f := s.beforeReceive
			s.mu.Unlock()
			if f != nil {
				f()
			}
		}
		backend.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/repo.git"
	return s
}

// SetBeforeReceive sets the hook run when a push's pack arrives.
func (s *Server) SetBeforeReceive(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beforeReceive = f
}

// PushCount is the number of push requests that reached receive-pack.
func (s *Server) PushCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pushes
}

// Head is the commit of refs/heads/<branch> in the bare repository.
func (s *Server) Head(branch string) string {
	return Run(s.t, s.Bare, "rev-parse", "refs/heads/"+branch)
}

// RemoteCommit commits a change of file on main, as another writer would,
// straight into the bare repository, and returns the commit.
func (s *Server) RemoteCommit(file, content string) string {
	return s.RemoteCommitFiles(map[string]string{file: content}, "concurrent change of "+file)
}

// RemoteCommitFiles commits files on main with message msg, as another
// writer would, and returns the commit.
func (s *Server) RemoteCommitFiles(files map[string]string, msg string) string {
	Run(s.t, s.Work, "pull", "-q", "--ff-only", "origin", "main")
	WriteTree(s.t, s.Work, files)
	Run(s.t, s.Work, "add", "-A")
	Run(s.t, s.Work, "commit", "-q", "-m", msg)
	Run(s.t, s.Work, "push", "-q", "origin", "HEAD:main")
	return Run(s.t, s.Work, "rev-parse", "HEAD")
}
