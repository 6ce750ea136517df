// Package search is the fleet-wide search of cached objects: the query
// language (Parse), the matcher (Query.Match) and the walk over every
// cluster's Apps that pages the results (Run). It is pure: the caches hand
// it their objects (kubeview keeps them per App), the handler decides who
// may see which App.
package search

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hanzoai/deploy-web/internal/scope"
)

// Bounds of a query: what a person types into a search box, never more.
const (
	// MaxQueryLen is the longest query accepted, in bytes.
	MaxQueryLen = 256
	// MaxTerms is the most terms (words and field:value pairs) of a query.
	MaxTerms = 8
	// maxGlobStars bounds the stars of a name glob.
	maxGlobStars = 4
)

// Error is a query the parser refuses; its text is safe to show (it quotes
// nothing but the field name the person typed, bounded).
type Error struct{ Public string }

func (e *Error) Error() string { return "search: " + e.Public }

// ErrEmpty is returned for a query with no terms.
var ErrEmpty = &Error{Public: "type a name, or terms such as kind:ConfigMap name:web-*"}

func errorf(format string, args ...any) error {
	return &Error{Public: fmt.Sprintf(format, args...)}
}

// IsError reports whether err is a query the parser refused (a 400).
func IsError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Fields of a term (field:value).
const (
	FieldKind      = "kind"
	FieldName      = "name"
	FieldNamespace = "ns"
	FieldCluster   = "cluster"
	FieldLabel     = "label"
	FieldImage     = "image"
)

// Query is a parsed search. Terms of one field are alternatives (any of
// them matches); fields and words must all match.
type Query struct {
	Kinds      []string
	Names      []Glob
	Namespaces []string
	Clusters   []string
	Labels     []Label
	Images     []string
	// Words are plain words: each is a substring of the object's name.
	Words []string

	// digest is what an App's Digest must hold to match (Parse).
	digest digestNeedles
}

// Label is a label:key=value term; a Value of "" with HasValue false
// (label:key) asks only for the key.
type Label struct {
	Key, Value string
	HasValue   bool
}

// Parse parses a query: whitespace-separated terms, each a plain word or
// field:value with field one of kind, name, ns, cluster, label, image.
// Matching is case-insensitive (Kubernetes names are lower case; kinds are
// compared without case). Control characters, an unknown field, an empty
// value, a query over MaxQueryLen bytes or over MaxTerms terms are refused
// with an *Error.
func Parse(s string) (Query, error) {
	var q Query
	if len(s) > MaxQueryLen {
		return q, errorf("the query is longer than %d characters", MaxQueryLen)
	}
	if !utf8.ValidString(s) {
		return q, errorf("the query is not valid UTF-8")
	}
	for _, r := range s {
		if unicode.IsControl(r) && !unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) {
			return q, errorf("the query has a control or format character")
		}
	}
	terms := strings.Fields(s)
	if len(terms) == 0 {
		return q, ErrEmpty
	}
	if len(terms) > MaxTerms {
		return q, errorf("at most %d terms", MaxTerms)
	}
	for _, t := range terms {
		field, value, ok := strings.Cut(t, ":")
		if !ok {
			q.Words = append(q.Words, strings.ToLower(t))
			continue
		}
		field = strings.ToLower(field)
		if value == "" {
			return q, errorf("%s: needs a value", shown(field))
		}
		switch field {
		case FieldKind:
			q.Kinds = append(q.Kinds, value)
		case FieldName:
			g, err := ParseGlob(strings.ToLower(value))
			if err != nil {
				return q, err
			}
			q.Names = append(q.Names, g)
		case FieldNamespace:
			q.Namespaces = append(q.Namespaces, strings.ToLower(value))
		case FieldCluster:
			q.Clusters = append(q.Clusters, strings.ToLower(value))
		case FieldLabel:
			k, v, has := strings.Cut(value, "=")
			if k == "" {
				return q, errorf("label: needs a key (label:key=value or label:key)")
			}
			q.Labels = append(q.Labels, Label{Key: k, Value: v, HasValue: has})
		case FieldImage:
			q.Images = append(q.Images, strings.ToLower(value))
		default:
			return q, errorf("%s: is not a search term (use kind:, name:, ns:, cluster:, label:, image: or plain words)", shown(field))
		}
	}
	q.digest = q.needles()
	return q, nil
}

// shown bounds a field name quoted back in an error.
func shown(field string) string {
	if len(field) > 20 {
		return field[:20] + "…"
	}
	return field
}

// Glob is a name pattern: a prefix when it has no '*', else a glob whose
// '*' matches any run of bytes and which must match the whole name
// (scope.Match: the roles' selectors' matcher, linear, no regexp).
type Glob struct {
	Pattern string
	glob    bool
}

// ParseGlob parses a name pattern; at most maxGlobStars stars.
func ParseGlob(p string) (Glob, error) {
	if n := strings.Count(p, "*"); n > maxGlobStars {
		return Glob{}, errorf("name: at most %d '*' in a pattern", maxGlobStars)
	}
	return Glob{Pattern: p, glob: strings.Contains(p, "*")}, nil
}

// Match reports whether name matches the pattern.
func (g Glob) Match(name string) bool {
	if !g.glob {
		return strings.HasPrefix(name, g.Pattern)
	}
	return scope.Match(g.Pattern, name)
}
