package handlers

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/a-h/templ"
)

// highlightYAML renders YAML as HTML: one line per row with a linkable line
// number (#L1, #L2, ...) and the tokens in CSS classes (nt key, p
// punctuation, s quoted string, l plain scalar, m number, kc boolean and
// null, c comment; the stylesheet holds the colours, no inline styles, so
// the CSP stays strict). Every byte of src is escaped and shown: the text of
// the output is src, whatever it holds. It reads the YAML deploy-web prints
// (diffrender.YAML) line by line, with block scalars (| and >) as text; a
// construct it does not know keeps its text with fewer colours.
//
// It replaced chroma, whose lexers and styles are all parsed when the
// binary starts (about 9 MB of resident memory for the one YAML lexer used).
func highlightYAML(src string) templ.Component {
	return templ.Raw(renderYAML(src))
}

// renderYAML is highlightYAML's HTML.
func renderYAML(src string) string {
	lines := strings.Split(src, "\n")
	if len(lines) > 1 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // the final newline ends the last line
	}
	width := len(strconv.Itoa(len(lines)))
	var b strings.Builder
	b.Grow(2*len(src) + 140*len(lines))
	b.WriteString(`<pre class="chroma"><code>`)
	block := -1 // inside a block scalar: the indentation of its key; -1 outside
	var num [20]byte
	for i, line := range lines {
		n := strconv.AppendInt(num[:0], int64(i+1), 10)
		b.WriteString(`<span class="line"><span class="ln" id="L`)
		b.Write(n)
		b.WriteString(`"><a class="lnlinks" href="#L`)
		b.Write(n)
		b.WriteString(`">`)
		for range width - len(n) {
			b.WriteByte(' ')
		}
		b.Write(n)
		b.WriteString(`</a></span><span class="cl">`)
		block = yamlLine(&b, line, block)
		b.WriteString("\n</span></span>")
	}
	b.WriteString(`</code></pre>`)
	return b.String()
}

// yamlLine writes one line's tokens and returns the block-scalar state for
// the next line.
func yamlLine(b *strings.Builder, line string, block int) int {
	indent := len(line) - len(strings.TrimLeft(line, " "))
	rest := line[indent:]
	if block >= 0 {
		if strings.TrimSpace(line) == "" || indent > block {
			escapeTo(b, line)
			return block
		}
		block = -1
	}
	b.WriteString(line[:indent])
	if strings.HasPrefix(rest, "#") {
		span(b, "c", rest)
		return -1
	}
	col, dash := indent, -1
	// Sequence entries: "- ", "- - ", or a lone "-".
	for rest == "-" || strings.HasPrefix(rest, "- ") {
		dash = col
		span(b, "p", "-")
		rest = rest[1:]
		sp := len(rest) - len(strings.TrimLeft(rest, " "))
		b.WriteString(rest[:sp])
		rest = rest[sp:]
		col += 1 + sp
	}
	if k := yamlKeyEnd(rest); k > 0 {
		span(b, "nt", rest[:k])
		span(b, "p", ":")
		rest = rest[k+1:]
		sp := len(rest) - len(strings.TrimLeft(rest, " "))
		b.WriteString(rest[:sp])
		rest = rest[sp:]
		if isBlockHeader(rest) {
			span(b, "p", rest)
			return col
		}
	} else if dash >= 0 && isBlockHeader(rest) {
		// "- |": a block scalar as a sequence entry, indented past its dash.
		span(b, "p", rest)
		return dash
	}
	yamlValue(b, rest)
	return -1
}

// blockIndicator is a block scalar's header: | or >, a chomping indicator
// and an indentation indicator in either order, an optional comment.
var blockIndicator = regexp.MustCompile(`^[|>][-+]?[1-9]?[-+]?( +#.*)?$`)

func isBlockHeader(s string) bool {
	return s != "" && (s[0] == '|' || s[0] == '>') && blockIndicator.MatchString(s)
}

// yamlKeyEnd returns the index of the colon ending a mapping key at the
// start of s ("key: value", "key:", `"quoted key": value`), or -1.
func yamlKeyEnd(s string) int {
	if s == "" {
		return -1
	}
	if q := s[0]; q == '"' || q == '\'' {
		end := quotedEnd(s)
		if end > 0 && end < len(s) && s[end] == ':' && (end+1 == len(s) || s[end+1] == ' ') {
			return end
		}
		return -1
	}
	if strings.ContainsRune("[{#&*!|>%@`", rune(s[0])) {
		return -1
	}
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == ':' && (i+1 == len(s) || s[i+1] == ' '):
			if i == 0 {
				return -1
			}
			return i
		case s[i] == '#' && i > 0 && s[i-1] == ' ':
			return -1 // a comment before any colon
		}
	}
	return -1
}

// quotedEnd returns the index after the closing quote of the quoted scalar
// at the start of s, or -1 when it does not close on this line.
func quotedEnd(s string) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case q == '\'' && s[i] == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i++
		case s[i] == q:
			return i + 1
		}
	}
	return -1
}

// yamlValue writes a scalar (and a trailing comment).
func yamlValue(b *strings.Builder, s string) {
	if s == "" {
		return
	}
	if s[0] == '"' || s[0] == '\'' {
		end := quotedEnd(s)
		if end < 0 {
			span(b, "s", s) // continues on the next line
			return
		}
		span(b, "s", s[:end])
		yamlTail(b, s[end:])
		return
	}
	val, comment := s, ""
	if i := strings.Index(s, " #"); i >= 0 {
		val, comment = s[:i], s[i:]
	}
	trimmed := strings.TrimRight(val, " ")
	span(b, scalarClass(trimmed), trimmed)
	b.WriteString(val[len(trimmed):])
	yamlTail(b, comment)
}

// yamlTail writes what follows a scalar: spaces and a comment, or text.
func yamlTail(b *strings.Builder, s string) {
	sp := len(s) - len(strings.TrimLeft(s, " "))
	b.WriteString(s[:sp])
	if s = s[sp:]; s == "" {
		return
	}
	if s[0] == '#' {
		span(b, "c", s)
		return
	}
	escapeTo(b, s)
}

var yamlNumber = regexp.MustCompile(`^[-+]?(\.inf|\.Inf|\.INF|\.nan|\.NaN|\.NAN|0x[0-9a-fA-F]+|0o[0-7]+|[0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)?|\.[0-9]+([eE][-+]?[0-9]+)?)$`)

// scalarClass is the class of a plain scalar.
func scalarClass(s string) string {
	switch s {
	case "":
		return "l"
	case "true", "false", "True", "False", "TRUE", "FALSE", "null", "Null", "NULL", "~":
		return "kc"
	}
	if c := s[0]; (c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.') && yamlNumber.MatchString(s) {
		return "m"
	}
	return "l"
}

// span writes text, escaped, in a span of class.
func span(b *strings.Builder, class, text string) {
	if text == "" {
		return
	}
	b.WriteString(`<span class="`)
	b.WriteString(class)
	b.WriteString(`">`)
	escapeTo(b, text)
	b.WriteString(`</span>`)
}

// htmlEscaper escapes as html.EscapeString does.
var htmlEscaper = strings.NewReplacer(`&`, "&amp;", `'`, "&#39;", `<`, "&lt;", `>`, "&gt;", `"`, "&#34;")

// escapeTo writes s escaped for HTML text and attribute values.
func escapeTo(b *strings.Builder, s string) {
	htmlEscaper.WriteString(b, s)
}
