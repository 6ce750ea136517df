package diffrender

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aymanbagabas/go-udiff/lcs"
	"github.com/google/go-cmp/cmp"
)

// eq, ins, del and chg build expected rows.
func eq(l, r int, text string) Row { return Row{Equal, Line{l, text}, Line{r, text}} }
func ins(r int, text string) Row   { return Row{Op: Insert, Right: Line{r, text}} }
func del(l int, text string) Row   { return Row{Op: Delete, Left: Line{l, text}} }
func chg(l int, old string, r int, new string) Row {
	return Row{Change, Line{l, old}, Line{r, new}}
}

func TestCompute(t *testing.T) {
	tests := []struct {
		name        string
		left, right string
		want        Diff
	}{
		{
			name: "both empty",
			want: Diff{Rows: []Row{}, Equal: true},
		},
		{
			name:  "identical",
			left:  "a\nb\n",
			right: "a\nb\n",
			want:  Diff{Rows: []Row{eq(1, 1, "a"), eq(2, 2, "b")}, Equal: true},
		},
		{
			name:  "all added",
			right: "a\nb\n",
			want:  Diff{Rows: []Row{ins(1, "a"), ins(2, "b")}, Added: 2},
		},
		{
			name: "all removed",
			left: "a\nb\n",
			want: Diff{Rows: []Row{del(1, "a"), del(2, "b")}, Removed: 2},
		},
		{
			name:  "missing final newline is not a difference",
			left:  "a\nb\n",
			right: "a\nb",
			want:  Diff{Rows: []Row{eq(1, 1, "a"), eq(2, 2, "b")}, Equal: true},
		},
		{
			name:  "an extra empty last line is",
			left:  "a\nb\n",
			right: "a\nb\n\n",
			want:  Diff{Rows: []Row{eq(1, 1, "a"), eq(2, 2, "b"), ins(3, "")}, Added: 1},
		},
		{
			name:  "a lone newline is one empty line",
			left:  "",
			right: "\n",
			want:  Diff{Rows: []Row{ins(1, "")}, Added: 1},
		},
		{
			name:  "CRLF reads as LF",
			left:  "a\r\nb\r\nc\r\n",
			right: "a\nb\nc\n",
			want:  Diff{Rows: []Row{eq(1, 1, "a"), eq(2, 2, "b"), eq(3, 3, "c")}, Equal: true},
		},
		{
			name:  "CRLF with a change",
			left:  "a\r\nb\r\n",
			right: "a\r\nB",
			want:  Diff{Rows: []Row{eq(1, 1, "a"), chg(2, "b", 2, "B")}, Added: 1, Removed: 1},
		},
		{
			name:  "a change in the middle pairs on one row",
			left:  "kind: Deployment\nspec:\n  replicas: 3\n  paused: false\n",
			right: "kind: Deployment\nspec:\n  replicas: 5\n  paused: false\n",
			want: Diff{Rows: []Row{
				eq(1, 1, "kind: Deployment"),
				eq(2, 2, "spec:"),
				chg(3, "  replicas: 3", 3, "  replicas: 5"),
				eq(4, 4, "  paused: false"),
			}, Added: 1, Removed: 1},
		},
		{
			name:  "more deletions than insertions: pairs then deletes",
			left:  "a\nb\nc\nd\ne\n",
			right: "a\nB\ne\n",
			want: Diff{Rows: []Row{
				eq(1, 1, "a"),
				chg(2, "b", 2, "B"),
				del(3, "c"),
				del(4, "d"),
				eq(5, 3, "e"),
			}, Added: 1, Removed: 3},
		},
		{
			name:  "more insertions than deletions: pairs then inserts",
			left:  "a\nb\ne\n",
			right: "a\nB\nC\nD\ne\n",
			want: Diff{Rows: []Row{
				eq(1, 1, "a"),
				chg(2, "b", 2, "B"),
				ins(3, "C"),
				ins(4, "D"),
				eq(3, 5, "e"),
			}, Added: 3, Removed: 1},
		},
		{
			name:  "separate edits stay separate",
			left:  "a\nb\nc\nd\n",
			right: "x\nb\nc\nd\ny\n",
			want: Diff{Rows: []Row{
				chg(1, "a", 1, "x"),
				eq(2, 2, "b"),
				eq(3, 3, "c"),
				eq(4, 4, "d"),
				ins(5, "y"),
			}, Added: 2, Removed: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compute(tt.left, tt.right)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Compute(%q, %q) mismatch (-want +got):\n%s", tt.left, tt.right, diff)
			}
		})
	}
}

// checkRows checks the invariants of a Diff of left and right: each side's
// lines appear once, in order, numbered from 1; the ops match the cells;
// the counts and Equal agree with the rows.
func checkRows(t *testing.T, left, right string, d Diff) {
	t.Helper()
	var gotLeft, gotRight []string
	added, removed := 0, 0
	for i, r := range d.Rows {
		// Within a run of edits, Change rows come first, then Delete rows
		// or Insert rows, never both: every possible pair is paired.
		if i > 0 {
			if prev := d.Rows[i-1].Op; prev != Equal && r.Op != Equal && prev != r.Op && prev != Change {
				t.Fatalf("rows %d, %d: %v then %v in one run of edits", i-1, i, prev, r.Op)
			}
		}
		hasL, hasR := r.Left.Num != 0, r.Right.Num != 0
		var ok bool
		switch r.Op {
		case Equal:
			ok = hasL && hasR && r.Left.Text == r.Right.Text
		case Change:
			ok = hasL && hasR && r.Left.Text != r.Right.Text
			added, removed = added+1, removed+1
		case Delete:
			ok = hasL && !hasR
			removed++
		case Insert:
			ok = !hasL && hasR
			added++
		}
		if !ok {
			t.Fatalf("row %d = %+v: cells do not fit op %v", i, r, r.Op)
		}
		if hasL {
			gotLeft = append(gotLeft, r.Left.Text)
			if r.Left.Num != len(gotLeft) {
				t.Fatalf("row %d: left line number = %d, want %d", i, r.Left.Num, len(gotLeft))
			}
		}
		if hasR {
			gotRight = append(gotRight, r.Right.Text)
			if r.Right.Num != len(gotRight) {
				t.Fatalf("row %d: right line number = %d, want %d", i, r.Right.Num, len(gotRight))
			}
		}
	}
	if diff := cmp.Diff(splitLines(left), gotLeft, cmpEmptyNil); diff != "" {
		t.Errorf("left lines of the rows mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(splitLines(right), gotRight, cmpEmptyNil); diff != "" {
		t.Errorf("right lines of the rows mismatch (-want +got):\n%s", diff)
	}
	if d.Added != added || d.Removed != removed {
		t.Errorf("Added, Removed = %d, %d; the rows count %d, %d", d.Added, d.Removed, added, removed)
	}
	if d.Equal != (added == 0 && removed == 0) {
		t.Errorf("Equal = %v with +%d -%d", d.Equal, added, removed)
	}
}

var cmpEmptyNil = cmp.Comparer(func(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n") && len(a) == len(b)
})

// TestComputeRandom checks the row invariants on random edits of a
// manifest-like text, including long edit scripts past the library's
// search bound.
func TestComputeRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	base := manifestLines(400)
	for i := range 200 {
		left := mutate(r, base, r.IntN(150))
		right := mutate(r, left, r.IntN(150))
		l, rt := strings.Join(left, "\n"), strings.Join(right, "\n")
		if r.IntN(2) == 0 {
			l += "\n"
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			checkRows(t, l, rt, Compute(l, rt))
		})
	}
}

// mutate returns lines with n random single-line edits: a change, an
// insertion or a deletion.
func mutate(r *rand.Rand, lines []string, n int) []string {
	out := append([]string(nil), lines...)
	for range n {
		i := r.IntN(len(out) + 1)
		switch op := r.IntN(3); {
		case op == 0 && i < len(out):
			out[i] += " # changed"
		case op == 1 || i == len(out):
			out = append(out[:i], append([]string{fmt.Sprintf("  inserted: %d", r.IntN(1000))}, out[i:]...)...)
		default:
			out = append(out[:i], out[i+1:]...)
		}
	}
	return out
}

// TestComputeScatteredEditsStayMinimal checks the refinement past the
// library's search bound: 200 lines edited in 10,000 give exactly 200
// Change rows, not one block replacing the middle of the text.
func TestComputeScatteredEditsStayMinimal(t *testing.T) {
	lines := manifestLines(10000)
	left := strings.Join(lines, "\n")
	right := strings.Join(scatteredChanges(lines, 200), "\n")
	d := Compute(left, right)
	changes := 0
	for _, r := range d.Rows {
		if r.Op == Change {
			changes++
		}
	}
	if changes != 200 || d.Added != 200 || d.Removed != 200 || len(d.Rows) != 10000 {
		t.Errorf("Compute: %d rows, %d changes, +%d -%d; want 10000 rows, 200 changes, +200 -200",
			len(d.Rows), changes, d.Added, d.Removed)
	}
	checkRows(t, left, right, d)
}

func TestOpString(t *testing.T) {
	for op, want := range map[Op]string{Equal: "equal", Insert: "insert", Delete: "delete", Change: "change", Op(9): "unknown"} {
		if got := op.String(); got != want {
			t.Errorf("Op(%d).String() = %q, want %q", int(op), got, want)
		}
	}
}

func TestHunks(t *testing.T) {
	// 20 lines; line 3 changed, line 10 deleted, line 12 changed, a line
	// inserted after 19.
	var left, right []string
	for i := 1; i <= 20; i++ {
		l := fmt.Sprintf("line %d", i)
		left = append(left, l)
		switch i {
		case 3, 12:
			right = append(right, l+" edited")
		case 10:
		case 19:
			right = append(right, l, "new line")
		default:
			right = append(right, l)
		}
	}
	d := Compute(strings.Join(left, "\n"), strings.Join(right, "\n"))

	type hunk struct {
		header         string
		first, skipped int
		rows           int
	}
	tests := []struct {
		n    int
		want []hunk
	}{
		{n: 0, want: []hunk{
			{"@@ -3,1 +3,1 @@", 2, 2, 1},
			{"@@ -10,1 +9,0 @@", 9, 6, 1},
			{"@@ -12,1 +11,1 @@", 11, 1, 1},
			{"@@ -19,0 +19,1 @@", 19, 7, 1},
		}},
		{n: 1, want: []hunk{
			{"@@ -2,3 +2,3 @@", 1, 1, 3},
			{"@@ -9,5 +9,4 @@", 8, 4, 5}, // contexts of 10 and 12 overlap: merged
			{"@@ -19,2 +18,3 @@", 18, 5, 3},
		}},
		{n: 3, want: []hunk{
			{"@@ -1,15 +1,14 @@", 0, 0, 15}, // 3, 10 and 12 merged
			{"@@ -17,4 +16,5 @@", 16, 1, 5}, // 7 unchanged rows > 2*3 apart
		}},
		{n: 100, want: []hunk{
			{"@@ -1,20 +1,20 @@", 0, 0, 21},
		}},
		{n: -1, want: []hunk{ // as 0
			{"@@ -3,1 +3,1 @@", 2, 2, 1},
			{"@@ -10,1 +9,0 @@", 9, 6, 1},
			{"@@ -12,1 +11,1 @@", 11, 1, 1},
			{"@@ -19,0 +19,1 @@", 19, 7, 1},
		}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("n=", tt.n), func(t *testing.T) {
			var got []hunk
			for _, h := range d.Hunks(tt.n) {
				got = append(got, hunk{h.Header(), h.First, h.Skipped, len(h.Rows)})
				if diff := cmp.Diff(d.Rows[h.First:h.First+len(h.Rows)], h.Rows); diff != "" {
					t.Errorf("hunk at %d: rows are not d.Rows[First:] (-want +got):\n%s", h.First, diff)
				}
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(hunk{})); diff != "" {
				t.Errorf("Hunks(%d) mismatch (-want +got):\n%s", tt.n, diff)
			}
		})
	}
}

func TestHunksEdges(t *testing.T) {
	if h := Compute("a\nb\n", "a\nb\n").Hunks(3); h != nil {
		t.Errorf("Hunks of an equal diff = %v, want nil", h)
	}
	if h := Compute("", "").Hunks(3); h != nil {
		t.Errorf("Hunks of an empty diff = %v, want nil", h)
	}
	got := Compute("", "a\nb\n").Hunks(3)
	want := []Hunk{{
		Rows:      []Row{ins(1, "a"), ins(2, "b")},
		LeftStart: 0, RightStart: 1, LeftLines: 0, RightLines: 2,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Hunks of an all-added diff mismatch (-want +got):\n%s", diff)
	}
	if h := got[0].Header(); h != "@@ -0,0 +1,2 @@" {
		t.Errorf("Header() = %q, want %q", h, "@@ -0,0 +1,2 @@")
	}
}

func TestUnified(t *testing.T) {
	d := Compute("a\nb\nc\nd\n", "a\nB\nC\nd\ne\n")
	want := []UnifiedLine{
		{Equal, 1, 1, "a"},
		{Delete, 2, 0, "b"},
		{Insert, 0, 2, "B"},
		{Delete, 3, 0, "c"},
		{Insert, 0, 3, "C"},
		{Equal, 4, 4, "d"},
		{Insert, 0, 5, "e"},
	}
	if diff := cmp.Diff(want, d.Unified()); diff != "" {
		t.Errorf("Unified mismatch (-want +got):\n%s", diff)
	}
	d = Compute("a\nb\nc\n", "a\nc\n")
	want = []UnifiedLine{{Equal, 1, 1, "a"}, {Delete, 2, 0, "b"}, {Equal, 3, 2, "c"}}
	if diff := cmp.Diff(want, d.Unified()); diff != "" {
		t.Errorf("Unified mismatch (-want +got):\n%s", diff)
	}
	h := d.Hunks(0)
	if diff := cmp.Diff([]UnifiedLine{{Delete, 2, 0, "b"}}, h[0].Unified()); diff != "" {
		t.Errorf("Hunk.Unified mismatch (-want +got):\n%s", diff)
	}
}

func TestAppendEdit(t *testing.T) {
	got := appendEdit(nil, lcs.Diff{Start: 1, End: 2, ReplStart: 1, ReplEnd: 1})
	got = appendEdit(got, lcs.Diff{Start: 2, End: 2, ReplStart: 1, ReplEnd: 3}) // touches: merged
	got = appendEdit(got, lcs.Diff{Start: 4, End: 5, ReplStart: 5, ReplEnd: 5}) // after an equal line
	want := []lcs.Diff{{Start: 1, End: 2, ReplStart: 1, ReplEnd: 3}, {Start: 4, End: 5, ReplStart: 5, ReplEnd: 5}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("appendEdit mismatch (-want +got):\n%s", diff)
	}
}

func TestUnifiedText(t *testing.T) {
	tests := []struct {
		left, right string
		want        string
	}{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nb\nc\n", "a\nB\nc\n", "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"", "x\n", "@@ -0,0 +1,1 @@\n+x\n"},
		{"x\n", "", "@@ -1,1 +0,0 @@\n-x\n"},
		// A hostile line that looks like a header stays one prefixed line.
		{"@@ -1 +1 @@\n", "a\n", "@@ -1,1 +1,1 @@\n-@@ -1 +1 @@\n+a\n"},
	}
	for _, tt := range tests {
		if got := Compute(tt.left, tt.right).UnifiedText(3); got != tt.want {
			t.Errorf("Compute(%q, %q).UnifiedText(3) = %q, want %q", tt.left, tt.right, got, tt.want)
		}
	}
}

// TestHunkReversed: a hunk read the other way is the hunk of the swapped
// texts.
func TestHunkReversed(t *testing.T) {
	pairs := [][2]string{
		{"a\nb\nc\n", "a\nB\nc\nd\n"},
		{"", "x\ny\n"},
		{"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\neleven\n"},
	}
	for _, p := range pairs {
		fwd := Compute(p[0], p[1]).Hunks(1)
		back := Compute(p[1], p[0]).Hunks(1)
		var got []Hunk
		for _, h := range fwd {
			got = append(got, h.Reversed())
		}
		if diff := cmp.Diff(back, got); diff != "" {
			t.Errorf("reversed hunks of %q -> %q mismatch (-want +got):\n%s", p[0], p[1], diff)
		}
	}
}
