package templates

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// TestFold: a fold is a <details> drawn open and marked for app.js, its
// summary the section's heading (an h2 with the id its section is
// labelled by), the count with what it counts for a screen reader, and
// the note; a section without a count draws none.
func TestFold(t *testing.T) {
	tests := []struct {
		name    string
		p       FoldProps
		want    []string
		notWant []string
	}{
		{"count and note", FoldProps{ID: "audit-fold", Title: "Audit trail", Count: "20+", CountOf: "records", Note: ConclusionBadge("ready"), TestID: "audit-fold"}, []string{
			`<details id="audit-fold" class="fold" open data-fold="narrow" data-testid="audit-fold">`,
			`<summary class="fold-head"><h2 id="audit-fold-h">Audit trail</h2>`,
			`data-testid="fold-count">20+ <span class="visually-hidden">records</span></span>`,
			`<span class="fold-note"><span class="badge conclusion-ready" data-testid="conclusion">`,
			`<div class="fold-body">body</div></details>`,
		}, nil},
		{"no count", FoldProps{ID: "report-fold", Title: "Plan report"}, []string{`<h2 id="report-fold-h">Plan report</h2></summary>`}, []string{"fold-count", "fold-note"}},
		{"a title is escaped", FoldProps{ID: "f", Title: "<script>x</script>"}, []string{"&lt;script&gt;x&lt;/script&gt;"}, []string{"<script>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			ctx := templ.WithChildren(context.Background(), templ.Raw("body"))
			if err := Fold(tt.p).Render(ctx, &b); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Fold(%+v) = %s\nwant it to contain %s", tt.p, got, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("Fold(%+v) = %s\nwant no %s", tt.p, got, w)
				}
			}
		})
	}
}
