package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRepositoryDocs checks the repository's own Markdown: README.md,
// CONTRIBUTING.md, BENCHMARKS.md and docs/.
func TestRepositoryDocs(t *testing.T) {
	root := repoRoot(t)
	problems, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	// The check must have seen the pages it is meant to guard.
	for _, f := range []string{"README.md", "CONTRIBUTING.md", "BENCHMARKS.md", "docs/plan-and-apply.md"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
}

func TestCheck(t *testing.T) {
	longReadme := strings.Repeat("line\n", MaxReadmeLines)
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{
			name: "links that hold",
			files: map[string]string{
				"README.md": "# Title\n\n![shot](docs/images/a.png)\nSee [docs](docs/a.md#the-report), [self](#title),\n[a folder](docs/) and [a root path](/docs/a.md).\n" +
					"[Spans\nlines](docs/a.md#second-heading-1) and [web](https://example.com/x.md#nothing), [mail](mailto:a@b.c).\n\n[ref]: docs/a.md\n<img src=\"docs/images/a.png\" width=\"600\">\n",
				"docs/a.md":         "# A\n\n## The report\n\n## Second heading\n\n## Second heading\n\nBack to the [README](../README.md#title).\n",
				"docs/images/a.png": "png",
			},
		},
		{
			name: "a missing file",
			files: map[string]string{
				"README.md": "# T\n\nSee [gone](docs/gone.md).\n",
			},
			want: []string{`README.md:3: link "docs/gone.md": docs/gone.md does not exist: fix the path or restore the file`},
		},
		{
			name: "a missing image",
			files: map[string]string{
				"docs/a.md": "# A\n\n![the fleet](images/fleet.png)\n",
			},
			want: []string{`docs/a.md:3: link "images/fleet.png": docs/images/fleet.png does not exist: fix the path or restore the file`},
		},
		{
			name: "an anchor the target lacks",
			files: map[string]string{
				"README.md": "# T\n\nSee [it](docs/a.md#security).\n",
				"docs/a.md": "# A\n\n## Safety\n",
			},
			want: []string{`README.md:3: link "docs/a.md#security": docs/a.md has no heading with the id "security": link one of its headings (GitHub ids: lower case, punctuation dropped, spaces as -)`},
		},
		{
			name: "an anchor of its own file that is missing",
			files: map[string]string{
				"CONTRIBUTING.md": "# C\n\n## Naming\n\nSee [below](#namings).\n",
			},
			want: []string{`CONTRIBUTING.md:5: link "#namings": CONTRIBUTING.md has no heading with the id "namings": link one of its headings (GitHub ids: lower case, punctuation dropped, spaces as -)`},
		},
		{
			name: "a heading inside a code block is no anchor",
			files: map[string]string{
				"README.md": "# T\n\n```yaml\n# clusters.yaml\n```\n\n[x](#clusters-yaml) [y](#clustersyaml)\n",
			},
			want: []string{
				`README.md:7: link "#clusters-yaml": README.md has no heading with the id "clusters-yaml": link one of its headings (GitHub ids: lower case, punctuation dropped, spaces as -)`,
				`README.md:7: link "#clustersyaml": README.md has no heading with the id "clustersyaml": link one of its headings (GitHub ids: lower case, punctuation dropped, spaces as -)`,
			},
		},
		{
			name: "a link out of the repository",
			files: map[string]string{
				"docs/a.md": "# A\n\n[health](../../shared/HEALTH.md)\n",
			},
			want: []string{`docs/a.md:3: link "../../shared/HEALTH.md" leaves the repository (../shared/HEALTH.md): link a file inside it, or a URL`},
		},
		{
			name: "a broken reference definition",
			files: map[string]string{
				"README.md": "# T\n\nSee [the docs][d].\n\n[d]: docs/nothing.md\n",
			},
			want: []string{`README.md:5: link "docs/nothing.md": docs/nothing.md does not exist: fix the path or restore the file`},
		},
		{
			name: "links in code are not links",
			files: map[string]string{
				"README.md": "# T\n\n`[x](gone.md)` and\n\n```\n[y](gone.md)\n```\n",
			},
		},
		{
			name: "a README of 250 lines",
			files: map[string]string{
				"README.md": longReadme,
			},
			want: []string{`README.md:250: the README has 250 lines, want fewer than 250: move reference text into docs/ and link it`},
		},
		{
			name: "a README of 249 lines",
			files: map[string]string{
				"README.md": strings.Repeat("line\n", MaxReadmeLines-1),
			},
		},
		{
			name: "Markdown in skipped folders is not read",
			files: map[string]string{
				"bin/x/README.md":         "[gone](gone.md)\n",
				"artifacts/e2e/notes.md":  "[gone](gone.md)\n",
				"pkg/testdata/fixture.md": "[gone](gone.md)\n",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for name, content := range tt.files {
				p := filepath.Join(root, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			problems, err := Check(root)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range problems {
				got = append(got, p.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Check problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ heading, want string }{
		{"The report", "the-report"},
		{"The environment config (`--config`, default `deploy.yaml`)", "the-environment-config---config-default-deployyaml"},
		{"Configuration (`deploy-web serve`)", "configuration-deploy-web-serve"},
		{"10,000 Apps, converging (session of 2026-12-01 evening)", "10000-apps-converging-session-of-2026-12-01-evening"},
		{"Real cluster (make bench-cluster)", "real-cluster-make-bench-cluster"},
		{"Rows' JSON cached, changes merged (issue 17, 10,000 Apps)", "rows-json-cached-changes-merged-issue-17-10000-apps"},
		{"snake_case and Ünïcode", "snake_case-and-ünïcode"},
		{"A [link](x.md) in it", "a-link-in-it"},
		{"Health, sync and drift", "health-sync-and-drift"},
	}
	for _, tt := range tests {
		if got := Slug(tt.heading); got != tt.want {
			t.Errorf("Slug(%q) = %q, want %q", tt.heading, got, tt.want)
		}
	}
}

func TestHeadingIDs(t *testing.T) {
	md := "# Title #\n\n## Two\n\n## Two\n\n```\n## Not a heading\n```\n\n#not-a-heading\n    ### Indented code is not matched either\n### Two\n"
	want := []string{"title", "two", "two-1", "two-2"}
	if diff := cmp.Diff(want, HeadingIDs([]byte(md))); diff != "" {
		t.Errorf("HeadingIDs (-want +got):\n%s", diff)
	}
}

func TestLinks(t *testing.T) {
	md := "a [x](one.md \"title\") b ![i](<two words.png>)\n`[c](code.md)`\n[multi\nline](three.md#x)\n\n[r]: four.md\n<img src=\"five.png\">\n"
	want := []Link{{1, "one.md"}, {1, "two words.png"}, {3, "three.md#x"}, {6, "four.md"}, {7, "five.png"}}
	if diff := cmp.Diff(want, Links([]byte(md))); diff != "" {
		t.Errorf("Links (-want +got):\n%s", diff)
	}
}
