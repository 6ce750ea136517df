package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
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
