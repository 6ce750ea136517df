package writeback

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func TestReviewBranch(t *testing.T) {
	for _, tc := range []struct {
		action, app, version string
		want                 string
	}{
		{"rollback", "api", "1.2.0", "deploy-web/rollback-api-1.2.0"},
		{"rollback", "staging/api", "v1.2.0", "deploy-web/rollback-staging-api-v1.2.0"},
		{"rollback", "../../heads/main", "1.2.0", "deploy-web/rollback-heads-main-1.2.0"},
		{"rollback", "api", "1.2.0.lock", "deploy-web/rollback-api-1.2.0"},
		{"rollback", "a..b", "@{-1}", "deploy-web/rollback-a.b-1"},
		{"rollback", "api\nrefs/heads/main", "x~1^2:y", "deploy-web/rollback-api-refs-heads-main-x-1-2-y"},
		{"rollback", ".hidden", "-1", "deploy-web/rollback-hidden-1"},
		{"rollback", "ápi", "1", "deploy-web/rollback-pi-1"},
		{"rollout", strings.Repeat("a", 300), "1", "deploy-web/rollout-" + strings.Repeat("a", maxRefPartRunes) + "-1"},
	} {
		got, err := ReviewBranch(tc.action, tc.app, tc.version)
		if err != nil || got != tc.want {
			t.Errorf("ReviewBranch(%q, %q, %q) = %q, %v; want %q", tc.action, tc.app, tc.version, got, err, tc.want)
			continue
		}
		if err := plumbing.NewBranchReferenceName(got).Validate(); err != nil || strings.Count(got, "/") != 1 {
			t.Errorf("ReviewBranch(%q, %q, %q) = %q: not one valid ref under deploy-web/ (%v)", tc.action, tc.app, tc.version, got, err)
		}
	}
	for _, bad := range [][3]string{{"rollback", "", "1"}, {"rollback", "api", "../.."}, {"", "api", "1"}} {
		if got, err := ReviewBranch(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("ReviewBranch(%q) = %q, want an error (a part is empty once sanitised)", bad, got)
		}
	}
}

func TestCompareURL(t *testing.T) {
	for _, tc := range []struct {
		repo, want string
	}{
		{"https://github.com/acme/manifests.git", "https://github.com/acme/manifests/compare/main...deploy-web/rollback-api-1.2.0?expand=1"},
		{"https://GitHub.com/acme/manifests", "https://github.com/acme/manifests/compare/main...deploy-web/rollback-api-1.2.0?expand=1"},
		{"https://gitlab.com/acme/infra/manifests.git", "https://gitlab.com/acme/infra/manifests/-/compare/main...deploy-web/rollback-api-1.2.0"},
		{"https://codeberg.org/acme/manifests", "https://codeberg.org/acme/manifests/compare/main...deploy-web/rollback-api-1.2.0"},
		{"https://git.example.com/acme/manifests.git", ""},
		{"http://github.com/acme/manifests", ""},
		{"https://github.com:8443/acme/manifests", ""},
		{"https://github.com/acme", ""},
		{"https://github.com/acme/../evil/x", ""},
		{"file:///srv/manifests.git", ""},
	} {
		if got := CompareURL(tc.repo, "main", "deploy-web/rollback-api-1.2.0"); got != tc.want {
			t.Errorf("CompareURL(%q) = %q, want %q", tc.repo, got, tc.want)
		}
	}
}
