package benchrun

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSectionReplace: a section is replaced in place (the text around it
// kept), or appended at the end under its heading, or with none.
func TestSectionReplace(t *testing.T) {
	s := Section{Start: "<!-- b:start -->", End: "<!-- b:end -->", Heading: "## B (make b)"}
	text := s.Start + "\nnew\n" + s.End + "\n"
	tests := []struct {
		name    string
		heading string
		file    string
		want    string
	}{
		{"appends under the heading", s.Heading, "# Benchmarks\n\ntext\n", "# Benchmarks\n\ntext\n\n## B (make b)\n\n" + text},
		{"appends with no heading", "", "# Benchmarks\n\ntext\n\n", "# Benchmarks\n\ntext\n\n" + text},
		{"replaces the section", s.Heading, "a\n" + s.Start + "\nold\n" + s.End + "\nb\n", "a\n" + s.Start + "\nnew\n" + s.End + "\nb\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "B.md")
			if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			sec := s
			sec.Heading = tt.heading
			if err := sec.Replace(path, text); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(path)
			if string(b) != tt.want {
				t.Errorf("Replace: file = %q, want %q", b, tt.want)
			}
		})
	}
	if err := s.Replace(filepath.Join(t.TempDir(), "missing.md"), text); err == nil {
		t.Errorf("Replace(a missing file) = nil, want an error")
	}
}

// TestWorkDir: a given folder is used as it is; none gives a temporary
// one that cleanup removes.
func TestWorkDir(t *testing.T) {
	given := t.TempDir()
	d, cleanup, err := WorkDir(given, "x-")
	if err != nil || d != given {
		t.Fatalf("WorkDir(%q) = %q, %v; want it", given, d, err)
	}
	cleanup()
	if _, err := os.Stat(given); err != nil {
		t.Errorf("cleanup of a given folder removed it: %v", err)
	}
	d, cleanup, err = WorkDir("", "benchrun-test-")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d); err != nil {
		t.Fatalf("WorkDir(\"\") = %q, not a folder: %v", d, err)
	}
	cleanup()
	if _, err := os.Stat(d); !os.IsNotExist(err) {
		t.Errorf("cleanup left %q: %v", d, err)
	}
}
