package templates

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/web/paths"
)

// appViewURL is the app page in the tree or list view, keeping the panel.
func appViewURL(l AppLive, view string) string {
	base := paths.App(l.Cluster, l.Namespace, l.Name)
	if l.Selected != "" {
		base = paths.AppResource(l.Cluster, l.Namespace, l.Name, l.Selected)
	}
	if view == "list" {
		return base + "?view=list"
	}
	return base
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// kindAbbrev is the short kind label on a card.
func kindAbbrev(kind string) string {
	switch kind {
	case "App":
		return "APP"
	case "Deployment":
		return "DEPLOY"
	case "ReplicaSet":
		return "RS"
	case "Pod":
		return "POD"
	case "Service":
		return "SVC"
	case "Ingress":
		return "ING"
	case "HorizontalPodAutoscaler":
		return "HPA"
	case "PodDisruptionBudget":
		return "PDB"
	case "ConfigMap":
		return "CM"
	case "StatefulSet":
		return "STS"
	case "DaemonSet":
		return "DS"
	case "PersistentVolumeClaim":
		return "PVC"
	case "CronJob":
		return "CRONJOB"
	}
	return strings.ToUpper(kind)
}

// truncate shortens s to n runes with an ellipsis.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func nodeName(n LayoutNode) string {
	if n.Group != nil {
		return n.Group.Label
	}
	return n.Node.Name
}

func nodeHealthClass(n LayoutNode) string {
	if n.Group != nil && len(n.Group.Health) > 0 {
		worst := n.Group.Health[0].Status
		for _, h := range n.Group.Health {
			if h.Status.Worse(worst) {
				worst = h.Status
			}
		}
		return lower(string(worst))
	}
	if n.Node.Health == nil {
		return "none"
	}
	return lower(string(n.Node.Health.Status))
}

func nodeStatus(n LayoutNode) string {
	if n.Group != nil {
		return ""
	}
	if n.Node.Health == nil {
		return ""
	}
	return string(n.Node.Health.Status)
}

// nodeInfo is the third line of a card.
func nodeInfo(n LayoutNode) string {
	if n.Group != nil {
		parts := make([]string, len(n.Group.Health))
		for i, h := range n.Group.Health {
			parts[i] = fmt.Sprintf("%d %s", h.Count, lower(string(h.Status)))
		}
		return strings.Join(parts, " · ")
	}
	return infoLine(n.Node)
}

// infoLine summarises a node's info: "rev 3 · 3/3 ready · 1.2.0".
func infoLine(n kubeview.TreeNode) string {
	var parts []string
	if n.Info.Revision != "" {
		parts = append(parts, "rev "+n.Info.Revision)
	}
	if n.Info.Ready != "" {
		parts = append(parts, n.Info.Ready+" ready")
	}
	if n.Info.Restarts > 0 {
		parts = append(parts, fmt.Sprintf("%d restarts", n.Info.Restarts))
	}
	if len(n.Info.Images) > 0 && n.Kind != "Pod" {
		parts = append(parts, imageTagOrName(n.Info.Images[0]))
	}
	if n.Kind == "Pod" && n.Info.Phase != "" && n.Info.Phase != "Running" {
		parts = append(parts, n.Info.Phase)
	}
	if len(parts) == 0 && n.Health != nil && n.Health.Message != "" {
		return n.Health.Message
	}
	return strings.Join(parts, " · ")
}

// imageTagOrName is what a card shows of an image: its tag ("1.2.0" also for
// "repo:1.2.0@sha256:..."), else the reference as written.
func imageTagOrName(img string) string {
	if tag := appcr.ImageTag(img); tag != "" {
		return tag
	}
	return img
}

// nodeTitle is the hover text: the health message.
func nodeTitle(n LayoutNode) string {
	if n.Node.Health != nil && n.Node.Health.Message != "" {
		return ": " + string(n.Node.Health.Status) + " - " + n.Node.Health.Message
	}
	return ""
}

type panelTab struct{ id, label string }

func panelTabs() []panelTab {
	return []panelTab{{"summary", "Summary"}, {"manifest", "Manifest"}, {"diff", "Diff"}, {"events", "Events"}}
}

// panelURL is the URL of a panel tab, with extra query parameters.
func panelURL(p ResourcePanel, tab, extra string) string {
	u := paths.AppResource(p.AppCluster, p.AppNamespace, p.AppName, p.Node.Ref) + "?tab=" + tab
	if extra != "" {
		u += "&" + extra
	}
	return u
}

func managedQuery(on bool) string {
	if on {
		return "managed=1"
	}
	return ""
}

// diffQuery is the query of the diff tab's view: mode, context and, for
// an object with drift, whether the drift shows (drift=1 or drift=0).
func diffQuery(p ResourcePanel, mode string, compact, drift bool) string {
	q := "mode=" + mode
	if !compact {
		q += "&context=full"
	}
	if len(p.Drift) > 0 {
		if drift {
			q += "&drift=1"
		} else {
			q += "&drift=0"
		}
	}
	return q
}

// tabQuery is what a tab link carries of the panel's current diff view:
// the options that differ from the defaults (inline mode, full context, the
// drift left out), so that switching tabs and back to Diff keeps them.
func tabQuery(p ResourcePanel) string {
	var q []string
	if p.Diff.Mode == "unified" {
		q = append(q, "mode=unified")
	}
	if !p.Diff.Compact {
		q = append(q, "context=full")
	}
	if len(p.Drift) > 0 && !p.DriftInDiff {
		q = append(q, "drift=0")
	}
	return strings.Join(q, "&")
}

func lineNum(n int) string {
	if n == 0 {
		return ""
	}
	return itoa(n)
}

func groupKind(n kubeview.TreeNode) string {
	if n.Group == "" {
		return n.Version + "/" + n.Kind
	}
	return n.Group + "/" + n.Version + ", " + n.Kind
}

func desiredSourceText(s string) string {
	switch s {
	case "last-applied":
		return "last-applied configuration"
	case "git":
		return "the environment's git source"
	}
	return "none"
}

// Culprit is one object that makes an App's health what it is: the App's
// direct children (and the App itself) in the App's worst status.
type Culprit struct {
	Kind, Name, Ref string
	Href            string
	Status          objrules.HealthStatus
	Message         string
}

// maxCulprits bounds the header's list; the rest are counted.
const maxCulprits = 6

// culprits returns the objects of the tree that cause the App's health, as
// objrules.AggregateHealth names them: the App's children (depth 1) and
// the App (depth 0, last) whose health is the App's, up to maxCulprits,
// and how many more there are. None for a healthy App.
func culprits(l AppLive) ([]Culprit, int) {
	if !l.HasRow {
		return nil, 0
	}
	nodes, more := l.Tree.Culprits(l.Row.Health.Status, maxCulprits)
	var out []Culprit
	for _, n := range nodes {
		out = append(out, Culprit{Kind: n.Kind, Name: n.Name, Ref: n.Ref, Href: paths.AppResource(l.Cluster, l.Namespace, l.Name, n.Ref), Status: n.Health.Status, Message: n.Health.Message})
	}
	return out, more
}

// eventsMore marks the events tab's count of a capped list ("500+").
func eventsMore(capped bool) string {
	if capped {
		return "+"
	}
	return ""
}
