package templates

import (
	"testing"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
)

func TestInfoLineImage(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		image, want string
	}{
		{"ghcr.io/acme/web:1.2.0", "1.2.0"},
		// The tag, not the digest's hex (issue #14).
		{"repo:1.2.0@" + digest, "1.2.0"},
		{"host:5000/repo:tag", "tag"},
		// No tag: the reference as written, never a port or a digest's hex.
		{"host:5000/repo", "host:5000/repo"},
		{"ghcr.io/acme/web@" + digest, "ghcr.io/acme/web@" + digest},
		{"web", "web"},
	}
	for _, tt := range tests {
		n := kubeview.TreeNode{Kind: "Deployment", Info: kubeview.NodeInfo{Images: []string{tt.image}}}
		if got := infoLine(n); got != tt.want {
			t.Errorf("infoLine(Deployment with image %q) = %q, want %q", tt.image, got, tt.want)
		}
	}
}

// TestTabQuery: the tab links keep the diff view's options that differ
// from the defaults, so Summary -> Diff shows the same diff (issue #18).
func TestTabQuery(t *testing.T) {
	drift := []objrules.DriftField{{Path: "spec.replicas"}}
	tests := []struct {
		name string
		p    ResourcePanel
		want string
	}{
		{"defaults", ResourcePanel{Diff: DiffTableProps{Mode: "split", Compact: true}}, ""},
		{"drift shown (the default)", ResourcePanel{Diff: DiffTableProps{Mode: "split", Compact: true}, Drift: drift, DriftInDiff: true}, ""},
		{"drift left out", ResourcePanel{Diff: DiffTableProps{Mode: "split", Compact: true}, Drift: drift}, "drift=0"},
		{"no drift to leave out", ResourcePanel{Diff: DiffTableProps{Mode: "split", Compact: true}}, ""},
		{"inline, full", ResourcePanel{Diff: DiffTableProps{Mode: "unified"}}, "mode=unified&context=full"},
		{"all three", ResourcePanel{Diff: DiffTableProps{Mode: "unified"}, Drift: drift}, "mode=unified&context=full&drift=0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tabQuery(tt.p); got != tt.want {
				t.Errorf("tabQuery(%s) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}
