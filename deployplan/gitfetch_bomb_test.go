package deployplan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// gitCmd runs git in dir with a fixed identity and returns its output.
func gitCmd(t *testing.T, dir string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// zipBombRepo makes a bare repository whose branch main holds a
// kustomization, a ConfigMap, a catalog, and blobs (zeros, each made
// distinct by its last bytes, so git stores most as deltas of one
// another) of size bytes each: a pack of kilobytes that inflates to
// n x size bytes. Nothing of that size is written to disk: the blobs go
// straight into git's object store, compressed.
func zipBombRepo(t *testing.T, n, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bomb.git")
	gitCmd(t, "", nil, "init", "-q", "--bare", "-b", "main", dir)
	hash := func(data []byte) string { return gitCmd(t, dir, data, "hash-object", "-w", "--stdin") }
	zeros := make([]byte, size)
	var tree strings.Builder
	for i := range n {
		copy(zeros[size-8:], fmt.Sprintf("%08d", i))
		fmt.Fprintf(&tree, "100644 blob %s\tzero%03d.bin\n", hash(zeros), i)
	}
	k := gitCmd(t, dir, []byte(fmt.Sprintf("100644 blob %s\tkustomization.yaml\n100644 blob %s\tcm.yaml\n",
		hash([]byte("resources: [cm.yaml]\n")), hash([]byte(okCM)))), "mktree")
	fmt.Fprintf(&tree, "040000 tree %s\tk\n100644 blob %s\tcatalog.json\n", k, hash([]byte(`{"commit": "`+commitA+`", "services": []}`)))
	root := gitCmd(t, dir, []byte(tree.String()), "mktree")
	commit := gitCmd(t, dir, nil, "commit-tree", root, "-m", "zeros")
	gitCmd(t, dir, nil, "update-ref", "refs/heads/main", commit)
	gitCmd(t, dir, nil, "repack", "-adq") // deltas between the blobs
	return dir
}

// gitDaemon serves the bare repositories under base with a real git
// daemon on loopback and returns the git:// URL of base.
func gitDaemon(t *testing.T, base string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("git", "daemon", "--export-all", "--reuseaddr", "--base-path="+base, "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), base)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("git daemon did not listen on %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "git://" + addr
}

// fetchTemps lists the fetch stores left in the temporary folder.
func fetchTemps(t *testing.T) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(os.TempDir(), "deploy-web-fetch-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFetchZipBombOverGitDaemon fetches, from a real git daemon, a
// repository whose pack is kilobytes and whose objects inflate to
// hundreds of megabytes (one blob of zeros, or many near-identical blobs
// stored as deltas): the fetch fails with a *TooLargeError naming
// limits.maxInflatedBytes while the pack streams in, before go-git
// indexes (and inflates) it, the heap stays small and the temporary object
// store is gone. The same repository renders within a larger cap.
func TestFetchZipBombOverGitDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and serves repositories of 200 MB of zeros")
	}
	t.Setenv("TMPDIR", t.TempDir())
	base := t.TempDir()
	for _, tc := range []struct {
		name    string
		n, size int
	}{
		{"one blob of 200 MB", 1, 200 << 20},
		{"40 near-identical blobs of 5 MB (deltas)", 40, 5 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := zipBombRepo(t, tc.n, tc.size)
			if err := os.Rename(repo, filepath.Join(base, strings.ReplaceAll(tc.name, " ", "-")+".git")); err != nil {
				t.Fatal(err)
			}
		})
	}
	url := gitDaemon(t, base)
	for _, tc := range []struct {
		name string
		lim  envconfig.Limits
		ok   bool
	}{
		{"one blob of 200 MB", envconfig.Limits{}, false},
		{"40 near-identical blobs of 5 MB (deltas)", envconfig.Limits{MaxInflatedBytes: 64 << 20}, false},
		{"40 near-identical blobs of 5 MB (deltas)", envconfig.Limits{MaxInflatedBytes: 256 << 20}, true},
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.name, tc.lim.MaxInflatedBytes), func(t *testing.T) {
			env := &envconfig.Environment{Name: "dev", Namespace: "dev", Catalog: "catalog.json", Limits: tc.lim,
				Source: envconfig.Source{Repo: url + "/" + strings.ReplaceAll(tc.name, " ", "-") + ".git", Ref: "main", Path: "k"}}
			var err error
			peak := heapPeak(func() { _, err = Render(context.Background(), env) })
			if tc.ok {
				if err != nil {
					t.Fatalf("Render(%s) = %v, want it rendered within the cap", tc.name, err)
				}
			} else {
				var tl *TooLargeError
				if !errors.As(err, &tl) || tl.Limit != "limits.maxInflatedBytes" || !strings.Contains(err.Error(), "bytes inflated") {
					t.Fatalf("Render(%s) = %v, want a *TooLargeError of limits.maxInflatedBytes", tc.name, err)
				}
				if peak > 32<<20 {
					t.Errorf("Render(%s) heap peak = %d MiB, want under 32 MiB", tc.name, peak>>20)
				}
			}
			if left := fetchTemps(t); len(left) > 0 {
				t.Errorf("Render(%s) left its object store behind: %v", tc.name, left)
			}
		})
	}
}

// TestFetchStoreRemovedAfterDeadline: a server that accepts and never
// answers holds the fetch past limits.sourceTimeout; Render returns at the
// deadline, and the abandoned fetch's temporary object store is removed
// once the fetch gives up, not left in the temporary folder.
func TestFetchStoreRemovedAfterDeadline(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	addr, accepted := hangListener(t)
	env := &envconfig.Environment{Name: "dev", Namespace: "dev", Catalog: "catalog.json", Limits: envconfig.Limits{SourceTimeout: metav1.Duration{Duration: 300 * time.Millisecond}},
		Source: envconfig.Source{Repo: "git://" + addr + "/x.git", Ref: "main", Path: "k"}}
	_, err := Render(context.Background(), env)
	if err == nil || !strings.Contains(err.Error(), "no complete answer within 300ms") {
		t.Fatalf("Render(hanging server) = %v, want the source timeout", err)
	}
	if accepted.Load() == 0 {
		t.Fatal("the server was never reached")
	}
	for deadline := time.Now().Add(10 * time.Second); len(fetchTemps(t)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the abandoned fetch left its object store: %v", fetchTemps(t))
		}
	}
}
