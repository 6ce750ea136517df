package gitops

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/autosync"
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

// TestPauseErrorPublic: the store's refusals reach the caller as their
// public text; any other failure as a fixed sentence, never its text.
func TestPauseErrorPublic(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		reason string
		public string
	}{
		{"not paused", fmt.Errorf("resume: %w", autosync.ErrNotPaused), "NotPaused", "the environment is not paused"},
		{"cluster", errors.New("autosync: write configmap: dial tcp 10.0.0.1:443: refused"), "ClusterError", "the pauses could not be written to the cluster; nothing changed"},
	}
	for _, tt := range tests {
		var e *Error
		if !errors.As(pauseError(tt.err), &e) || e.Reason != tt.reason || e.Public != tt.public {
			t.Errorf("pauseError(%s) = %v, want reason %s, public %q", tt.name, e, tt.reason, tt.public)
		}
	}
	var e *Error
	if _, err := PauseUntil("", "eight hours", time.Now()); !errors.As(err, &e) || e.Kind != KindInvalid || !strings.HasPrefix(e.Public, `for "eight hours"`) {
		t.Errorf("PauseUntil(bad for) = %v, want an invalid *Error naming for", err)
	}
}
