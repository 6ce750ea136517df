package templates

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/internal/textfmt"
)

func sourceText(e EnvSummary) string {
	if e.Repo == "" {
		return e.Path
	}
	return e.Repo + "@" + e.Ref + ":" + e.Path
}

func titleWord(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// shortSHA is textfmt.ShortSHA, named for the templates.
func shortSHA(s string) string { return textfmt.ShortSHA(s) }

// shortDigest is textfmt.ShortDigest, named for the templates.
func shortDigest(s string) string { return textfmt.ShortDigest(s) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func int64Ptr(p *int64) string {
	if p == nil {
		return textfmt.Dash
	}
	return strconv.FormatInt(*p, 10)
}

func portsText(ps []deployplan.ServicePort) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%d→%s/%s", p.Port, p.TargetPort, p.Protocol)
	}
	return strings.Join(parts, ", ")
}

// markdownDownloadURL carries the report's Markdown in a data: URL, so the
// Markdown stays downloadable while the page shows the structured view
// only. The content is base64 of our own rendering, never interpreted.
func markdownDownloadURL(v ReportView) templ.SafeURL {
	if v.Report == nil {
		return ""
	}
	return templ.SafeURL("data:text/markdown;charset=utf-8;base64," + base64.StdEncoding.EncodeToString([]byte(v.Report.Markdown())))
}

// reportNoteText is a report's conclusion in a line, for its folded
// heading: the report's own summary ("ready: 0 of 3 object(s) would
// change"), else the first line of the history's (an automatic run's runs
// to a page), cut at 140 characters.
func reportNoteText(v ReportView) string {
	s := v.Entry.Summary
	if v.Report != nil && v.Report.DeployApply.Conclusion.Summary != "" {
		s = v.Report.DeployApply.Conclusion.Summary
	}
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return truncate(s, 140)
}

// reportConclusion is a report's conclusion (ready, blocked, applied,
// failed): the history's, else the report's own (a run whose history
// entry was not written).
func reportConclusion(v ReportView) string {
	if v.Entry.Conclusion == "" && v.Report != nil {
		return v.Report.Status()
	}
	return v.Entry.Conclusion
}
