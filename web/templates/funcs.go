package templates

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
)

func lower(s string) string { return strings.ToLower(s) }

// statusText spells a status for people: "OutOfSync" -> "Out of sync".
func statusText(s string) string {
	if s == string(kubeview.SyncOutOfSync) {
		return "Out of sync"
	}
	return s
}

func itoa(n int) string          { return strconv.Itoa(n) }
func i32(n int32) string         { return strconv.Itoa(int(n)) }
func u64(n uint64) string        { return strconv.FormatUint(n, 10) }
func f2(f float64) string        { return strconv.FormatFloat(f, 'f', 2, 64) }
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// orDash is textfmt.OrDash, named for the templates.
func orDash(s string) string { return textfmt.OrDash(s) }

// clusterIf is cluster when several clusters are configured, else "" (a
// single cluster is not named on the pages).
func clusterIf(multi bool, cluster string) string {
	if multi {
		return cluster
	}
	return ""
}

// ago formats a past time relative to now: "45s ago", "3m ago", "5h ago", "2d ago".
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 0:
		return "just now"
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h ago"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d ago"
}

// csrfHeaders is the hx-headers value that sends the CSRF token.
func csrfHeaders(token string) string {
	if token == "" {
		return ""
	}
	b, _ := json.Marshal(map[string]string{"X-CSRF-Token": token})
	return string(b)
}

// segment is one part of a stacked bar, in percent of its width.
type segment struct {
	X, W         float64
	Class, Label string
}

func segments(total int, parts []int, classes, labels []string) []segment {
	var out []segment
	if total == 0 {
		return out
	}
	x := 0.0
	for i, n := range parts {
		if n == 0 {
			continue
		}
		w := 100 * float64(n) / float64(total)
		out = append(out, segment{X: x, W: w, Class: classes[i], Label: fmt.Sprintf("%s: %d", labels[i], n)})
		x += w
	}
	return out
}

func healthSegments(c kubeview.Counts) []segment {
	var parts []int
	var classes, labels []string
	for _, h := range healthStatuses() {
		parts = append(parts, c.Health[h])
		classes = append(classes, "fill-health-"+lower(string(h)))
		labels = append(labels, string(h))
	}
	return segments(sum(parts), parts, classes, labels)
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

// healthTotal is the number of Apps the health chips count: those in scope
// that pass the sync and drift filters.
func healthTotal(c kubeview.Counts) int {
	t := 0
	for _, n := range c.Health {
		t += n
	}
	return t
}

func syncSegments(c kubeview.Counts) []segment {
	var parts []int
	var classes, labels []string
	for _, s := range syncStatuses() {
		parts = append(parts, c.Sync[s])
		classes = append(classes, "fill-sync-"+lower(string(s)))
		labels = append(labels, statusText(string(s)))
	}
	return segments(sum(parts), parts, classes, labels)
}

func segmentsLabel(segs []segment) string {
	labels := make([]string, len(segs))
	for i, s := range segs {
		labels[i] = s.Label
	}
	return strings.Join(labels, ", ")
}

// toggleHealth filters by h, or clears the filter when it is already h.
func toggleHealth(q FleetQuery, h string) FleetQuery {
	if q.Health == h {
		return q.WithHealth("")
	}
	return q.WithHealth(h)
}

// toggleCluster filters by a cluster, or clears the filter when it is on.
func toggleCluster(q FleetQuery, c string) FleetQuery {
	if q.Cluster == c {
		c = ""
	}
	q.Cluster, q.Page = c, 0
	return q
}

// clusterPrefix is "name: " for a named cluster, "" otherwise.
func clusterPrefix(cluster string) string {
	if cluster == "" {
		return ""
	}
	return cluster + ": "
}

func toggleSync(q FleetQuery, s string) FleetQuery {
	if q.Sync == s {
		return q.WithSync("")
	}
	return q.WithSync(s)
}

func rangeStart(r FleetResults) int {
	if r.Matched == 0 {
		return 0
	}
	return (max(r.Query.Page, 1)-1)*r.PerPage + 1
}

func rangeEnd(r FleetResults) int {
	return rangeStart(r) + len(r.Rows) - 1
}

// logLevelClass marks warning and error lines so they stand out in the
// viewer: a heuristic over common formats (logfmt level=, JSON "level",
// bracketed or bare ERROR/WARN, Go panics). It only colours; nothing is
// filtered by it.
func logLevelClass(line string) string {
	head := line
	if len(head) > 200 {
		head = head[:200]
	}
	l := strings.ToLower(head)
	switch {
	case strings.Contains(l, "level=error"), strings.Contains(l, `"level":"error"`), strings.Contains(l, "level=fatal"),
		strings.HasPrefix(l, "panic:"), strings.Contains(head, "ERROR"), strings.Contains(head, "FATAL"):
		return "ll-error"
	case strings.Contains(l, "level=warn"), strings.Contains(l, `"level":"warn`), strings.Contains(head, "WARN"):
		return "ll-warn"
	}
	return ""
}

// plural picks the singular or plural phrase for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// driftText says how many of an App's objects were changed by hand.
func driftText(n int) string {
	return strconv.Itoa(n) + " " + plural(n, "object", "objects") + " changed by hand"
}

// healthIconID and syncIconID name a status's icon (the si-health-* and
// si-sync-* classes of app.css); an unexpected status gets the "unknown"
// shape.
func healthIconID(s objrules.HealthStatus) string {
	switch s {
	case objrules.HealthHealthy, objrules.HealthProgressing, objrules.HealthDegraded, objrules.HealthSuspended, objrules.HealthMissing:
		return lower(string(s))
	}
	return "unknown"
}

func syncIconID(s kubeview.SyncStatus) string {
	switch s {
	case kubeview.SyncSynced, kubeview.SyncOutOfSync:
		return lower(string(s))
	}
	return "unknown"
}
