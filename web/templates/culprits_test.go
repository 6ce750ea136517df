package templates

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/web/paths"
)

func TestCulprits(t *testing.T) {
	h := func(s objrules.HealthStatus, msg string) *objrules.Health {
		return &objrules.Health{Status: s, Message: msg}
	}
	tree := kubeview.Tree{Nodes: []kubeview.TreeNode{
		{Ref: "hanzo.ai:App:shop:web", Kind: "App", Name: "web", Depth: 0, Health: h(objrules.HealthDegraded, "ProgressDeadlineExceeded")},
		{Ref: "apps:Deployment:shop:web", Kind: "Deployment", Name: "web", Depth: 1, Health: h(objrules.HealthDegraded, "deadline exceeded")},
		{Ref: ":Service:shop:web", Kind: "Service", Name: "web", Depth: 1, Health: h(objrules.HealthHealthy, "")},
		{Ref: ":Pod:shop:web-1", Kind: "Pod", Name: "web-1", Depth: 3, Health: h(objrules.HealthDegraded, "CrashLoopBackOff")},
	}}
	live := func(st objrules.HealthStatus, nodes kubeview.Tree) AppLive {
		return AppLive{Cluster: "eu-west", Namespace: "shop", Name: "web", HasRow: true, Row: kubeview.AppRow{Health: objrules.Health{Status: st}}, Tree: nodes}
	}
	many := kubeview.Tree{}
	for i := range maxCulprits + 2 {
		many.Nodes = append(many.Nodes, kubeview.TreeNode{Ref: "c:ConfigMap:shop:" + string(rune('a'+i)), Kind: "ConfigMap", Name: string(rune('a' + i)), Depth: 1, Health: h(objrules.HealthMissing, "")})
	}
	tests := []struct {
		name     string
		l        AppLive
		wantRefs []string
		wantMore int
	}{
		{"children first, the App last, deeper objects and other statuses left out", live(objrules.HealthDegraded, tree),
			[]string{"apps:Deployment:shop:web", "hanzo.ai:App:shop:web"}, 0},
		{"a healthy App has none", live(objrules.HealthHealthy, tree), nil, 0},
		{"no row, none", AppLive{Tree: tree}, nil, 0},
		{"capped, the rest counted", live(objrules.HealthMissing, many), refsOf(many.Nodes[:maxCulprits]), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, more := culprits(tt.l)
			var refs []string
			for _, c := range got {
				refs = append(refs, c.Ref)
				if c.Href != paths.AppResource("eu-west", "shop", "web", c.Ref) {
					t.Errorf("culprit %s Href = %q, want its panel URL", c.Ref, c.Href)
				}
			}
			if diff := cmp.Diff(tt.wantRefs, refs); diff != "" {
				t.Errorf("culprits() refs mismatch (-want +got):\n%s", diff)
			}
			if more != tt.wantMore {
				t.Errorf("culprits() more = %d, want %d", more, tt.wantMore)
			}
		})
	}
}

func refsOf(nodes []kubeview.TreeNode) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Ref)
	}
	return out
}
