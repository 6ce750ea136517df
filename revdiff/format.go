package revdiff

import (
	"fmt"
	"html"
	"strings"

	"github.com/hanzoai/deploy-web/deployplan"
)

// Report is a comparison with the names of its sides, as the CLI, the
// JSON API and the pull request comment show it.
type Report struct {
	// Environment is the environment compared.
	Environment string `json:"environment"`
	// From and To name the sides: "live", a record id, "ref:REF".
	From string `json:"from"`
	To   string `json:"to"`
	// Commit is the commit a ref resolved to, when To is a ref.
	Commit string `json:"commit,omitempty"`
	// Changes reports whether anything was added, changed or removed.
	Changes bool             `json:"changes"`
	Counts  Counts           `json:"counts"`
	Objects []ReportResource `json:"resources"`
	// Outside lists the resources a live side did not read: outside the
	// environment's namespace, of a cluster-scoped or unknown kind, or
	// reserved (a plan blocks them). Each shows as added or removed.
	Outside []string `json:"outside,omitempty"`
	// Omitted and LinesCut are Result's.
	Omitted  int  `json:"omitted,omitempty"`
	LinesCut bool `json:"linesCut,omitempty"`
}

// ReportResource is one resource of a Report: the resource, its summary
// ("changed (hash)" for a Secret) and its unified diff.
type ReportResource struct {
	Resource
	Summary string `json:"summary"`
	Diff    string `json:"diff,omitempty"`
}

// NewReport names res's sides.
func NewReport(env, from, to, commit string, res *Result) Report {
	rep := Report{Environment: env, From: from, To: to, Commit: commit, Changes: res.Changes(), Counts: res.Counts,
		Objects: make([]ReportResource, 0, len(res.Resources)), Omitted: res.Omitted, LinesCut: res.LinesCut}
	for _, r := range res.Resources {
		rep.Objects = append(rep.Objects, ReportResource{Resource: r, Summary: r.Summary(), Diff: r.Unified()})
	}
	return rep
}

// Markdown writes the report for a pull request comment: a heading, a
// summary table (one row per added, changed or removed resource), then one
// collapsible <details> section per resource with its diff in a ```diff
// block. Every name is escaped (Markdown in the table, HTML in the
// summaries) and the fence is longer than any backtick run of the diff, so
// nothing in a manifest can close it.
func (rep Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### deploy-web diff: %s, %s → %s\n\n", deployplan.MarkdownText(rep.Environment), deployplan.MarkdownText(rep.From), deployplan.MarkdownText(rep.To))
	if rep.Commit != "" {
		fmt.Fprintf(&b, "Commit `%s`.\n\n", strings.ReplaceAll(rep.Commit, "`", "'"))
	}
	c := rep.Counts
	fmt.Fprintf(&b, "**%d added, %d changed, %d removed**, %d unchanged.\n\n", c.Added, c.Changed, c.Removed, c.Unchanged)
	if rep.Omitted > 0 {
		fmt.Fprintf(&b, "%d more resources were not compared (over the limit of resources in one diff).\n\n", rep.Omitted)
	}
	if rep.LinesCut {
		b.WriteString("Some diffs were cut to the line limit.\n\n")
	}
	if len(rep.Outside) > 0 {
		fmt.Fprintf(&b, "%d resources are outside the environment's boundary and were not read from the cluster (a plan blocks them).\n\n", len(rep.Outside))
	}
	if len(rep.Objects) == 0 {
		b.WriteString("No changes.\n")
		return b.String()
	}
	b.WriteString("| resource | namespace | status | lines |\n| --- | --- | --- | --- |\n")
	for _, o := range rep.Objects {
		lines := "–"
		if !o.Secret && !o.Unmanaged {
			lines = fmt.Sprintf("+%d −%d", o.Added, o.Removed)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", deployplan.MarkdownText(kindName(o.Key)), deployplan.MarkdownText(orDash(o.Namespace)), o.Summary, lines)
	}
	b.WriteString("\n")
	for _, o := range rep.Objects {
		fmt.Fprintf(&b, "<details><summary>%s: %s</summary>\n\n", htmlText(o.Key.String()), htmlText(o.Summary))
		switch {
		case o.Unmanaged:
			b.WriteString("It exists in the cluster, but deploy-web does not manage it: its values are not shown.\n\n")
		case o.Secret:
			b.WriteString("A Secret is compared by hash: its values are never shown.\n\n")
		case o.Error != "":
			fmt.Fprintf(&b, "No line diff: %s\n\n", deployplan.MarkdownText(o.Error))
		default:
			fence := strings.Repeat("`", max(3, longestRun(o.Diff, '`')+1))
			fmt.Fprintf(&b, "%sdiff\n%s%s\n\n", fence, o.Diff, fence)
			if o.LinesCut {
				b.WriteString("(cut to the line limit)\n\n")
			}
		}
		b.WriteString("</details>\n\n")
	}
	return b.String()
}

// htmlText escapes s for the text of an HTML element in Markdown: the HTML
// specials, and, as numeric references, the characters of Markdown's
// inline syntax, which some renderers read inside HTML too.
func htmlText(s string) string {
	return strings.NewReplacer("[", "&#91;", "]", "&#93;", "*", "&#42;", "_", "&#95;", "`", "&#96;", "\\", "&#92;", "\n", " ", "\r", " ").
		Replace(html.EscapeString(s))
}

func kindName(k Key) string {
	kind := k.Kind
	if k.Group != "" {
		kind += "." + k.Group
	}
	return kind + "/" + k.Name
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}
