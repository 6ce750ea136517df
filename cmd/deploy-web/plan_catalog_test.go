package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCatalogConfigErrors: a catalog whose commit is not a commit, or that
// has an unknown mode, is a configuration error: exit 2 with the field
// named, from source-plan and from apply --dry-run (before any cluster is
// contacted); a version-mode catalog in which a digest is missing is a
// divergence of source-plan (exit 3 with --check), not "converged".
func TestCatalogConfigErrors(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"k/kustomization.yaml": "resources: [d.yaml]\n",
		"k/d.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  selector: {matchLabels: {app: api}}\n  template:\n    metadata: {labels: {app: api}}\n" +
			"    spec: {containers: [{name: api, image: \"ghcr.io/acme/api:6.14.1\"}]}\n",
		"version.json":  `{"commit": "6.14.1", "services": [{"id": "api", "image": "ghcr.io/acme/api", "published": true}]}`,
		"mode.json":     `{"mode": "semver", "services": []}`,
		"nodigest.json": `{"mode": "version", "services": [{"id": "api", "image": "ghcr.io/acme/api", "tag": "6.14.1", "published": true}]}`,
		"deploy.yaml": `environments:
  - {name: v, cluster: {context: nowhere}, namespace: dev, source: {path: ./k}, catalog: version.json}
  - {name: m, cluster: {context: nowhere}, namespace: dev, source: {path: ./k}, catalog: mode.json}
  - {name: d, cluster: {context: nowhere}, namespace: dev, source: {path: ./k}, catalog: nodigest.json}
`,
	}
	for p, c := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "deploy.yaml")
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"source-plan, a version as commit", []string{"source-plan", "--config", cfg, "--env", "v"}, 2, `catalog.commit: "6.14.1" is not a commit`},
		{"dry-run, a version as commit", []string{"apply", "--dry-run", "--config", cfg, "--env", "v"}, 2, `catalog.commit: "6.14.1" is not a commit`},
		{"source-plan, unknown mode", []string{"source-plan", "--config", cfg, "--env", "m"}, 2, `catalog.mode: "semver"`},
		{"expect-commit is a version", []string{"source-plan", "--config", cfg, "--env", "d", "--expect-commit", "6.14.1"}, 2, `--expect-commit "6.14.1": want a commit`},
		{"source-plan sees a missing digest", []string{"source-plan", "--check", "--config", cfg, "--env", "d"}, 3, "DIVERGENCE missing-digest"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), append(tt.args, "--progress=false"), &out, &errb)
			if code != tt.code || !strings.Contains(out.String()+errb.String(), tt.want) {
				t.Errorf("exit %d (want %d)\nstdout: %s\nstderr: %s\nwant %q", code, tt.code, out.String(), errb.String(), tt.want)
			}
		})
	}
}
