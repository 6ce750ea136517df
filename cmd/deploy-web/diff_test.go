package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffUsage: every mistake exits 2 (as diff(1)'s trouble) before
// anything is read from git or the cluster, naming what to fix.
func TestDiffUsage(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "deploy.yaml")
	if err := os.WriteFile(cfg, []byte("environments:\n  - {name: dev, cluster: {context: x}, namespace: dev, source: {path: m}, catalog: catalog.json}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no env", []string{"diff", "--config", cfg, "--ref", "main"}, "--env is required"},
		{"no ref", []string{"diff", "--config", cfg, "--env", "dev"}, "--ref is required"},
		{"bad format", []string{"diff", "--config", cfg, "--env", "dev", "--ref", "main", "--format", "html"}, `--format "html"`},
		{"revision syntax", []string{"diff", "--config", cfg, "--env", "dev", "--ref", "main~1"}, `holds "~"`},
		{"option injection", []string{"diff", "--config", cfg, "--env", "dev", "--ref=--upload-pack=touch x"}, "starts with '-'"},
		{"dot dot", []string{"diff", "--config", cfg, "--env", "dev", "--ref", "a..b"}, "holds '..'"},
		{"pull not digits", []string{"diff", "--config", cfg, "--env", "dev", "--ref", "pull/x"}, "pull/N, N digits only"},
		{"unknown env", []string{"diff", "--config", cfg, "--env", "nope", "--ref", "main"}, "nope"},
		{"missing config", []string{"diff", "--config", filepath.Join(dir, "none.yaml"), "--env", "dev", "--ref", "main"}, "none.yaml"},
		{"local source", []string{"diff", "--config", cfg, "--env", "dev", "--ref", "main"}, "set source.repo"},
		{"unknown flag", []string{"diff", "--nope"}, "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), tt.args, &out, &errb)
			if code != exitDiffTrouble || !strings.Contains(errb.String(), tt.want) {
				t.Errorf("run(%q) = %d, stderr %q; want %d naming %q", tt.args, code, errb.String(), exitDiffTrouble, tt.want)
			}
			if out.Len() != 0 {
				t.Errorf("run(%q) printed a diff: %s", tt.args, out.String())
			}
		})
	}
}
