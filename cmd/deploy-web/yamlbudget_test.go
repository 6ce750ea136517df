package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIYAMLBombIsABlocker runs source-plan and apply --dry-run on the
// alias bomb of issue 26 (a 330-byte ConfigMap in the overlay's
// resources; it took source-plan to 973 MB RSS and then said
// "converged"): source-plan --check reports the yaml-too-complex
// divergence naming the file and exits 3; the plan fails naming them
// (exit 1); neither expands the bomb.
func TestCLIYAMLBombIsABlocker(t *testing.T) {
	dir := t.TempDir()
	bomb := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n  l0: &l0 [a,a,a,a,a,a,a,a,a]\n"
	for i := 1; i < 5; i++ {
		bomb += fmt.Sprintf("  l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), 9), ","))
	}
	for p, c := range map[string]string{
		"k/kustomization.yaml": "resources: [cm.yaml, bomb.yaml]\n",
		"k/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		"k/bomb.yaml":          bomb,
		"catalog.json":         `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`,
		"deploy.yaml":          "environments:\n  - {name: dev, cluster: {context: nowhere}, namespace: dev, source: {path: k}, catalog: catalog.json}\n",
	} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "deploy.yaml")
	const reason = "k/bomb.yaml: aliases expand it to 74,749 nodes from 67 as written (74,682 added by aliases; the limit is 10,000)"
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"source-plan", "--check", "--config", cfg, "--env", "dev"}, exitBlocked, "DIVERGENCE yaml-too-complex: " + reason},
		{[]string{"apply", "--dry-run", "--config", cfg, "--env", "dev", "--write-report", filepath.Join(t.TempDir(), "r.json")}, exitFailed,
			"k/bomb.yaml is too complex to decode (yaml-too-complex): aliases expand it to 74,749 nodes"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errb)
		msg := out.String() + errb.String()
		if code != tc.code || !strings.Contains(msg, tc.want) {
			t.Errorf("deploy-web %s = exit %d, want %d and %q:\n%s", strings.Join(tc.args, " "), code, tc.code, tc.want, msg)
		}
	}
}
