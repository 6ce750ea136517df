package revdiff

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hostile is a set of manifests whose names and values try to break out
// of the Markdown: HTML, a table pipe, a link and a code fence.
func hostile() (from, to []*unstructured.Unstructured) {
	cm := func(v string) *unstructured.Unstructured {
		u := obj("v1", "ConfigMap", "web", "x|</summary><script>alert(1)</script>", nil)
		u.Object["data"] = map[string]any{"file": v}
		return u
	}
	from = []*unstructured.Unstructured{cm("a\n```\n</details>\n"), secret("s<b>*", "sha256:aa", nil)}
	to = []*unstructured.Unstructured{cm("b\n```\n</details>\n"), secret("s<b>*", "sha256:bb", nil),
		obj("evil.io/v1", "W[x](javascript:alert(1))", "", "n_*_", nil)}
	return from, to
}

// unescapedLink is a "](" whose bracket no backslash escapes.
var unescapedLink = regexp.MustCompile(`(^|[^\\])\]\(`)

func TestMarkdownGolden(t *testing.T) {
	from, to := hostile()
	res, err := Compare(from, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := NewReport("prod<img src=x>", "live", "ref:feature/x", "0123456789abcdef0123456789abcdef01234567", res).Markdown()
	golden := filepath.Join("testdata", "hostile.md")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("Markdown() =\n%s\nwant\n%s", got, want)
	}
	// Outside the diff blocks (where text is code), nothing is markup.
	for _, line := range strings.Split(got, "\n") {
		if !strings.HasPrefix(line, "<details>") && !strings.HasPrefix(line, "|") && !strings.HasPrefix(line, "###") {
			continue
		}
		for _, bad := range []string{"<script>", "<img", "</summary><"} {
			if strings.Contains(line, bad) {
				t.Errorf("Markdown() line %q holds %q unescaped", line, bad)
			}
		}
		if unescapedLink.MatchString(line) {
			t.Errorf("Markdown() line %q holds an unescaped link", line)
		}
	}
	// The diff's own ``` line cannot close its fence.
	if !strings.Contains(got, "````diff\n") {
		t.Errorf("Markdown() fence is not longer than the diff's backtick run:\n%s", got)
	}
}

func TestMarkdownNoChanges(t *testing.T) {
	res, err := Compare([]*unstructured.Unstructured{deploy("a", 1, "x")}, []*unstructured.Unstructured{deploy("a", 1, "x")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := NewReport("prod", "live", "ref:main", "", res).Markdown()
	if !strings.Contains(got, "No changes.") || strings.Contains(got, "<details>") {
		t.Errorf("Markdown() = %q, want No changes and no section", got)
	}
}

func TestReportJSON(t *testing.T) {
	from, to := hostile()
	res, err := Compare(from, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Changes   bool
		Counts    Counts
		Resources []struct {
			Kind, Name, Status, Summary, Diff string
			Secret                            bool
		}
	}
	if err := json.Unmarshal([]byte(mustJSON(t, NewReport("prod", "live", "ref:x", "", res))), &back); err != nil {
		t.Fatal(err)
	}
	if !back.Changes || back.Counts != (Counts{Added: 1, Changed: 2}) || len(back.Resources) != 3 {
		t.Fatalf("JSON = %+v, want changes, 1 added, 2 changed", back)
	}
	for _, r := range back.Resources {
		if r.Secret && (r.Summary != "changed (hash)" || r.Diff != "") {
			t.Errorf("JSON secret = %+v, want changed (hash) without a diff", r)
		}
		if r.Kind == "ConfigMap" && !strings.Contains(r.Diff, "+    b\n") {
			t.Errorf("JSON configmap diff = %q, want +b", r.Diff)
		}
	}
}
