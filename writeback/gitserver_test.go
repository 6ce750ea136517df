package writeback

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

// gitEnv isolates the git binary from the machine's configuration.
func gitEnv(home string) []string {
	return append(os.Environ(),
		"HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.invalid",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.invalid",
		"GIT_TERMINAL_PROMPT=0")
}

// runGit runs the git binary in dir and returns its trimmed output.
func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitServer is a bare repository served by the git binary's smart HTTP
// (git http-backend through net/http/cgi) on loopback.
type gitServer struct {
	t    testing.TB
	bare string
	url  string
	// work is a clone of the bare repository, for commits made "by
	// someone else" (remoteCommit).
	work string

	mu sync.Mutex
	// beforeReceive runs when a push's pack arrives, before git
	// receive-pack sees it.
	beforeReceive func()
	// pushes counts the push requests that reached receive-pack.
	pushes int
}

type serverOptions struct {
	// user and password, when set, are required as basic auth.
	user, password string
	// preReceive is a pre-receive hook script, when set.
	preReceive string
	// symlinks are links (path -> target) committed with the files.
	symlinks map[string]string
	// readOnly leaves receive-pack off: git http-backend answers a push
	// with 403, as a forge does for a token that may only read.
	readOnly bool
}

// newGitServer creates a bare repository holding files (one commit on
// main) and serves it.
func newGitServer(t testing.TB, files map[string]string, opt serverOptions) *gitServer {
	t.Helper()
	root := t.TempDir()
	seed := filepath.Join(root, "seed")
	writeTree(t, seed, files)
	for p, target := range opt.symlinks {
		full := filepath.Join(seed, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
	}
	runGit(t, seed, "init", "-q", "-b", "main")
	runGit(t, seed, "add", "-A")
	runGit(t, seed, "commit", "-q", "-m", "seed")
	projects := filepath.Join(root, "srv")
	if err := os.MkdirAll(projects, 0o755); err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(projects, "repo.git")
	runGit(t, root, "clone", "-q", "--bare", seed, bare)
	if !opt.readOnly {
		runGit(t, bare, "config", "http.receivepack", "true")
	}
	if opt.preReceive != "" {
		hook := filepath.Join(bare, "hooks", "pre-receive")
		if err := os.WriteFile(hook, []byte(opt.preReceive), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := &gitServer{t: t, bare: bare, work: filepath.Join(root, "work")}
	runGit(t, root, "clone", "-q", bare, s.work)
	backend := &cgi.Handler{
		Path: filepath.Join(runGit(t, root, "--exec-path"), "git-http-backend"),
		Env:  append(gitEnv(root), "GIT_PROJECT_ROOT="+projects, "GIT_HTTP_EXPORT_ALL=1"),
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if opt.user != "" {
			u, p, ok := r.BasicAuth()
			if !ok || u != opt.user || p != opt.password {
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
	s.url = srv.URL + "/repo.git"
	return s
}

// setBeforeReceive sets the hook run when a push's pack arrives.
func (s *gitServer) setBeforeReceive(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beforeReceive = f
}

func (s *gitServer) pushCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pushes
}

// head is the commit of refs/heads/<branch> in the bare repository.
func (s *gitServer) head(branch string) string {
	return runGit(s.t, s.bare, "rev-parse", "refs/heads/"+branch)
}

// remoteCommit commits a change of file on main, as another writer
// would, straight into the bare repository, and returns the commit.
func (s *gitServer) remoteCommit(file, content string) string {
	runGit(s.t, s.work, "pull", "-q", "--ff-only", "origin", "main")
	writeTree(s.t, s.work, map[string]string{file: content})
	runGit(s.t, s.work, "add", "-A")
	runGit(s.t, s.work, "commit", "-q", "-m", "concurrent change of "+file)
	runGit(s.t, s.work, "push", "-q", "origin", "HEAD:main")
	return runGit(s.t, s.work, "rev-parse", "HEAD")
}

func writeTree(t testing.TB, dir string, files map[string]string) {
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
