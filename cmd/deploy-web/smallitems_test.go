package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/hanzoai/deploy-web/deployplan"
)

func TestCatalogLabel(t *testing.T) {
	for _, tt := range []struct{ mode, commit, want string }{
		{"version", "", "version mode"},
		{"", "", "version mode"},
		{"commit", "abc123", "commit abc123"},
	} {
		if got := catalogLabel(tt.mode, tt.commit); got != tt.want {
			t.Errorf("catalogLabel(%q, %q) = %q, want %q", tt.mode, tt.commit, got, tt.want)
		}
	}
}

func TestReportMarkdownMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	if err := writeMarkdown(&deployplan.Report{}, path); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(filepath.Dir(path), "r.md"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the report's .md mode = %v, %v; want 0600 as its .json", st.Mode().Perm(), err)
	}
}

func TestKeepArgsAuditNamespace(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{nil, nil},
		{[]string{"--audit-namespace", "ops"}, []string{"--audit-namespace=ops"}},
		{[]string{"--audit-namespace="}, []string{"--audit-namespace="}},
	} {
		fs := flag.NewFlagSet("apply", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		ca := cliAudit{stderr: io.Discard}
		ca.register(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		got := ca.keepArgs(fs)
		if len(got) != len(tt.want) || len(got) > 0 && got[0] != tt.want[0] {
			t.Errorf("keepArgs(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}
