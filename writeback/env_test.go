package writeback

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
)

func envOf(t *testing.T, dir, writeBack string) *envconfig.Environment {
	t.Helper()
	cfg, err := envconfig.ParseConfig([]byte(`
environments:
  - name: dev
    cluster: {context: c}
    namespace: dev
    source: {repo: "https://git.example/m.git", ref: main, path: dev}
    catalog: catalog.json
    writeBack: `+writeBack+"\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	return &cfg.Environments[0]
}

func TestEnvLimits(t *testing.T) {
	e := envOf(t, "/etc/deploy", "{mode: push}")
	e.Limits.SourceTimeout.Duration, e.Limits.MaxRepoBytes = 7*time.Second, 1<<20
	if got, want := EnvLimits(e), (Limits{Timeout: 7 * time.Second, MaxPackBytes: 1 << 20}); got != want {
		t.Errorf("EnvLimits() = %+v, want %+v", got, want)
	}
}

func TestEnvTokenFileRelative(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("tok-1234\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok, err := EnvToken(envOf(t, dir, "{mode: push, credentials: {tokenFile: token}}"))
	if err != nil || tok.Empty() {
		t.Fatalf("EnvToken() = %v, %v, want the token of %s/token", tok, err, dir)
	}
}
