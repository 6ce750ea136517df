package templates

import (
	"strconv"

	"github.com/hanzoai/deploy-web/kubeview"
)

// LogsPage is the log viewer of one App.
type LogsPage struct {
	Layout LayoutProps
	View   LogsView
}

// LogsView is the viewer's self-replacing part: the toolbar form, the
// status line and the lines (streamed, or read once when not following).
type LogsView struct {
	// Cluster is the App's cluster; Multi says several are configured.
	Cluster         string
	Multi           bool
	Namespace, Name string
	// PageURL is the viewer's path (the form's target).
	PageURL string
	// AppURL is the app page.
	AppURL string
	Pods   []kubeview.LogPod
	// PodParam is the chosen pod ("" = the newest running pod).
	PodParam string
	// Pod and Container are what is read ("" when nothing is).
	Pod, Container string
	// Containers are the read pod's containers (a selector when > 1).
	Containers []string
	Tail       int
	// Since is the ?since= value ("" = all).
	Since         string
	Timestamps    bool
	Follow        bool
	Previous      bool
	Filter        string
	CaseSensitive bool
	// Reason says why nothing (or less than asked) is shown.
	Reason string
	// Lines are shown when not following; Hidden counts the older lines
	// left out of the page (the DOM keeps at most MaxDOMLines).
	Lines  []LogLineView
	Hidden int
	// StreamURL is the SSE stream when following.
	StreamURL string
	// DownloadURL is the current selection as plain text.
	DownloadURL string
}

// MaxDOMLines is how many lines the viewer keeps on the page (logs.js
// trims streamed lines to the same number).
const MaxDOMLines = 5000

// LogLineView is one row of the viewer: a log line, or a marker (Kind
// "status", "ended", "skipped", "end") the stream inserts between lines.
type LogLineView struct {
	Kind string
	TS   string
	Text string
}

// Choice is one option of a select.
type Choice struct {
	Value, Label string
}

// TailChoices are the viewer's tail options.
func TailChoices(current int) []Choice {
	out := []Choice{}
	seen := false
	for _, n := range []int{100, 500, 1000, 5000, 10000} {
		out = append(out, Choice{strconv.Itoa(n), strconv.Itoa(n) + " lines"})
		seen = seen || n == current
	}
	if !seen {
		out = append(out, Choice{strconv.Itoa(current), strconv.Itoa(current) + " lines"})
	}
	return out
}

// SinceChoices are the viewer's since options.
func SinceChoices(current string) []Choice {
	out := []Choice{{"", "all time"}, {"1m", "last minute"}, {"5m", "last 5 minutes"}, {"15m", "last 15 minutes"}, {"1h", "last hour"}, {"6h", "last 6 hours"}, {"24h", "last 24 hours"}}
	for _, c := range out {
		if c.Value == current {
			return out
		}
	}
	return append(out, Choice{current, "since " + current})
}

func podLabel(p kubeview.LogPod) string {
	s := p.Name + " · " + p.Phase
	if p.Terminating {
		s = p.Name + " · Terminating"
	}
	if p.Restarts > 0 {
		s += " · " + strconv.Itoa(int(p.Restarts)) + " restarts"
	}
	return s
}
