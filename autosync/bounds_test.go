package autosync

import (
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
)

// TestAutoSyncBoundsAreAutosyncs: the config's bounds and defaults are
// the ones package autosync acts on.
func TestAutoSyncBoundsAreAutosyncs(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want time.Duration
	}{
		{"MinAutoSyncInterval", envconfig.MinAutoSyncInterval, MinInterval},
		{"DefaultAutoSyncInterval", envconfig.DefaultAutoSyncInterval, DefaultInterval},
		{"DefaultSelfHealGrace", envconfig.DefaultSelfHealGrace, DefaultGrace},
	} {
		if c.got != c.want {
			t.Errorf("%s = %s, want autosync's %s", c.name, c.got, c.want)
		}
	}
}
