package diffrender

import (
	"strings"

	"github.com/aymanbagabas/go-udiff/lcs"
)

// Op is what a [Row] or [UnifiedLine] shows happened to a line on its way
// from the left text to the right one. For a manifest ([Manifests]) the
// left is the live object ("before") and the right the desired state
// ("after"), as in ArgoCD and kubectl diff: Insert is a line that a sync or
// an apply would add, Delete one it would take away.
type Op int

const (
	// Equal is a line present on both sides.
	Equal Op = iota
	// Insert is a line only in the right (after, desired) text.
	Insert
	// Delete is a line only in the left (before, live) text.
	Delete
	// Change is a deleted line and an inserted line shown on one row.
	Change
)

// String returns the lower-case name of op ("equal", "insert", "delete",
// "change"), usable as a CSS class suffix.
func (op Op) String() string {
	switch op {
	case Equal:
		return "equal"
	case Insert:
		return "insert"
	case Delete:
		return "delete"
	case Change:
		return "change"
	}
	return "unknown"
}

// Line is one cell of a side-by-side row: a line number, counted from 1,
// and the line's text without its terminator. Num 0 is an empty cell.
type Line struct {
	Num  int
	Text string
}

// Row is one row of the side-by-side view. Equal rows fill both cells with
// the same text, Change rows pair an old (left) and a new (right) line,
// Delete rows leave Right empty and Insert rows leave Left empty.
type Row struct {
	Op          Op
	Left, Right Line
}

// Diff is the line diff of two texts, aligned into side-by-side rows in
// which each side's line numbers increase by one.
type Diff struct {
	// Rows covers every line of both texts, unchanged ones included.
	Rows []Row
	// Added and Removed count the lines only in the right and only in the
	// left text; a Change row counts one of each.
	Added, Removed int
	// Equal reports that the texts have the same lines.
	Equal bool
}

// Compute diffs two texts line by line and aligns the result into
// side-by-side rows.
//
// CRLF line ends are read as LF, and a final line terminator is optional:
// "a\nb" and "a\nb\n" both have the two lines a and b, so they compare
// equal. The edit script comes from Myers' algorithm (the gopls
// implementation in github.com/aymanbagabas/go-udiff/lcs). Within each run
// of edits, the deleted and the inserted lines are paired in order into
// Change rows; the lines left over on the longer side become Delete or
// Insert rows with an empty cell on the other side.
func Compute(left, right string) Diff {
	a, b := splitLines(left), splitLines(right)
	edits := diffLines(a, b)

	d := Diff{Rows: make([]Row, 0, max(len(a), len(b))+len(edits))}
	var i, j int // next unconsumed line of a and of b
	equal := func(end int) {
		for ; i < end; i, j = i+1, j+1 {
			d.Rows = append(d.Rows, Row{Op: Equal, Left: Line{i + 1, a[i]}, Right: Line{j + 1, b[j]}})
		}
	}
	for _, e := range edits {
		equal(e.Start)
		for i < e.End && j < e.ReplEnd {
			d.Rows = append(d.Rows, Row{Op: Change, Left: Line{i + 1, a[i]}, Right: Line{j + 1, b[j]}})
			i, j = i+1, j+1
		}
		for ; i < e.End; i++ {
			d.Rows = append(d.Rows, Row{Op: Delete, Left: Line{i + 1, a[i]}})
		}
		for ; j < e.ReplEnd; j++ {
			d.Rows = append(d.Rows, Row{Op: Insert, Right: Line{j + 1, b[j]}})
		}
		d.Removed += e.End - e.Start
		d.Added += e.ReplEnd - e.ReplStart
	}
	equal(len(a))
	d.Equal = len(edits) == 0
	return d
}

// splitLines splits text into lines without their terminators, reading
// CRLF as LF; "" has no lines and a final "\n" ends the last line rather
// than starting an empty one.
func splitLines(text string) []string {
	if strings.Contains(text, "\r\n") {
		text = strings.ReplaceAll(text, "\r\n", "\n")
	}
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// diffLines returns the edit script from a to b as replacements of
// a[Start:End] by b[ReplStart:ReplEnd], in order.
//
// lcs.DiffLines runs Myers' bidirectional search with a bound on the edit
// distance; past the bound it keeps the best forward and backward paths and
// reports the whole middle as one replacement, which on a long text with
// scattered edits would paint hundreds of unchanged lines as changed.
// diffLines therefore diffs every replacement that has lines on both sides
// again, and splices in the result when that finds common lines. Within the
// bound the script is minimal, a replacement has no line in common and the
// second diff returns it unchanged, so only long scripts pay for the
// recursion.
func diffLines(a, b []string) []lcs.Diff {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	return refine(nil, a, b, lcs.Diff{Start: 0, End: len(a), ReplStart: 0, ReplEnd: len(b)}, true)
}

// refine appends to out the edit script of a[e.Start:e.End] to
// b[e.ReplStart:e.ReplEnd]; top is set for the whole texts, whose diff is
// always computed.
func refine(out []lcs.Diff, a, b []string, e lcs.Diff, top bool) []lcs.Diff {
	n, m := e.End-e.Start, e.ReplEnd-e.ReplStart
	if !top && (n == 0 || m == 0 || n == 1 && m == 1 && a[e.Start] != b[e.ReplStart]) {
		return appendEdit(out, e)
	}
	sub := lcs.DiffLines(a[e.Start:e.End], b[e.ReplStart:e.ReplEnd])
	if !top && len(sub) == 1 && sub[0] == (lcs.Diff{Start: 0, End: n, ReplStart: 0, ReplEnd: m}) {
		return appendEdit(out, e) // no line in common: a true replacement
	}
	for _, s := range sub {
		s.Start += e.Start
		s.End += e.Start
		s.ReplStart += e.ReplStart
		s.ReplEnd += e.ReplStart
		out = refine(out, a, b, s, false)
	}
	return out
}

// appendEdit appends e to out, merged into the last edit when the two
// touch, so that a run of edits with no unchanged line between them is one
// edit and its deletions and insertions pair into Change rows.
func appendEdit(out []lcs.Diff, e lcs.Diff) []lcs.Diff {
	if n := len(out); n > 0 && out[n-1].End == e.Start && out[n-1].ReplEnd == e.ReplStart {
		out[n-1].End, out[n-1].ReplEnd = e.End, e.ReplEnd
		return out
	}
	return append(out, e)
}
