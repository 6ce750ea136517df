package handlers

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/a-h/templ"
	"github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
)

// highlightYAML renders YAML as HTML with CSS classes (the stylesheet holds
// the colours; no inline styles, so the CSP stays strict). chroma escapes
// the text it highlights.
func highlightYAML(src string) (templ.Component, error) {
	lexer := lexers.Get("yaml")
	if lexer == nil {
		return nil, fmt.Errorf("handlers: no yaml lexer")
	}
	it, err := lexer.Tokenise(nil, src)
	if err != nil {
		return nil, fmt.Errorf("handlers: highlight: %w", err)
	}
	var buf bytes.Buffer
	f := html.New(html.WithClasses(true), html.WithLineNumbers(true), html.WithLinkableLineNumbers(true, "L"), html.TabWidth(2))
	if err := f.Format(&buf, styles.Fallback, it); err != nil {
		return nil, fmt.Errorf("handlers: highlight: %w", err)
	}
	out := buf.String()
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, out)
		return err
	}), nil
}
