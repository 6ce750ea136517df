package demo

import (
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/freeze"
)

// TestNightlyFreeze: the demo's freeze is valid and freezes prod (not
// dev) from 22:00 to 06:00 UTC, every night of its month.
func TestNightlyFreeze(t *testing.T) {
	now := time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC)
	f := nightlyFreeze(now)
	if err := f.Validate(); err != nil {
		t.Fatalf("nightlyFreeze().Validate() = %v", err)
	}
	l := freeze.List{f}
	prod, dev := freeze.Target{Environment: ProdEnvironment}, freeze.Target{Environment: DevEnvironment}
	for _, tc := range []struct {
		at     time.Time
		t      freeze.Target
		frozen bool
		opens  time.Time
	}{
		{now, prod, false, time.Time{}},
		{time.Date(2026, 12, 2, 22, 0, 0, 0, time.UTC), prod, true, time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)},
		{time.Date(2026, 12, 3, 5, 59, 0, 0, time.UTC), prod, true, time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)},
		{time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC), prod, false, time.Time{}},
		{time.Date(2026, 12, 20, 23, 0, 0, 0, time.UTC), prod, true, time.Date(2026, 12, 21, 6, 0, 0, 0, time.UTC)},
		{time.Date(2026, 12, 2, 23, 0, 0, 0, time.UTC), dev, false, time.Time{}},
	} {
		_, opens, ok := l.Active(tc.at, tc.t)
		if ok != tc.frozen || !opens.Equal(tc.opens) {
			t.Errorf("Active(%s, %s) = %v until %s, want %v until %s", tc.at, tc.t, ok, opens, tc.frozen, tc.opens)
		}
	}
}
