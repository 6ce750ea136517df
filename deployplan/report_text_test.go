package deployplan

import (
	"strings"
	"testing"
)

// The report's missing values and short ids read as the pages' do
// (internal/textfmt): an en dash, 12 characters of a commit, 19 of a digest.
func TestReportTextHelpers(t *testing.T) {
	r := &Report{}
	d := &r.DeployApply
	d.Environment, d.Target.Namespace = "dev", "shop"
	d.ArtifactPlan.SourceCommit = "0123456789abcdef0123"
	d.ArtifactPlan.Services = []ArtifactService{{ID: "web", Image: "ghcr.io/acme/web:1", Digest: "sha256:0123456789abcdef0123456789"}}
	sum := r.Summary()
	for _, want := range []string{"cluster –\n", "source – at 0123456789ab; catalog commit –\n"} {
		if !strings.Contains(sum, want) {
			t.Errorf("Summary() lacks %q:\n%s", want, sum)
		}
	}
	if md := r.Markdown(); !strings.Contains(md, "`sha256:0123456789ab…`") {
		t.Errorf("Markdown() lacks the short digest:\n%s", md)
	}
}
