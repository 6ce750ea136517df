package main

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

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/devcluster"
)

// TestCLIRenderNeverLeavesTheRepository runs source-plan and apply
// --dry-run, as a user would, on a manifest repository whose overlay
// carries the reported exploit (a kustomize remote base whose ref injects
// --upload-pack) and other remote forms: each run fails with the
// kustomization file, the entry and what to do, and no program runs
// (recording shims first on PATH), so the proof file never appears.
func TestCLIRenderNeverLeavesTheRepository(t *testing.T) {
	shims := t.TempDir()
	execLog := filepath.Join(t.TempDir(), "exec.log")
	for _, name := range []string{"git", "ssh", "sh", "bash", "helm"} {
		script := fmt.Sprintf("#!/bin/sh\necho %s \"$@\" >> %s\nexit 1\n", name, execLog)
		if err := os.WriteFile(filepath.Join(shims, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", shims+string(os.PathListSeparator)+os.Getenv("PATH"))
	if p, _ := exec.LookPath("git"); p != filepath.Join(shims, "git") {
		t.Fatalf("LookPath(git) = %q, want the shim", p)
	}
	proof := filepath.Join(t.TempDir(), "proof")

	for _, tt := range []struct{ name, entry string }{
		{"upload-pack injection", "file:///x?ref=--upload-pack=touch%20" + proof},
		{"https base", "https://github.com/org/repo//base?ref=main"},
		{"github shorthand", "github.com/org/repo/base?ref=v1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			repoDir := t.TempDir()
			files := map[string]string{
				"overlays/dev/kustomization.yaml": "resources:\n- cm.yaml\n- \"" + tt.entry + "\"\n",
				"overlays/dev/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
				"catalog.json":                    `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`,
			}
			for p, c := range files {
				full := filepath.Join(repoDir, p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			repo, err := git.PlainInit(repoDir, false)
			if err != nil {
				t.Fatal(err)
			}
			wt, _ := repo.Worktree()
			if err := wt.AddGlob("."); err != nil {
				t.Fatal(err)
			}
			if _, err := wt.Commit("exploit", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}}); err != nil {
				t.Fatal(err)
			}
			cfg := filepath.Join(t.TempDir(), "deploy.yaml")
			conf := "environments:\n" +
				"  - {name: dev, cluster: {context: nowhere}, namespace: dev, source: {repo: \"file://" + repoDir + "\", ref: master, path: overlays/dev}, catalog: catalog.json}\n" +
				"  - {name: local, cluster: {context: nowhere}, namespace: dev, source: {path: " + filepath.Join(repoDir, "overlays/dev") + "}, catalog: " + filepath.Join(repoDir, "catalog.json") + "}\n"
			if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"source-plan", "--config", cfg, "--env", "dev"},
				{"source-plan", "--config", cfg, "--env", "local"},
				{"apply", "--dry-run", "--config", cfg, "--env", "dev", "--write-report", filepath.Join(t.TempDir(), "r.json")},
			} {
				var out, errb bytes.Buffer
				code := run(context.Background(), args, &out, &errb)
				msg := out.String() + errb.String()
				t.Logf("deploy-web %s -> %d\n%s", strings.Join(args, " "), code, msg)
				if code != exitFailed {
					t.Errorf("deploy-web %s = exit %d, want %d\n%s", strings.Join(args, " "), code, exitFailed, msg)
				}
				want := fmt.Sprintf("overlays/dev/kustomization.yaml: resources entry %q: remote resources are not supported: vendor the base into the repository", tt.entry)
				if !strings.Contains(msg, want) {
					t.Errorf("deploy-web %s output lacks %q:\n%s", strings.Join(args, " "), want, msg)
				}
			}
		})
	}
	if b, err := os.ReadFile(execLog); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a program ran: %q", b)
	}
	if _, err := os.Stat(proof); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the injected command ran: %s exists", proof)
	}
}

// TestApplyOnClusterNeverLeavesTheRepository runs apply (--dry-run, then
// --apply with every confirmation) against the real control plane on a
// commit carrying the reported exploit, and on a git source that accepts
// and never answers: each fails with a clear message, runs nothing
// (recording shims), changes nothing in the namespace and leaves no apply
// lock behind.
func TestApplyOnClusterNeverLeavesTheRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: needs the local control plane")
	}
	c := devcluster.ForTest(t, devcluster.Options{})
	s := newSample(t)
	s.kube = kubernetes.NewForConfigOrDie(c.Config)
	s.meta = metadata.NewForConfigOrDie(c.Config)
	ctx := context.Background()
	if _, err := s.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "existing"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	proof := filepath.Join(t.TempDir(), "proof")
	entry := "file:///x?ref=--upload-pack=touch%20" + proof
	files := s.manifests("")
	files["catalog.json"] = s.catalog()
	files["deploy/dev/kustomization.yaml"] = "namespace: sample-dev\nresources:\n  - app.yaml\n  - jobs.yaml\n  - \"" + entry + "\"\n"
	s.commitFiles("sample: a remote base", files)

	// A git server that accepts and never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 16)
	acceptDone := make(chan []net.Conn)
	go func() {
		var held []net.Conn // open, never answered
		for {
			conn, err := ln.Accept()
			if err != nil {
				acceptDone <- held
				return
			}
			held = append(held, conn)
			select {
			case accepted <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for _, conn := range <-acceptDone {
			conn.Close()
		}
	})

	cfg := fmt.Sprintf(`environments:
  - name: exploit
    cluster: {context: devcluster, kubeconfig: %q}
    namespace: sample-dev
    source: {repo: "file://%s", ref: master, path: deploy/dev}
    catalog: catalog.json
  - name: hang
    cluster: {context: devcluster, kubeconfig: %q}
    namespace: sample-dev
    source: {repo: "http://%s/manifests.git", ref: main, path: deploy/dev}
    catalog: catalog.json
    limits: {sourceTimeout: 500ms}
`, c.Kubeconfig, s.repoDir, c.Kubeconfig, ln.Addr())
	cfgPath := filepath.Join(s.dir, "security.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	shims := t.TempDir()
	execLog := filepath.Join(t.TempDir(), "exec.log")
	for _, name := range []string{"git", "ssh", "sh", "bash", "helm"} {
		script := fmt.Sprintf("#!/bin/sh\necho %s \"$@\" >> %s\nexit 1\n", name, execLog)
		if err := os.WriteFile(filepath.Join(shims, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", shims+string(os.PathListSeparator)+os.Getenv("PATH"))

	before := s.snapshot()
	for _, tt := range []struct {
		env, want string
	}{
		{"exploit", fmt.Sprintf("deploy/dev/kustomization.yaml: resources entry %q: remote resources are not supported: vendor the base into the repository", entry)},
		{"hang", "no complete answer within 500ms (limits.sourceTimeout)"},
	} {
		for _, mode := range [][]string{{"--dry-run"}, {"--apply", "--confirm-env=" + tt.env, "--confirmed-non-production"}} {
			args := append([]string{"apply", "--config", cfgPath, "--env", tt.env, "--write-report", filepath.Join(s.reports, tt.env+".json")}, mode...)
			code, _, stderr := s.cli(args...)
			if code != exitFailed || !strings.Contains(stderr, tt.want) {
				t.Errorf("deploy-web %s = %d (%s), want %d with %q", strings.Join(args, " "), code, stderr, exitFailed, tt.want)
			}
		}
	}
	select {
	case <-accepted:
	default:
		t.Error("the never-answering git server was never reached: the hang case proves nothing")
	}
	if after := s.snapshot(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a refused render changed the namespace:\nbefore %v\nafter  %v", before, after)
	}
	if _, err := s.kube.CoordinationV1().Leases(ns).Get(ctx, deployplan.LockName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("apply lock after the failed runs: %v, want none (the environment is free)", err)
	}
	if b, err := os.ReadFile(execLog); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a program ran: %q", b)
	}
	if _, err := os.Stat(proof); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the injected command ran: %s exists", proof)
	}
}
