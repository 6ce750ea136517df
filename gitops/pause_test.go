package gitops

import (
	"strings"
	"testing"
	"time"
)

// TestPauseUntil is the decision of a pause's end.
func TestPauseUntil(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		until, forText string
		want           time.Time
		wantErr        string
	}{
		{"", "8h", now.Add(8 * time.Hour), ""},
		{"2026-12-03T10:00:00Z", "", now.Add(24 * time.Hour), ""},
		{"2026-12-03T10:00:00Z", "8h", time.Time{}, "not both"},
		{"", "", time.Time{}, "give the pause"},
		{"", "-1h", time.Time{}, "want a duration"},
		{"tomorrow", "", time.Time{}, "want a time"},
	} {
		got, err := PauseUntil(tc.until, tc.forText, now)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("PauseUntil(%q, %q) error = %v, want %q", tc.until, tc.forText, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("PauseUntil(%q, %q) = %s, %v; want %s", tc.until, tc.forText, got, err, tc.want)
		}
	}
}
