// Package promcheck evaluates a promotion check (envconfig.Check) against
// a Prometheus-compatible HTTP API: the query's placeholders filled in as
// escaped string-literal contents (Render), the range query bounded in
// time, bytes, series and samples, every sample held against the
// threshold, and results cached per minute.
package promcheck

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/hanzoai/deploy-web/envconfig"
)

// Vars are the values of a check's placeholders.
type Vars struct {
	App, Namespace, Environment, Version string
}

func (v Vars) lookup(name string) (string, bool) {
	switch name {
	case "app":
		return v.App, true
	case "namespace":
		return v.Namespace, true
	case "environment":
		return v.Environment, true
	case "version":
		return v.Version, true
	}
	return "", false
}

// RenderError is a query that cannot be rendered; its text is public.
type RenderError struct{ Message string }

func (e *RenderError) Error() string { return e.Message }

// Render is query q with its placeholders replaced by v's values, each
// escaped for the string literal it stands in (Escape; after =~ or !~
// the value is also quoted as a regular expression, so it matches only
// itself). A placeholder outside a "..." or '...' literal, an unknown
// one, or a value that is not UTF-8 is an error: a value never becomes
// query syntax.
func Render(q string, v Vars) (string, error) {
	var b strings.Builder
	err := envconfig.ScanQuery(q, func(name string, lit envconfig.Literal) error {
		val, known := v.lookup(name)
		switch {
		case !known:
			return &RenderError{fmt.Sprintf("unknown placeholder {{%s}}", name)}
		case lit.Quote == 0:
			return &RenderError{fmt.Sprintf("{{%s}} outside a string literal", name)}
		case !utf8.ValidString(val):
			return &RenderError{fmt.Sprintf("the value of {{%s}} is not UTF-8", name)}
		}
		if lit.Regex {
			val = regexp.QuoteMeta(val)
		}
		b.WriteString(Escape(val, lit.Quote))
		return nil
	}, func(s string) { b.WriteString(s) })
	if err != nil {
		if _, ok := err.(*RenderError); ok {
			return "", err
		}
		return "", &RenderError{"the query: " + err.Error()}
	}
	return b.String(), nil
}

// Escape is s as the contents of a PromQL string literal opened by quote
// (a double or single quote): the backslash and that quote escaped, and every control
// character as \xNN (PromQL's escapes are Go's), so the literal ends only
// where the query's own quote ends it.
func Escape(s string, quote byte) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == quote:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
