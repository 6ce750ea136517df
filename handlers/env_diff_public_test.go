package handlers

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/deployplan"
)

// TestPublicDiffError: a failed diff shows the public text of the typed
// refusal that explains it, never the text of another error (a
// cluster's address, a fetch's).
func TestPublicDiffError(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"kustomization", fmt.Errorf("revdiff: render: %w", &deployplan.KustomizationError{File: "dev/kustomization.yaml", Field: "resources", Entry: "https://evil.example/x", Reason: "a remote reference"}),
			`dev/kustomization.yaml: resources entry "https://evil.example/x": a remote reference`},
		{"ref", deployplan.ValidateRef("-x"), `ref "-x": starts with '-'`},
		{"cluster", errors.New("revdiff: live: Get https://10.0.0.1:6443/api: dial tcp: refused"), "see the server log"},
	} {
		got := publicDiffError(tt.err)
		if !strings.HasPrefix(got, tt.want) || strings.Contains(got, "deployplan:") || strings.Contains(got, "10.0.0.1") {
			t.Errorf("publicDiffError(%s) = %q, want it to start with %q", tt.name, got, tt.want)
		}
	}
}
