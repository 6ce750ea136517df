// Package markdown renders Markdown someone else wrote (commit messages,
// as a record's release notes) into HTML that is safe to put in a page:
// CommonMark with bare URLs linked, through goldmark, with no raw HTML
// (dropped, never passed through), no images (their text instead: an
// image is a request to an address the author chose), links only to
// http, https and mailto addresses (any other link becomes its text) and
// every link rel="noopener nofollow". Input is bounded (MaxBytes).
package markdown

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// MaxBytes bounds the Markdown Render reads (one commit message); the
// rest is cut (at a line end when one is near) and Render says so.
const MaxBytes = 16 << 10

// maxNesting bounds the container markers (quote and list marks, the
// spaces between them) at the start of a line: goldmark's time grows with
// the square of the nesting, so a line of thousands of ">" keeps its
// last maxNesting bytes of them.
const maxNesting = 32

// relLink is every link's rel.
const relLink = "noopener nofollow"

// Renderer renders Markdown safely; build it once (New) and share it: it
// holds no state between calls.
type Renderer struct{ md goldmark.Markdown }

// New returns a Renderer.
func New() *Renderer {
	return &Renderer{md: goldmark.New(
		// No html.WithUnsafe: raw HTML is left out, and goldmark drops
		// the destination of javascript:, vbscript:, file: and data:
		// links; the transformer below narrows links further.
		goldmark.WithExtensions(extension.Linkify, extension.Strikethrough),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(safeLinks{}, 1000))),
	)}
}

// Render returns src as HTML safe to embed; cut reports that src was
// longer than MaxBytes and only its start was rendered.
func (r *Renderer) Render(src string) (html string, cut bool, err error) {
	if len(src) > MaxBytes {
		src, cut = src[:MaxBytes], true
		if i := strings.LastIndexByte(src, '\n'); i > MaxBytes-1024 {
			src = src[:i]
		}
	}
	var buf bytes.Buffer
	if err := r.md.Convert(flatten([]byte(src)), &buf); err != nil {
		return "", cut, fmt.Errorf("markdown: render: %w", err)
	}
	return buf.String(), cut, nil
}

// flatten cuts each line's run of leading container markers to its last
// maxNesting bytes.
func flatten(src []byte) []byte {
	lines := bytes.SplitAfter(src, []byte("\n"))
	changed := false
	for i, l := range lines {
		n := 0
		for n < len(l) && strings.IndexByte("> \t-*+", l[n]) >= 0 {
			n++
		}
		if n > maxNesting {
			lines[i], changed = l[n-maxNesting:], true
		}
	}
	if !changed {
		return src
	}
	return bytes.Join(lines, nil)
}

// AllowedURL reports whether a link may point at u: an absolute http or
// https URL with a host, or a mailto address.
func AllowedURL(u string) bool {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil {
		return false
	}
	switch strings.ToLower(p.Scheme) {
	case "http", "https":
		return p.Host != ""
	case "mailto":
		return p.Opaque != ""
	}
	return false
}

// safeLinks replaces images and links to anything but AllowedURL by
// their text, and marks the links left rel="noopener nofollow".
type safeLinks struct{}

func (safeLinks) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	var drop []ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch l := n.(type) {
		case *ast.Image:
			drop = append(drop, l)
			return ast.WalkSkipChildren, nil
		case *ast.Link:
			if !AllowedURL(string(l.Destination)) {
				drop = append(drop, l)
				return ast.WalkContinue, nil
			}
			l.SetAttributeString("rel", []byte(relLink))
		case *ast.AutoLink:
			u := string(l.URL(src))
			if l.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(u), "mailto:") {
				u = "mailto:" + u
			}
			if !AllowedURL(u) {
				drop = append(drop, l)
				return ast.WalkContinue, nil
			}
			l.SetAttributeString("rel", []byte(relLink))
		}
		return ast.WalkContinue, nil
	})
	for _, n := range drop {
		unwrap(n, src)
	}
}

// unwrap puts n's children (a link's text; an image's alt text) in its
// place; an autolink becomes its label as text.
func unwrap(n ast.Node, src []byte) {
	parent := n.Parent()
	if parent == nil {
		return
	}
	if a, ok := n.(*ast.AutoLink); ok {
		parent.ReplaceChild(parent, n, ast.NewString(a.Label(src)))
		return
	}
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		parent.InsertBefore(parent, n, c)
		c = next
	}
	parent.RemoveChild(parent, n)
}
