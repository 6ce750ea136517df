package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/release"
)

func TestReleaseError(t *testing.T) {
	other := errors.New("release: patch app: boom")
	tests := []struct {
		name   string
		err    error
		status int
		reason string
		public string
	}{
		{"invalid version", release.Gate("latest", nil), http.StatusBadRequest, "InvalidVersion", `not a clean semver version: "latest" (want MAJOR.MINOR.PATCH, e.g. 1.2.0)`},
		{"not in history", release.Gate("1.3.0", []string{"1.2.0"}), http.StatusBadRequest, "NotInHistory", "version not in the app's history: 1.3.0: roll back only to a version this app has run"},
		{"conflict", &release.RefusalError{Err: release.ErrConflict, Public: "the app changed"}, http.StatusConflict, "Conflict", "the app changed"},
		{"not found", fmt.Errorf("wrapped: %w", &release.RefusalError{Err: release.ErrNotFound, Public: "app not found"}), http.StatusNotFound, "NotFound", "app not found"},
		{"a kind added later", &release.RefusalError{Err: errors.New("new"), Public: "no"}, http.StatusBadRequest, "Refused", "no"},
		{"history: app gone", kubeview.ErrAppNotFound, http.StatusNotFound, "NotFound", "app not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var he *httpError
			if !errors.As(releaseError(tt.err), &he) {
				t.Fatalf("releaseError(%v) = %v, want an httpError", tt.err, releaseError(tt.err))
			}
			if he.Status != tt.status || he.Reason != tt.reason || he.Public != tt.public {
				t.Errorf("releaseError(%v) = %d %s %q, want %d %s %q", tt.err, he.Status, he.Reason, he.Public, tt.status, tt.reason, tt.public)
			}
		})
	}
	if got := releaseError(other); got != other {
		t.Errorf("releaseError(%v) = %v, want it unchanged (a 500)", other, got)
	}
}
