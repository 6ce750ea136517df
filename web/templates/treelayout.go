package templates

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
)

// Tree layout constants (SVG user units).
const (
	nodeW       = 236
	nodeH       = 54
	compactH    = 34
	gapX        = 64
	gapY        = 12
	treePad     = 8
	podGroupMin = 16 // more than 15 pods under one ReplicaSet are grouped
)

// TreeLayout is an app tree placed for SVG: a left-to-right layered layout
// computed on the server.
type TreeLayout struct {
	Width, Height int
	Nodes         []LayoutNode
	Edges         []LayoutEdge
}

// LayoutNode is one card of the tree.
type LayoutNode struct {
	X, Y, W, H int
	Node       kubeview.TreeNode
	// Group is set for a node standing for several objects (pods of a large
	// ReplicaSet, old ReplicaSets scaled to 0).
	Group *NodeGroup
	Dim   bool
	Href  string
}

// NodeGroup summarises the objects a group node stands for.
type NodeGroup struct {
	Count  int
	Label  string
	Health []HealthCount
}

// HealthCount is a number of objects with one health.
type HealthCount struct {
	Status objrules.HealthStatus
	Count  int
}

// LayoutEdge is a path from a parent card to a child card.
type LayoutEdge struct {
	D   string
	Dim bool
}

// layoutItem is a node (or group) with its children, before placement.
type layoutItem struct {
	node     kubeview.TreeNode
	group    *NodeGroup
	dim      bool
	compact  bool
	children []*layoutItem
	x, y     int
}

// LayoutTree places an app's tree. href returns the resource-panel URL of a
// node ("" for none).
func LayoutTree(t kubeview.Tree, href func(kubeview.TreeNode) string) TreeLayout {
	if len(t.Nodes) == 0 {
		return TreeLayout{}
	}
	byParent := map[string][]kubeview.TreeNode{}
	for _, n := range t.Nodes[1:] {
		if len(n.ParentRefs) > 0 {
			byParent[n.ParentRefs[0]] = append(byParent[n.ParentRefs[0]], n)
		}
	}
	var build func(n kubeview.TreeNode) *layoutItem
	build = func(n kubeview.TreeNode) *layoutItem {
		it := &layoutItem{node: n}
		kids := byParent[n.Ref]
		if n.Kind == "Deployment" {
			kids = collapseIdleReplicaSets(n, kids, byParent, it)
		}
		var pods []kubeview.TreeNode
		for _, k := range kids {
			if n.Kind == "ReplicaSet" && k.Kind == "Pod" {
				pods = append(pods, k)
				continue
			}
			it.children = append(it.children, build(k))
		}
		if len(pods) >= podGroupMin {
			it.children = append(it.children, &layoutItem{node: groupNode(n, "Pod", len(pods)), group: podGroup(pods)})
		} else {
			for _, p := range pods {
				it.children = append(it.children, build(p))
			}
		}
		return it
	}
	root := build(t.Nodes[0])

	// Leaves take consecutive rows; a parent is centred on its children.
	next := treePad
	maxDepth := 0
	var place func(it *layoutItem, depth int)
	place = func(it *layoutItem, depth int) {
		maxDepth = max(maxDepth, depth)
		it.x = treePad + depth*(nodeW+gapX)
		if len(it.children) == 0 {
			it.y = next
			next += it.height() + gapY
			return
		}
		for _, c := range it.children {
			place(c, depth+1)
		}
		first, last := it.children[0], it.children[len(it.children)-1]
		it.y = (first.y+first.height()/2+last.y+last.height()/2)/2 - it.height()/2
		if it.y < treePad {
			it.y = treePad
		}
	}
	place(root, 0)

	out := TreeLayout{Width: treePad*2 + (maxDepth+1)*nodeW + maxDepth*gapX, Height: max(next-gapY+treePad, nodeH+2*treePad)}
	var emit func(it *layoutItem)
	emit = func(it *layoutItem) {
		ln := LayoutNode{X: it.x, Y: it.y, W: nodeW, H: it.height(), Node: it.node, Group: it.group, Dim: it.dim}
		if it.group == nil && href != nil {
			ln.Href = href(it.node)
		}
		out.Nodes = append(out.Nodes, ln)
		for _, c := range it.children {
			x1, y1 := it.x+nodeW, it.y+it.height()/2
			x2, y2 := c.x, c.y+c.height()/2
			mid := (x1 + x2) / 2
			out.Edges = append(out.Edges, LayoutEdge{D: fmt.Sprintf("M%d %d C%d %d %d %d %d %d", x1, y1, mid, y1, mid, y2, x2, y2), Dim: c.dim})
			emit(c)
		}
	}
	emit(root)
	return out
}

func (it *layoutItem) height() int {
	if it.compact {
		return compactH
	}
	return nodeH
}

// collapseIdleReplicaSets turns a Deployment's ReplicaSets that are scaled to
// zero and have no pods into dimmed, compact nodes; more than one becomes a
// single "N older ReplicaSets" node.
func collapseIdleReplicaSets(dep kubeview.TreeNode, kids []kubeview.TreeNode, byParent map[string][]kubeview.TreeNode, parent *layoutItem) []kubeview.TreeNode {
	var active, idle []kubeview.TreeNode
	for _, k := range kids {
		if k.Kind == "ReplicaSet" && k.Info.Replicas != nil && *k.Info.Replicas == 0 && len(byParent[k.Ref]) == 0 {
			idle = append(idle, k)
			continue
		}
		active = append(active, k)
	}
	switch len(idle) {
	case 0:
	case 1:
		parent.children = append(parent.children, &layoutItem{node: idle[0], dim: true, compact: true})
	default:
		revs := make([]int, 0, len(idle))
		for _, k := range idle {
			if r, err := strconv.Atoi(k.Info.Revision); err == nil {
				revs = append(revs, r)
			}
		}
		sort.Ints(revs)
		label := fmt.Sprintf("%d idle ReplicaSets", len(idle))
		if len(revs) > 0 {
			label += fmt.Sprintf(" (%d–%d)", revs[0], revs[len(revs)-1])
		}
		g := groupNode(dep, "ReplicaSet", len(idle))
		parent.children = append(parent.children, &layoutItem{node: g, dim: true, compact: true, group: &NodeGroup{Count: len(idle), Label: label}})
	}
	return active
}

func groupNode(parent kubeview.TreeNode, kind string, n int) kubeview.TreeNode {
	return kubeview.TreeNode{
		Ref:  parent.Ref + "/" + strings.ToLower(kind) + "s",
		Kind: kind, Namespace: parent.Namespace, Name: fmt.Sprintf("%d %ss", n, strings.ToLower(kind)),
		ParentRefs: []string{parent.Ref},
	}
}

func podGroup(pods []kubeview.TreeNode) *NodeGroup {
	counts := map[objrules.HealthStatus]int{}
	for _, p := range pods {
		st := objrules.HealthUnknown
		if p.Health != nil {
			st = p.Health.Status
		}
		counts[st]++
	}
	g := &NodeGroup{Count: len(pods), Label: fmt.Sprintf("%d pods", len(pods))}
	for _, st := range healthStatuses() {
		if counts[st] > 0 {
			g.Health = append(g.Health, HealthCount{st, counts[st]})
		}
	}
	return g
}
