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

// TestNightlyFreezeNeverAtStart: whatever the hour a demo starts at, prod
// is not frozen then nor within the next two hours (the browser tests'
// run), and the first night's freeze is at most a day and a half away.
func TestNightlyFreezeNeverAtStart(t *testing.T) {
	prod := freeze.Target{Environment: ProdEnvironment}
	for m := 0; m < 24*60; m += 10 {
		start := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC).Add(time.Duration(m) * time.Minute)
		l := freeze.List{nightlyFreeze(start)}
		for at := start; at.Before(start.Add(2 * time.Hour)); at = at.Add(5 * time.Minute) {
			if _, _, ok := l.Active(at, prod); ok {
				t.Fatalf("demo started %s: prod frozen at %s, want open for two hours", start.Format("15:04"), at.Format("15:04"))
			}
		}
		if first := l[0].Start.Add(FreezeNightlyHour * time.Hour); first.Sub(start) > 36*time.Hour {
			t.Errorf("demo started %s: first freeze %s, want within a day and a half", start.Format("15:04"), first)
		}
	}
}
