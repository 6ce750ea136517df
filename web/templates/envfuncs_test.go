package templates

import (
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/planstore"
)

func TestReportNoteText(t *testing.T) {
	long := strings.Repeat("x", 200)
	withReport := func(summary string) *deployplan.Report {
		var r deployplan.Report
		r.DeployApply.Conclusion.Summary = summary
		return &r
	}
	tests := []struct {
		name string
		v    ReportView
		want string
	}{
		{"the report's own summary", ReportView{Entry: planstore.Entry{Summary: "auto-sync: READY: ready\nenvironment dev"}, Report: withReport("ready: 0 of 3 object(s) would change")}, "ready: 0 of 3 object(s) would change"},
		{"no report: the history's first line", ReportView{Entry: planstore.Entry{Summary: "  auto-sync: FAILED\nnext: deploy-web apply"}}, "auto-sync: FAILED"},
		{"a report without a summary", ReportView{Entry: planstore.Entry{Summary: "failed: source unreachable"}, Report: withReport("")}, "failed: source unreachable"},
		{"cut at 140", ReportView{Entry: planstore.Entry{Summary: long}}, strings.Repeat("x", 139) + "…"},
	}
	for _, tt := range tests {
		if got := reportNoteText(tt.v); got != tt.want {
			t.Errorf("%s: reportNoteText = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestReportConclusion(t *testing.T) {
	rep := func(status string) *deployplan.Report {
		var r deployplan.Report
		r.DeployApply.Conclusion.Status = status
		return &r
	}
	tests := []struct {
		name string
		v    ReportView
		want string
	}{
		{"the history's", ReportView{Entry: planstore.Entry{Conclusion: "applied"}, Report: rep("ready")}, "applied"},
		{"no history entry: the report's", ReportView{Report: rep("blocked")}, "blocked"},
		{"neither", ReportView{}, ""},
	}
	for _, tt := range tests {
		if got := reportConclusion(tt.v); got != tt.want {
			t.Errorf("%s: reportConclusion = %q, want %q", tt.name, got, tt.want)
		}
	}
}
