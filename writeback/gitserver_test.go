package writeback

import (
	"testing"

	"github.com/hanzoai/deploy-web/internal/gitservertest"
)

// runGit runs the git binary in dir and returns its trimmed output.
func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return gitservertest.Run(t, dir, args...)
}

// gitServer is a bare repository served by the git binary's smart HTTP
// (internal/gitservertest), under the names these tests use.
type gitServer struct {
	*gitservertest.Server
	bare, url, work string
}

type serverOptions struct {
	user, password string
	preReceive     string
	symlinks       map[string]string
	readOnly       bool
}

// newGitServer creates a bare repository holding files (one commit on
// main) and serves it.
func newGitServer(t testing.TB, files map[string]string, opt serverOptions) *gitServer {
	t.Helper()
	s := gitservertest.New(t, files, gitservertest.Options{User: opt.user, Password: opt.password, PreReceive: opt.preReceive, Symlinks: opt.symlinks, ReadOnly: opt.readOnly})
	return &gitServer{Server: s, bare: s.Bare, url: s.URL, work: s.Work}
}

func (s *gitServer) setBeforeReceive(f func())                { s.SetBeforeReceive(f) }
func (s *gitServer) pushCount() int                           { return s.PushCount() }
func (s *gitServer) head(branch string) string                { return s.Head(branch) }
func (s *gitServer) remoteCommit(file, content string) string { return s.RemoteCommit(file, content) }

func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	gitservertest.WriteTree(t, dir, files)
}
