package templates

import "github.com/a-h/templ"

// FoldProps is a section of a page that folds (Fold): the environment
// page's plan report, plan history, audit trail and notifications, and
// the same sections of the app page.
type FoldProps struct {
	// ID is the <details>' id. app.js keeps a fold's open state by it when
	// HTMX swaps the fold for a fresh copy, and an address ending #ID (or
	// the id of anything inside) opens it. The heading's id is ID + "-h".
	ID string
	// Title is the section's heading (an h2 in the summary).
	Title string
	// Count follows the heading ("3", "20+"), CountOf names what it counts
	// for a screen reader ("records"); "" for no count.
	Count, CountOf string
	// Note, when set, follows the count in the summary: a state the
	// folded section still shows (a plan's conclusion).
	Note templ.Component
	// TestID is the fold's data-testid ("" for none).
	TestID string
}

// countOf is n as a fold's count, with "+" when there are more than shown.
func countOf(n int, more bool) string {
	if more {
		return itoa(n) + "+"
	}
	return itoa(n)
}
