package demo

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hanzoai/deploy-web/envconfig"
)

// TestReleaseDevInstallsProd: the demo's start applies dev through the
// environments file and prod through its seed file (prod unprotected,
// nothing else), then removes the seed file, whatever the applies did.
func TestReleaseDevInstallsProd(t *testing.T) {
	tests := []struct {
		name    string
		failEnv string
		wantErr string
	}{
		{"both applied", "", ""},
		{"prod's apply fails", ProdEnvironment, "demo: prod at release " + ProdVersion},
		{"dev's apply fails", DevEnvironment, "demo: dev at release " + DevPreviousVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			envFile, repoDir, prodSeed, err := seedManifests(dir, filepath.Join(dir, "kubeconfig"), "")
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var calls []string
			apply := func(_ context.Context, file, env string) error {
				cfg, err := envconfig.LoadConfig(file)
				if err != nil {
					return err
				}
				e, err := cfg.Env(env)
				if err != nil {
					return err
				}
				mu.Lock()
				calls = append(calls, env+" from "+filepath.Base(file)+" protected="+map[bool]string{true: "yes", false: "no"}[e.Protected])
				mu.Unlock()
				if env == tt.failEnv {
					return errors.New("boom")
				}
				return nil
			}
			head, err := releaseDev(context.Background(), apply, envFile, prodSeed, repoDir)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Errorf("releaseDev() = %q, %v; want an error starting %q", head, err, tt.wantErr)
				}
			} else if err != nil || head == "" {
				t.Errorf("releaseDev() = %q, %v; want the release commit", head, err)
			}
			slices.Sort(calls)
			want := []string{"dev from " + EnvironmentsFileName + " protected=no", "prod from " + prodSeedFileName + " protected=no"}
			if !slices.Equal(calls, want) {
				t.Errorf("applies = %q, want %q", calls, want)
			}
			if _, err := os.Stat(prodSeed); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("prod's seed file after releaseDev: %v, want removed", err)
			}
		})
	}
}
