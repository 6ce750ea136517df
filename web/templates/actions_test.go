package templates

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/kubeview"
)

// TestHistoryPanelCommitTags: a release tagged with a commit may be rolled
// back to when the App's rollback goes through git with the catalog in the
// repository (AppGitProps.CommitTags); otherwise only clean semver
// versions may.
func TestHistoryPanelCommitTags(t *testing.T) {
	const commit = "a1a1a1a1a1a1"
	tests := []struct {
		name    string
		git     *AppGitProps
		version string
		want    string // the data-testid of the row's button
	}{
		{"a commit tag, catalog in the repository", &AppGitProps{Env: "dev", CommitTags: true}, commit, "rollback-button"},
		{"a commit tag, no catalog in the repository", &AppGitProps{Env: "dev"}, commit, "rollback-disabled"},
		{"a commit tag, no environment", nil, commit, "rollback-disabled"},
		{"not a commit tag", &AppGitProps{Env: "dev", CommitTags: true}, "latest", "rollback-disabled"},
		{"an uppercase tag is no commit", &AppGitProps{Env: "dev", CommitTags: true}, strings.ToUpper(commit), "rollback-disabled"},
		{"a clean semver", nil, "1.1.0", "rollback-button"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := AppLive{Cluster: "in-cluster", Namespace: "apps", Name: "api", CanWrite: true, Allowed: Allowed{Rollback: true}, Git: tt.git,
				History: []kubeview.Release{
					{Revision: 2, Version: "c3c3c3c3c3c3", Current: true, Declared: true},
					{Revision: 1, Version: tt.version, CleanSemver: tt.version == "1.1.0"},
				}}
			var buf bytes.Buffer
			if err := HistoryPanel(l).Render(t.Context(), &buf); err != nil {
				t.Fatal(err)
			}
			_, row, ok := strings.Cut(buf.String(), `data-version="`+tt.version+`"`)
			if !ok {
				t.Fatalf("HistoryPanel has no row of %s: %s", tt.version, buf.String())
			}
			row, _, _ = strings.Cut(row, "</tr>")
			if !strings.Contains(row, `data-testid="`+tt.want+`"`) {
				t.Errorf("HistoryPanel row of %s = %s, want a %s", tt.version, row, tt.want)
			}
		})
	}
}
