package diffrender

import (
	"fmt"
	"strings"
)

// Hunk is a run of rows of a [Diff] for the compact view: changed rows with
// the unchanged rows of context around them that [Diff.Hunks] asked for.
type Hunk struct {
	Rows []Row
	// LeftStart and RightStart are the numbers of the hunk's first left and
	// right lines. A side with no line in the hunk gives the number of the
	// line before the hunk (0 at the top), as a unified diff header does.
	LeftStart, RightStart int
	// LeftLines and RightLines count the hunk's left and right lines.
	LeftLines, RightLines int
	// First is the index in Diff.Rows of the hunk's first row, and Skipped
	// the number of unchanged rows hidden between the previous hunk (or the
	// top) and this one. The rows hidden after the last hunk h number
	// len(d.Rows) - h.First - len(h.Rows).
	First, Skipped int
}

// Header returns the hunk's unified diff header, "@@ -l,n +r,m @@".
func (h Hunk) Header() string {
	return fmt.Sprintf("@@ -%d,%d +%d,%d @@", h.LeftStart, h.LeftLines, h.RightStart, h.RightLines)
}

// Hunks groups the rows into hunks with n rows of unchanged context before
// and after each change (3 for the compact view; a negative n counts as 0).
// Hunks whose context would touch or overlap are merged into one. The hunks
// share their rows with d. Hunks of an equal diff is nil.
func (d Diff) Hunks(n int) []Hunk {
	n = max(n, 0)
	var hunks []Hunk
	end := 0 // index after the last row taken into a hunk
	for i := 0; i < len(d.Rows); {
		if d.Rows[i].Op == Equal {
			i++
			continue
		}
		// Row i starts a change; the hunk takes in every further change at
		// most 2n unchanged rows after the last one, so that contexts that
		// would touch or overlap are merged.
		start := max(i-n, end)
		last := i // last changed row in the hunk
		for k := i + 1; k < len(d.Rows) && k <= last+2*n+1; k++ {
			if d.Rows[k].Op != Equal {
				last = k
			}
		}
		stop := min(last+n+1, len(d.Rows))
		hunks = append(hunks, d.hunk(start, stop, start-end))
		end, i = stop, stop
	}
	return hunks
}

// hunk builds the hunk of rows [start, stop).
func (d Diff) hunk(start, stop, skipped int) Hunk {
	h := Hunk{Rows: d.Rows[start:stop:stop], First: start, Skipped: skipped}
	// The line numbers before the hunk: the last numbered line on each side.
	for k := start - 1; k >= 0 && (h.LeftStart == 0 || h.RightStart == 0); k-- {
		if h.LeftStart == 0 && d.Rows[k].Left.Num != 0 {
			h.LeftStart = d.Rows[k].Left.Num
		}
		if h.RightStart == 0 && d.Rows[k].Right.Num != 0 {
			h.RightStart = d.Rows[k].Right.Num
		}
	}
	leftFirst, rightFirst := 0, 0
	for _, r := range h.Rows {
		if r.Left.Num != 0 {
			h.LeftLines++
			if leftFirst == 0 {
				leftFirst = r.Left.Num
			}
		}
		if r.Right.Num != 0 {
			h.RightLines++
			if rightFirst == 0 {
				rightFirst = r.Right.Num
			}
		}
	}
	if leftFirst != 0 {
		h.LeftStart = leftFirst
	}
	if rightFirst != 0 {
		h.RightStart = rightFirst
	}
	return h
}

// UnifiedLine is one line of the inline (unified) view. An Equal line has
// both numbers, a Delete line only LeftNum and an Insert line only
// RightNum; Change does not occur.
type UnifiedLine struct {
	Op                Op
	LeftNum, RightNum int
	Text              string
}

// Unified returns d's rows in inline order: each Change row becomes its
// deleted line followed by its inserted line; the other rows keep their
// order.
func (d Diff) Unified() []UnifiedLine {
	return unified(d.Rows)
}

// Unified returns the hunk's rows in inline order, as [Diff.Unified] does.
func (h Hunk) Unified() []UnifiedLine {
	return unified(h.Rows)
}

func unified(rows []Row) []UnifiedLine {
	out := make([]UnifiedLine, 0, len(rows))
	for _, r := range rows {
		switch r.Op {
		case Equal:
			out = append(out, UnifiedLine{Equal, r.Left.Num, r.Right.Num, r.Left.Text})
		case Delete:
			out = append(out, UnifiedLine{Delete, r.Left.Num, 0, r.Left.Text})
		case Insert:
			out = append(out, UnifiedLine{Insert, 0, r.Right.Num, r.Right.Text})
		case Change:
			out = append(out,
				UnifiedLine{Delete, r.Left.Num, 0, r.Left.Text},
				UnifiedLine{Insert, 0, r.Right.Num, r.Right.Text})
		}
	}
	return out
}

// UnifiedText writes d as a unified diff with n lines of context: each
// hunk's header ([Hunk.Header]) and its lines prefixed with " ", "-" (only
// in the left text) or "+" (only in the right one), each ending in "\n".
// An equal diff is "".
func (d Diff) UnifiedText(n int) string {
	return UnifiedHunks(d.Hunks(n))
}

// UnifiedHunks writes hunks as [Diff.UnifiedText] does: each hunk's header
// and its lines prefixed with " ", "-" or "+", each ending in "\n".
func UnifiedHunks(hunks []Hunk) string {
	var b strings.Builder
	for _, h := range hunks {
		b.WriteString(h.Header())
		b.WriteByte('\n')
		for _, u := range h.Unified() {
			switch u.Op {
			case Delete:
				b.WriteByte('-')
			case Insert:
				b.WriteByte('+')
			default:
				b.WriteByte(' ')
			}
			b.WriteString(u.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Reversed returns the hunk read the other way: the left and right sides
// swapped, so an Insert becomes a Delete and the reverse. It reads hunks
// stored before this package fixed its direction (desired on the left).
// The result shares no rows with h.
func (h Hunk) Reversed() Hunk {
	out := Hunk{Rows: make([]Row, len(h.Rows)), LeftStart: h.RightStart, RightStart: h.LeftStart,
		LeftLines: h.RightLines, RightLines: h.LeftLines, First: h.First, Skipped: h.Skipped}
	for i, r := range h.Rows {
		op := r.Op
		switch op {
		case Insert:
			op = Delete
		case Delete:
			op = Insert
		}
		out.Rows[i] = Row{Op: op, Left: r.Right, Right: r.Left}
	}
	return out
}
