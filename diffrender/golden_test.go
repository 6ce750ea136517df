package diffrender

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestGolden runs Manifests on each testdata/<case>.desired.yaml and
// <case>.live.yaml pair and compares a plain-text rendering of the result
// with testdata/<case>.golden. go test ./diffrender/ -update rewrites the
// golden files.
func TestGolden(t *testing.T) {
	desiredFiles, err := filepath.Glob(filepath.Join("testdata", "*.desired.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(desiredFiles) == 0 {
		t.Fatal("no testdata/*.desired.yaml")
	}
	for _, desiredFile := range desiredFiles {
		name := strings.TrimSuffix(filepath.Base(desiredFile), ".desired.yaml")
		t.Run(name, func(t *testing.T) {
			desired := parse(t, readFile(t, desiredFile))
			live := parse(t, readFile(t, filepath.Join("testdata", name+".live.yaml")))
			md, err := Manifests(desired, live)
			if err != nil {
				t.Fatalf("Manifests: %v", err)
			}
			got := renderGolden(name, md)

			goldenFile := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(goldenFile, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := readFile(t, goldenFile)
			// Compared as lines, so that a mismatch reads as a line diff.
			if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")); diff != "" {
				t.Errorf("%s mismatch (-want +got); run go test ./diffrender/ -update if the change is intended:\n%s", goldenFile, diff)
			}

			// The live file carries the applied manifest in its
			// last-applied-configuration annotation, as kubectl writes it:
			// read from there, the desired state gives the same diff.
			fromAnnotation, err := LastApplied(live)
			if err != nil || fromAnnotation == nil {
				t.Fatalf("LastApplied(live) = %v, %v; want the desired manifest", fromAnnotation, err)
			}
			md2, err := Manifests(fromAnnotation, live)
			if err != nil {
				t.Fatalf("Manifests(LastApplied(live), live): %v", err)
			}
			if diff := cmp.Diff(md, md2); diff != "" {
				t.Errorf("diff with desired from the annotation mismatch (-file +annotation):\n%s", diff)
			}
		})
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// renderGolden renders a ManifestDiff as plain text: a summary, the
// side-by-side rows, the compact hunks and the unified lines.
func renderGolden(name string, md ManifestDiff) string {
	var b strings.Builder
	line := func(format string, args ...any) {
		b.WriteString(strings.TrimRight(fmt.Sprintf(format, args...), " "))
		b.WriteByte('\n')
	}
	line("# %s", name)
	if md.Diff.Equal {
		line("no differences")
	} else {
		line("%d added, %d removed", md.Diff.Added, md.Diff.Removed)
	}
	line("")
	line("## side by side (live | desired)")
	for _, r := range md.Diff.Rows {
		line("%s", sideBySide(r))
	}
	line("")
	line("## compact (3 lines of context)")
	hunks := md.Diff.Hunks(3)
	if len(hunks) == 0 {
		line("(no hunks)")
	}
	for _, h := range hunks {
		if h.Skipped > 0 {
			line("     ... %d unchanged lines", h.Skipped)
		}
		line("%s", h.Header())
		for _, r := range h.Rows {
			line("%s", sideBySide(r))
		}
	}
	if n := len(hunks); n > 0 {
		last := hunks[n-1]
		if after := len(md.Diff.Rows) - last.First - len(last.Rows); after > 0 {
			line("     ... %d unchanged lines", after)
		}
	}
	line("")
	line("## unified")
	for _, u := range md.Diff.Unified() {
		line("%4s %4s %s %s", num(u.LeftNum), num(u.RightNum), sign(u.Op), u.Text)
	}
	line("")
	line("## unified text (3 lines of context)")
	b.WriteString(md.Diff.UnifiedText(3))
	return b.String()
}

func sideBySide(r Row) string {
	return fmt.Sprintf("%4s %-1s %-50s | %4s %s", num(r.Left.Num), sign(r.Op), r.Left.Text, num(r.Right.Num), r.Right.Text)
}

// num formats a line number, 0 as an empty cell.
func num(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

func sign(op Op) string {
	switch op {
	case Insert:
		return "+"
	case Delete:
		return "-"
	case Change:
		return "~"
	}
	return ""
}
