// Package scope is the one definition of "where" shared by deploy freezes
// (package freeze) and roles (package roles): a [Target] (the cluster,
// environment, namespace and App an action touches) and a [Scope] (lists of
// name selectors per field) with the two ways to compare them.
//
// A selector is an exact name, or a pattern in which '*' matches any run of
// characters (including none): "prod", "prod-*", "*-canary", "*". No other
// character is special: '?', '[' and '\' are refused, so a selector never
// means more than it appears to. Matching is case-sensitive.
//
// An empty list in a Scope does not restrict that field. The two
// comparisons differ in what an empty field of the Target means, each
// failing closed in its own direction:
//
//   - [Scope.Covers] (roles: "is this action inside what the person was
//     granted?"): an empty target field is covered only by an unrestricted
//     list. A role scoped to environment prod does not cover an action
//     whose environment is unknown.
//   - [Scope.Touches] (freezes: "could this action touch something
//     frozen?"): an empty target field stands for "everything", so it
//     touches any list. An apply of a whole environment (App empty) is
//     refused by a freeze scoped to one of its Apps.
package scope

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// MaxSelectorBytes bounds one selector: a Kubernetes name is at most 253
// bytes, and nothing deploy-web names is longer.
const MaxSelectorBytes = 253

// MaxSelectors bounds the selectors of one Scope field.
const MaxSelectors = 100

// Target is where an action happens. A field left empty means the action
// is not confined to one value of it (an environment apply has no App); see
// the package doc for how each comparison reads that.
type Target struct {
	Cluster     string `json:"cluster,omitempty"`
	Environment string `json:"environment,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	App         string `json:"app,omitempty"`
}

// String renders t for messages: "cluster=a env=prod ns=shop app=web",
// leaving out empty fields ("anywhere" when all are empty).
func (t Target) String() string {
	var parts []string
	for _, f := range []struct{ k, v string }{{"cluster", t.Cluster}, {"env", t.Environment}, {"ns", t.Namespace}, {"app", t.App}} {
		if f.v != "" {
			parts = append(parts, f.k+"="+f.v)
		}
	}
	if len(parts) == 0 {
		return "anywhere"
	}
	return strings.Join(parts, " ")
}

// Scope restricts where something applies: each non-empty list is a set of
// selectors (see the package doc) one of which must match the target's
// field. The zero Scope restricts nothing.
type Scope struct {
	Clusters     []string `json:"clusters,omitempty"`
	Environments []string `json:"environments,omitempty"`
	Namespaces   []string `json:"namespaces,omitempty"`
	Apps         []string `json:"apps,omitempty"`
}

// IsZero reports whether s restricts nothing.
func (s Scope) IsZero() bool {
	return len(s.Clusters) == 0 && len(s.Environments) == 0 && len(s.Namespaces) == 0 && len(s.Apps) == 0
}

// fields pairs each list of s with the field of t it restricts and its key.
func (s Scope) fields(t Target) []scopeField {
	return []scopeField{
		{"clusters", s.Clusters, t.Cluster},
		{"environments", s.Environments, t.Environment},
		{"namespaces", s.Namespaces, t.Namespace},
		{"apps", s.Apps, t.App},
	}
}

type scopeField struct {
	key       string
	selectors []string
	value     string
}

// Validate checks every selector of s; path names s in errors
// ("bindings[2].scope.apps[0]: ..."), to which the caller adds its package
// prefix and file.
func (s Scope) Validate(path string) error {
	for _, f := range s.fields(Target{}) {
		if len(f.selectors) > MaxSelectors {
			return fmt.Errorf("%s.%s: %d selectors, at most %d: use a pattern with '*'", path, f.key, len(f.selectors), MaxSelectors)
		}
		for i, sel := range f.selectors {
			if err := ValidSelector(sel); err != nil {
				return fmt.Errorf("%s.%s[%d]: %w", path, f.key, i, err)
			}
		}
	}
	return nil
}

// Covers reports whether t lies wholly inside s: every restricted field of t
// is non-empty and matched by one of its selectors.
func (s Scope) Covers(t Target) bool {
	for _, f := range s.fields(t) {
		if len(f.selectors) == 0 {
			continue
		}
		if f.value == "" || !MatchAny(f.selectors, f.value) {
			return false
		}
	}
	return true
}

// Touches reports whether an action on t may touch something inside s:
// every restricted field of t is empty (everything) or matched by one of
// its selectors.
func (s Scope) Touches(t Target) bool {
	for _, f := range s.fields(t) {
		if len(f.selectors) == 0 || f.value == "" {
			continue
		}
		if !MatchAny(f.selectors, f.value) {
			return false
		}
	}
	return true
}

// String renders s for messages and pages: "env=prod,staging app=web-*",
// "everywhere" for the zero Scope.
func (s Scope) String() string {
	var parts []string
	for _, f := range []struct {
		k string
		v []string
	}{{"cluster", s.Clusters}, {"env", s.Environments}, {"ns", s.Namespaces}, {"app", s.Apps}} {
		if len(f.v) > 0 {
			parts = append(parts, f.k+"="+strings.Join(f.v, ","))
		}
	}
	if len(parts) == 0 {
		return "everywhere"
	}
	return strings.Join(parts, " ")
}

// ValidSelector reports what is wrong with one selector: empty, longer than
// MaxSelectorBytes, not UTF-8, with a space, control character or one of
// the refused pattern characters ('?', '[', ']', '\'), a format character
// (textfmt.Hidden: U+202E and friends), or a comma (a list written as one
// string).
func ValidSelector(sel string) error {
	switch {
	case sel == "":
		return fmt.Errorf("empty selector: write a name or a pattern such as %q", "prod-*")
	case len(sel) > MaxSelectorBytes:
		return fmt.Errorf("selector of %d bytes, at most %d", len(sel), MaxSelectorBytes)
	case !utf8.ValidString(sel):
		return fmt.Errorf("selector %q is not UTF-8", sel)
	}
	for _, r := range sel {
		switch {
		case unicode.IsSpace(r) || unicode.IsControl(r):
			return fmt.Errorf("selector %q has a space or control character", sel)
		case textfmt.Hidden(r):
			// A name matched byte for byte that would read otherwise
			// than it is written on a page or in a record (U+202E, a
			// zero-width character): refused, not cleaned.
			return fmt.Errorf("selector %q has a format character (%U): write the name as it reads", sel, r)
		case strings.ContainsRune(`?[]\`, r):
			return fmt.Errorf("selector %q: %q is not supported; only '*' is a wildcard", sel, r)
		case r == ',':
			return fmt.Errorf("selector %q has a comma: give each name as its own list item", sel)
		}
	}
	return nil
}

// MatchAny reports whether one of selectors matches name.
func MatchAny(selectors []string, name string) bool {
	for _, sel := range selectors {
		if Match(sel, name) {
			return true
		}
	}
	return false
}

// Match reports whether selector matches name: byte for byte, '*' matching
// any run of bytes. An empty selector or name never matches. It runs in
// O(len(selector)*len(name)) at worst (no backtracking blow-up).
func Match(selector, name string) bool {
	if selector == "" || name == "" {
		return false
	}
	// Greedy match with one backtrack point: the last '*' seen.
	p, n := 0, 0
	star, mark := -1, 0
	for n < len(name) {
		switch {
		case p < len(selector) && selector[p] == '*':
			star, mark = p, n
			p++
		case p < len(selector) && selector[p] == name[n]:
			p++
			n++
		case star >= 0:
			p = star + 1
			mark++
			n = mark
		default:
			return false
		}
	}
	for p < len(selector) && selector[p] == '*' {
		p++
	}
	return p == len(selector)
}
