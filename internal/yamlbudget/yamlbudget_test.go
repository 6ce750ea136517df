package yamlbudget

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Bomb builds the nested-alias file of issue 26: l0 holds width scalars,
// each next level width aliases of the one before.
func Bomb(levels, width int) string {
	var b strings.Builder
	b.WriteString("l0: &l0 [" + strings.TrimSuffix(strings.Repeat("a,", width), ",") + "]\n")
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d,", i-1), width), ","))
	}
	return b.String()
}

func TestCheckMeasures(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want Stats
	}{
		{"scalar", "a", Stats{Documents: 1, Parsed: 2, Expanded: 2, Depth: 2}},
		// document, mapping, 2 keys, 2 values
		{"mapping", "a: 1\nb: 2\n", Stats{Documents: 1, Parsed: 6, Expanded: 6, Depth: 3}},
		// doc, map, key x, seq (anchored), 2 scalars, key y, alias -> seq of 3 nodes
		{"one alias", "x: &s [1, 2]\ny: *s\n", Stats{Documents: 1, Parsed: 8, Expanded: 10, Depth: 4}},
		{"two documents", "a: 1\n---\nb: 2\n", Stats{Documents: 2, Parsed: 8, Expanded: 8, Depth: 3}},
		// the bomb, two levels of 3: l0 has 4 nodes, l1 = seq + 3 x 4
		{"bomb 2x3", Bomb(2, 3), Stats{Documents: 1, Parsed: 2 + 1 + 4 + 1 + 4, Expanded: 2 + 1 + 4 + 1 + 13, Depth: 5}},
		{"merge key", "d: &d {a: 1, b: 2}\ne:\n  <<: *d\n  c: 3\n", Stats{Documents: 1, Parsed: 14, Expanded: 18, Depth: 5}},
		{"not YAML", "a: [1,\n", Stats{}},
		{"JSON", `{"a": [1, 2, {"b": null}]}`, Stats{Documents: 1, Parsed: 9, Expanded: 9, Depth: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Check("f.yaml", []byte(tc.in), Budget{})
			if err != nil {
				t.Fatalf("Check(%q) error = %v, want none", tc.in, err)
			}
			if got != tc.want {
				t.Errorf("Check(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

// TestCheckRefusesBombs feeds the hostile shapes themselves: each is refused
// at once (linear time), with a reason naming the limit.
func TestCheckRefusesBombs(t *testing.T) {
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	var deepMap strings.Builder
	for i := range 300 {
		fmt.Fprintf(&deepMap, "%sk:\n", strings.Repeat(" ", i))
	}
	fmt.Fprintf(&deepMap, "%sv\n", strings.Repeat(" ", 300))
	mergeBomb := "a0: &a0 {k0: 0, k1: 1, k2: 2, k3: 3, k4: 4, k5: 5, k6: 6, k7: 7, k8: 8}\n"
	for i := 1; i < 6; i++ {
		var keys []string
		for j := range 9 {
			keys = append(keys, fmt.Sprintf("m%d: {<<: *a%d}", j, i-1))
		}
		mergeBomb += fmt.Sprintf("a%d: &a%d {%s}\n", i, i, strings.Join(keys, ", "))
	}
	mergeList := "b0: &b0 [" + strings.TrimSuffix(strings.Repeat("a,", 9), ",") + "]\n"
	for i := 1; i < 6; i++ {
		mergeList += fmt.Sprintf("b%d: &b%d {<<: [%s]}\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("{k: *b%d},", i-1), 9), ","))
	}
	for _, tc := range []struct {
		name, in, reason string
	}{
		{"sequence bomb 5x9 (issue 26)", Bomb(5, 9), "aliases expand it to 74,739 nodes"},
		{"sequence bomb 3x50", Bomb(3, 50), "added by aliases; the limit is 10,000"},
		{"sequence bomb 30x9 (saturates, no overflow)", Bomb(30, 9), "aliases expand it to 4,611,686,018,427,387,904 nodes"},
		{"mapping bomb", mappingBomb(5, 9), "added by aliases"},
		{"merge key bomb <<: *a", mergeBomb, "added by aliases"},
		{"merge list bomb <<: [*a, *b]", mergeList, "added by aliases"},
		{"bomb in the third document", "a: 1\n---\nb: 2\n---\n" + Bomb(5, 9), "added by aliases"},
		{"bomb in the second of two documents ended by ...", "a: 1\n...\n---\n" + Bomb(5, 9), "added by aliases"},
		{"bomb spread over documents", strings.Repeat(Bomb(3, 9)+"---\n", 20), "added by aliases"},
		{"deep flow nesting without aliases", deep, "nests 5,001 levels deep"},
		{"deep block nesting without aliases", deepMap.String(), "levels deep"},
		{"deep through aliases", "a: &a " + strings.Repeat("[", 200) + strings.Repeat("]", 200) + "\nb: " + strings.Repeat("[", 100) + "*a" + strings.Repeat("]", 100) + "\n", "nests 302 levels deep"},
		{"alias inside its own anchor", "a: &a [1, *a]\n", "inside its own anchor"},
		{"over 2 MiB (dense, parsed ~100x its size)", "[" + strings.Repeat("a,", 1_100_000) + "a]", "it is 2,200,003 bytes (the limit for a file read as YAML is 2,097,152)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := Check("k/bomb.yaml", []byte(tc.in), Budget{})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Check(%s) = %v, want a *Error", tc.name, err)
			}
			if e.Name != "k/bomb.yaml" || !strings.Contains(e.Reason, tc.reason) {
				t.Errorf("Check(%s) = %v, want the file named and %q in the reason", tc.name, err, tc.reason)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Check(%s) took %s, want linear time", tc.name, d)
			}
		})
	}
}

// mappingBomb nests mappings: each level a mapping of width keys, each an
// alias of the level before.
func mappingBomb(levels, width int) string {
	var b strings.Builder
	b.WriteString("m0: &m0 {")
	for j := range width {
		fmt.Fprintf(&b, "k%d: v, ", j)
	}
	b.WriteString("}\n")
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "m%d: &m%d {", i, i)
		for j := range width {
			fmt.Fprintf(&b, "k%d: *m%d, ", j, i-1)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// TestCheckExactBombReason: the bomb of issue 26 counted by hand. Level 0
// is a sequence of 9 scalars (10 nodes), each next level a sequence of 9
// copies of the one before: 91, 820, 7,381 and 66,430 nodes; with the 5
// keys, the mapping and the document, 74,739. As written: 5 sequences of 9
// items, 5 keys, the mapping and the document, 57.
func TestCheckExactBombReason(t *testing.T) {
	_, err := Check("k/bomb.yaml", []byte(Bomb(5, 9)), Budget{})
	want := "yamlbudget: k/bomb.yaml: aliases expand it to 74,739 nodes from 57 as written (74,682 added by aliases; the limit is 10,000): write the shared parts out, or share fewer of them"
	if err == nil || err.Error() != want {
		t.Errorf("Check(bomb 5x9) = %v, want %s", err, want)
	}
}

// TestCheckKeepsOrdinaryFiles: anchors used as they are meant to be, and
// files at the limits, pass.
func TestCheckKeepsOrdinaryFiles(t *testing.T) {
	shared := "defaults: &d {image: x, pullPolicy: IfNotPresent, resources: {limits: {cpu: 1, memory: 1Gi}}}\nitems:\n"
	for i := range 200 {
		shared += fmt.Sprintf("  - {<<: *d, name: c%d}\n", i)
	}
	for _, tc := range []struct {
		name string
		in   string
		b    Budget
	}{
		{"merge keys over 200 items", shared, Budget{}},
		{"bomb 3x9 (729 leaves)", Bomb(3, 9), Budget{}},
		{"bomb 4x9 (8,261 nodes added)", Bomb(4, 9), Budget{}},
		{"at MaxAliasNodes", "x: &s [1, 2]\ny: *s\n", Budget{MaxAliasNodes: 2}},
		{"at MaxDepth", "[[1]]", Budget{MaxDepth: 4}},
		{"at MaxNodes", "[1, 2]", Budget{MaxNodes: 4}},
		{"at MaxBytes", "[1, 2]", Budget{MaxBytes: 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Check("f.yaml", []byte(tc.in), tc.b); err != nil {
				t.Errorf("Check(%s) = %v, want no error", tc.name, err)
			}
		})
	}
	for _, tc := range []struct {
		name string
		in   string
		b    Budget
	}{
		{"over MaxAliasNodes", "x: &s [1, 2]\ny: *s\n", Budget{MaxAliasNodes: 1}},
		{"over MaxDepth", "[[1]]", Budget{MaxDepth: 3}},
		{"over MaxNodes", "[1, 2]", Budget{MaxNodes: 3}},
		{"over MaxBytes", "[1, 2]", Budget{MaxBytes: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Check("f.yaml", []byte(tc.in), tc.b); err == nil {
				t.Errorf("Check(%s) = nil, want a budget error", tc.name)
			}
		})
	}
}

func TestThousands(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {59049, "59,049"}, {1234567, "1,234,567"}} {
		if got := thousands(tc.n); got != tc.want {
			t.Errorf("thousands(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
