// Package doccheck checks the repository's Markdown: every relative link
// and image points at a file that exists inside the repository, every
// #anchor names a heading of its target (GitHub's heading ids), and the
// README stays a newcomer's page (under MaxReadmeLines lines). Its test
// runs it over the repository in `make test`, so a page moved or a
// heading renamed without its links fails the build.
package doccheck

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// MaxReadmeLines is the README's bound: it must stay under it.
const MaxReadmeLines = 250

// skipDir reports whether a folder is never searched for Markdown: git's,
// the untracked output of builds, tests and the demo (.gitignore), and
// test data.
func skipDir(name string) bool {
	switch name {
	case ".git", "bin", "artifacts", "reports", ".demo", "testdata", "node_modules":
		return true
	}
	return false
}

// Problem is one broken link, or a README too long.
type Problem struct {
	File string // slash path relative to the root
	Line int
	Msg  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg) }

// Link is one link or image destination of a Markdown file.
type Link struct {
	Line   int
	Target string
}

// Check reads every *.md file under root (skipping skipDirs) and returns
// the problems found, sorted by file and line.
func Check(root string) ([]Problem, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.EqualFold(filepath.Ext(p), ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("doccheck: walk %s: %w", root, err)
	}
	sort.Strings(files)
	c := checker{root: root, anchors: map[string]map[string]bool{}}
	var problems []Problem
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return nil, fmt.Errorf("doccheck: %w", err)
		}
		if f == "README.md" {
			if n := countLines(b); n >= MaxReadmeLines {
				problems = append(problems, Problem{f, n, fmt.Sprintf("the README has %d lines, want fewer than %d: move reference text into docs/ and link it", n, MaxReadmeLines)})
			}
		}
		for _, l := range Links(b) {
			if msg := c.check(f, l.Target); msg != "" {
				problems = append(problems, Problem{f, l.Line, msg})
			}
		}
	}
	return problems, nil
}

// countLines counts the lines of b (a last line without a newline counts).
func countLines(b []byte) int {
	n := strings.Count(string(b), "\n")
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

type checker struct {
	root    string
	anchors map[string]map[string]bool // slash path -> heading ids
}

// check returns what is wrong with target, a link of file (both relative
// to the root), or "" when nothing is or the link leaves the repository
// on purpose (a URL with a scheme, mailto:, //host).
func (c *checker) check(file, target string) string {
	if target == "" {
		return "empty link target"
	}
	if strings.HasPrefix(target, "//") {
		return ""
	}
	if u, err := url.Parse(target); err == nil && u.Scheme != "" {
		return ""
	}
	p, frag, _ := strings.Cut(target, "#")
	p, err := url.PathUnescape(p)
	if err != nil {
		return fmt.Sprintf("link %q: bad escape in the path", target)
	}
	var dest string
	switch {
	case p == "":
		dest = file
	case strings.HasPrefix(p, "/"): // GitHub resolves these from the repository root
		dest = path.Clean(strings.TrimPrefix(p, "/"))
	default:
		dest = path.Join(path.Dir(file), p)
	}
	if dest == ".." || strings.HasPrefix(dest, "../") {
		return fmt.Sprintf("link %q leaves the repository (%s): link a file inside it, or a URL", target, dest)
	}
	if dest == "" {
		dest = "."
	}
	if _, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(dest))); err != nil {
		return fmt.Sprintf("link %q: %s does not exist: fix the path or restore the file", target, dest)
	}
	if frag == "" || !strings.EqualFold(path.Ext(dest), ".md") {
		return ""
	}
	ids, err := c.headingIDs(dest)
	if err != nil {
		return fmt.Sprintf("link %q: %v", target, err)
	}
	id, err := url.PathUnescape(frag)
	if err != nil {
		id = frag
	}
	if !ids[id] {
		return fmt.Sprintf("link %q: %s has no heading with the id %q: link one of its headings (GitHub ids: lower case, punctuation dropped, spaces as -)", target, dest, id)
	}
	return ""
}

func (c *checker) headingIDs(file string) (map[string]bool, error) {
	if ids, ok := c.anchors[file]; ok {
		return ids, nil
	}
	b, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(file)))
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, id := range HeadingIDs(b) {
		ids[id] = true
	}
	c.anchors[file] = ids
	return ids, nil
}

var (
	fenceRE   = regexp.MustCompile("^ {0,3}(```|~~~)")
	headingRE = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	// inlineRE is a link or image: [text](dest "title"); the text may hold
	// one level of brackets and span lines.
	inlineRE = regexp.MustCompile(`!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>\n]*>|[^\s()]+)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)`)
	// refDefRE is a reference definition: [id]: dest
	refDefRE = regexp.MustCompile(`(?m)^ {0,3}\[[^\]\n]+\]:[ \t]*(<[^>\n]*>|\S+)`)
	// htmlRE is an HTML src or href attribute (an <img> for a sized picture).
	htmlRE = regexp.MustCompile(`<(?:img|a|source)\b[^>]*?\b(?:src|href|srcset)\s*=\s*"([^"]*)"`)
	// linkTextRE is a link in a heading, whose id keeps only the text.
	linkTextRE = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// prose returns b with fenced code blocks and inline code spans blanked
// (newlines kept, so offsets keep their line), leaving the text links are
// read from.
func prose(b []byte) []byte {
	out := withoutFences(b)
	// Code spans: a run of n backticks up to the next run of exactly n.
	for i := 0; i < len(out); {
		if out[i] != '`' {
			i++
			continue
		}
		n := run(out, i)
		end := -1
		for j := i + n; j < len(out); {
			if out[j] != '`' {
				j++
				continue
			}
			m := run(out, j)
			if m == n {
				end = j + m
				break
			}
			j += m
		}
		if end < 0 {
			i += n
			continue
		}
		blank(out[i:end])
		i = end
	}
	return out
}

// withoutFences returns a copy of b with its fenced code blocks blanked.
func withoutFences(b []byte) []byte {
	out := []byte(string(b))
	lines := strings.SplitAfter(string(b), "\n")
	off, fence := 0, ""
	for _, l := range lines {
		m := fenceRE.FindStringSubmatch(l)
		switch {
		case fence == "" && m != nil:
			fence = m[1]
			blank(out[off : off+len(l)])
		case fence != "":
			if m != nil && m[1] == fence {
				fence = ""
			}
			blank(out[off : off+len(l)])
		}
		off += len(l)
	}
	return out
}

func run(b []byte, i int) int {
	n := 0
	for i+n < len(b) && b[i+n] == '`' {
		n++
	}
	return n
}

// blank replaces every byte but newlines with a space.
func blank(b []byte) {
	for i := range b {
		if b[i] != '\n' {
			b[i] = ' '
		}
	}
}

// Links returns the link and image destinations of a Markdown file, in
// order: inline links and images, reference definitions and the src/href
// of HTML tags, outside code blocks and code spans.
func Links(b []byte) []Link {
	text := prose(b)
	var links []Link
	add := func(re *regexp.Regexp) {
		for _, m := range re.FindAllSubmatchIndex(text, -1) {
			t := strings.TrimSuffix(strings.TrimPrefix(string(text[m[2]:m[3]]), "<"), ">")
			links = append(links, Link{Line: 1 + strings.Count(string(text[:m[0]]), "\n"), Target: t})
		}
	}
	add(inlineRE)
	add(refDefRE)
	add(htmlRE)
	sort.SliceStable(links, func(i, j int) bool { return links[i].Line < links[j].Line })
	return links
}

// HeadingIDs returns the ids GitHub gives the ATX headings of a Markdown
// file (outside code blocks), in order: Slug of the heading's text, a
// repeated id suffixed -1, -2, ...
func HeadingIDs(b []byte) []string {
	var ids []string
	seen := map[string]int{}
	for _, l := range strings.Split(string(withoutFences(b)), "\n") {
		m := headingRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		id := Slug(m[2])
		if n, ok := seen[id]; ok {
			seen[id] = n + 1
			id = fmt.Sprintf("%s-%d", id, n+1)
		} else {
			seen[id] = 0
		}
		ids = append(ids, id)
	}
	return ids
}

// Slug is GitHub's id of a heading's text: links reduced to their text,
// lower case, every character but letters, digits, marks, '-', '_' and
// spaces dropped, each space a '-'.
func Slug(heading string) string {
	heading = linkTextRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
