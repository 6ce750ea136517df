package templates

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
)

// bigTree is an App with a Deployment, an old ReplicaSet scaled to zero,
// two more scaled to zero, a current ReplicaSet with pods pods and a Service.
func bigTree(pods int) kubeview.Tree {
	h := func(s objrules.HealthStatus) *objrules.Health { return &objrules.Health{Status: s} }
	zero, n := int32(0), int32(pods)
	nodes := []kubeview.TreeNode{
		{Ref: "hanzo.ai:App:ns:web", Kind: "App", Name: "web", Health: h(objrules.HealthHealthy)},
		{Ref: "apps:Deployment:ns:web", Kind: "Deployment", Name: "web", ParentRefs: []string{"hanzo.ai:App:ns:web"}, Health: h(objrules.HealthHealthy), Depth: 1},
	}
	for i := 1; i <= 3; i++ {
		nodes = append(nodes, kubeview.TreeNode{Ref: fmt.Sprintf("apps:ReplicaSet:ns:web-old%d", i), Kind: "ReplicaSet", Name: fmt.Sprintf("web-old%d", i),
			ParentRefs: []string{"apps:Deployment:ns:web"}, Info: kubeview.NodeInfo{Replicas: &zero, Revision: fmt.Sprint(i)}, Depth: 2})
	}
	nodes = append(nodes, kubeview.TreeNode{Ref: "apps:ReplicaSet:ns:web-new", Kind: "ReplicaSet", Name: "web-new",
		ParentRefs: []string{"apps:Deployment:ns:web"}, Info: kubeview.NodeInfo{Replicas: &n, Revision: "4"}, Health: h(objrules.HealthHealthy), Depth: 2})
	for i := range pods {
		st := objrules.HealthHealthy
		if i%10 == 0 {
			st = objrules.HealthDegraded
		}
		nodes = append(nodes, kubeview.TreeNode{Ref: fmt.Sprintf(":Pod:ns:web-new-%d", i), Kind: "Pod", Name: fmt.Sprintf("web-new-%d", i),
			ParentRefs: []string{"apps:ReplicaSet:ns:web-new"}, Health: h(st), Depth: 3})
	}
	nodes = append(nodes, kubeview.TreeNode{Ref: ":Service:ns:web", Kind: "Service", Name: "web", ParentRefs: []string{"hanzo.ai:App:ns:web"}, Health: h(objrules.HealthHealthy), Depth: 1})
	return kubeview.Tree{Nodes: nodes}
}

func TestLayoutTreeGroups(t *testing.T) {
	tests := []struct {
		pods      int
		wantCards int // cards drawn
		wantGroup string
	}{
		// App, Deployment, "3 older ReplicaSets", current RS, 15 pods, Service.
		{pods: 15, wantCards: 20},
		// 16 pods and more: one group card instead of the pods.
		{pods: 16, wantCards: 6, wantGroup: "16 pods"},
		{pods: 500, wantCards: 6, wantGroup: "500 pods"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.pods, " pods"), func(t *testing.T) {
			l := LayoutTree(bigTree(tt.pods), func(n kubeview.TreeNode) string { return "/r/" + n.Ref })
			if len(l.Nodes) != tt.wantCards {
				t.Fatalf("LayoutTree(%d pods) drew %d cards, want %d", tt.pods, len(l.Nodes), tt.wantCards)
			}
			if len(l.Edges) != len(l.Nodes)-1 {
				t.Errorf("edges = %d, want one per non-root card (%d)", len(l.Edges), len(l.Nodes)-1)
			}
			var groups []string
			for _, n := range l.Nodes {
				if n.Group != nil {
					groups = append(groups, n.Group.Label)
					if n.Href != "" {
						t.Errorf("group %q links to %q, want no panel link", n.Group.Label, n.Href)
					}
				} else if n.Href == "" {
					t.Errorf("card %s has no link", n.Node.Ref)
				}
			}
			if !contains(groups, "3 idle ReplicaSets (1–3)") {
				t.Errorf("groups = %q, want the idle ReplicaSets collapsed", groups)
			}
			if tt.wantGroup != "" && !contains(groups, tt.wantGroup) {
				t.Errorf("groups = %q, want %q", groups, tt.wantGroup)
			}
			if tt.pods == 500 {
				for _, n := range l.Nodes {
					if n.Group != nil && n.Group.Count == 500 {
						want := []HealthCount{{objrules.HealthHealthy, 450}, {objrules.HealthDegraded, 50}}
						if fmt.Sprint(n.Group.Health) != fmt.Sprint(want) {
							t.Errorf("pod group health = %v, want %v", n.Group.Health, want)
						}
						if c := nodeHealthClass(n); c != "degraded" {
							t.Errorf("pod group colour = %q, want degraded (the worst)", c)
						}
					}
				}
			}
			// Cards never overlap.
			for i, a := range l.Nodes {
				for _, b := range l.Nodes[i+1:] {
					if a.X == b.X && a.Y < b.Y+b.H && b.Y < a.Y+a.H {
						t.Errorf("cards %s and %s overlap", a.Node.Ref, b.Node.Ref)
					}
				}
				if a.X+a.W > l.Width || a.Y+a.H > l.Height {
					t.Errorf("card %s lies outside the %dx%d drawing", a.Node.Ref, l.Width, l.Height)
				}
			}
		})
	}
}

// TestTreeGraphEscapes renders a tree whose names and messages carry markup:
// everything from the cluster comes back escaped.
func TestTreeGraphEscapes(t *testing.T) {
	evil := `<script>alert(1)</script>`
	tree := kubeview.Tree{Nodes: []kubeview.TreeNode{
		{Ref: "hanzo.ai:App:ns:web", Kind: "App", Name: "web" + evil, Health: &objrules.Health{Status: objrules.HealthDegraded, Message: evil}},
	}}
	live := AppLive{Namespace: "ns", Name: "web", Tree: tree, Now: time.Now(), PollURL: "/x"}
	live.Graph = LayoutTree(tree, func(n kubeview.TreeNode) string { return "/r/" + n.Ref })
	for _, view := range []string{"tree", "list"} {
		live.View = view
		var b bytes.Buffer
		if err := AppLiveView(live).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), evil) {
			t.Errorf("%s view contains the raw payload", view)
		}
		if !strings.Contains(b.String(), "&lt;script&gt;") {
			t.Errorf("%s view lacks the escaped payload", view)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// BenchmarkTreePage500Pods lays out and renders the live part of an app page
// with 500 pods.
func BenchmarkTreePage500Pods(b *testing.B) {
	tree := bigTree(500)
	for b.Loop() {
		live := AppLive{Namespace: "ns", Name: "web", Tree: tree, Now: time.Now(), PollURL: "/x", View: "tree"}
		live.Graph = LayoutTree(tree, func(n kubeview.TreeNode) string { return "/r/" + n.Ref })
		var buf bytes.Buffer
		if err := AppLiveView(live).Render(context.Background(), &buf); err != nil {
			b.Fatal(err)
		}
	}
}

func TestLogLevelClass(t *testing.T) {
	tests := []struct{ line, want string }{
		{`level=info msg="http request" status=200`, ""},
		{`level=warn msg="retrying batch"`, "ll-warn"},
		{`level=error msg="upstream timeout"`, "ll-error"},
		{`{"level":"error","msg":"boom"}`, "ll-error"},
		{`panic: runtime error: invalid memory address`, "ll-error"},
		{`2026/11/30 WARN disk almost full`, "ll-warn"},
		{`an error in the middle of a sentence`, ""},
	}
	for _, tt := range tests {
		if got := logLevelClass(tt.line); got != tt.want {
			t.Errorf("logLevelClass(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}
