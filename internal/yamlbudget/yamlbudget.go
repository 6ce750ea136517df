// Package yamlbudget measures what a YAML (or JSON) file costs once its
// aliases are expanded, without expanding them, so a file can be refused
// before a decoder that does expand them (kustomize's kyaml, a decoder
// into Go values) reads it.
//
// A few hundred bytes of nested aliases ("l1: &l1 [*l0, *l0, ...]") expand
// to millions of nodes; counting input bytes does not see it. Check parses
// the file into yaml.Node trees (go.yaml.in/yaml/v3, the parser kyaml
// uses; an alias stays a pointer to its anchor) and computes, per node and
// memoised per anchor, the size and depth the expansion would have: linear
// time and memory in the input whatever the expansion.
//
// The rule is Kubernetes' own, made absolute: yaml.v3 (and the yaml.v2
// fork under sigs.k8s.io/yaml that the apiserver decodes with) refuses a
// document whose alias expansion exceeds a ratio of its decoded nodes
// (allowedAliasRatio: 99% up to 400,000 nodes); kyaml walks yaml.Node trees
// and never applies that check, and one node costs kustomize kilobytes, so
// here the nodes aliases add to a file are capped outright
// (Budget.MaxAliasNodes), as are the bytes of a file (Budget.MaxBytes, so
// the parse is bounded too), its nodes (Budget.MaxNodes) and the nesting
// depth (Budget.MaxDepth; apimachinery's JSON decoder stops at
// 10,000, the yaml.v3 scanner at 10,000 too).
package yamlbudget

import (
	"bytes"
	"fmt"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// Budget is what one file may cost. A zero field takes its default.
type Budget struct {
	// MaxBytes caps the size of a file (default DefaultMaxBytes): parsing
	// holds up to ~100 bytes per byte of dense YAML ("[a,a,a,...]"), so
	// the parse itself is bounded before it starts.
	MaxBytes int
	// MaxAliasNodes caps the nodes alias expansion adds to a file: the
	// expanded count minus the parsed count (default DefaultMaxAliasNodes).
	MaxAliasNodes int64
	// MaxNodes caps the nodes of a file, aliases expanded (default
	// DefaultMaxNodes).
	MaxNodes int64
	// MaxDepth caps the nesting of a file, aliases expanded (default
	// DefaultMaxDepth).
	MaxDepth int
}

// Defaults of Budget.
const (
	// DefaultMaxBytes: the apiserver refuses a request body over 3 MiB
	// and etcd stores at most 1.5 MiB per object, so a file read as YAML
	// holds a few objects at this size; parsing 2 MiB costs at most
	// ~200 MiB of transient heap (dense), ~60 MiB for ordinary manifests.
	DefaultMaxBytes = 2 << 20
	// DefaultMaxAliasNodes lets anchors and merge keys share a defaults
	// block among a few hundred objects (kustomize holds about 1 KiB per
	// node: 10 MiB), and refuses the five-level bomb of nine of issue 26
	// (74,682 nodes added) and anything above it.
	DefaultMaxAliasNodes = 10_000
	// DefaultMaxNodes is about 3 MiB of dense YAML (the apiserver's
	// request body limit, MaxRequestBodyBytes, is 3 MiB), far above any
	// manifest: a Deployment is a few hundred nodes.
	DefaultMaxNodes = 1_000_000
	// DefaultMaxDepth is far above any Kubernetes object (a CRD's
	// openAPIV3Schema nests a few dozen levels).
	DefaultMaxDepth = 256
)

func (b Budget) withDefaults() Budget {
	if b.MaxBytes <= 0 {
		b.MaxBytes = DefaultMaxBytes
	}
	if b.MaxAliasNodes <= 0 {
		b.MaxAliasNodes = DefaultMaxAliasNodes
	}
	if b.MaxNodes <= 0 {
		b.MaxNodes = DefaultMaxNodes
	}
	if b.MaxDepth <= 0 {
		b.MaxDepth = DefaultMaxDepth
	}
	return b
}

// Stats is what a file costs.
type Stats struct {
	// Documents counts the documents of the stream.
	Documents int
	// Parsed counts the nodes as written (an alias is one node).
	Parsed int64
	// Expanded counts the nodes once every alias is replaced by what it
	// refers to (saturating at 1<<62).
	Expanded int64
	// Depth is the deepest nesting, aliases expanded.
	Depth int64
}

// Error is a file over its budget.
type Error struct {
	// Name names the file (as the caller passed it).
	Name string
	// Reason says which limit, by how much, and what to do.
	Reason string
	// Stats are the file's counts.
	Stats Stats
}

func (e *Error) Error() string { return "yamlbudget: " + e.Name + ": " + e.Reason }

// Check measures data, a stream of YAML or JSON documents, and returns a
// *Error when it is over b. Data that does not parse as YAML is not
// refused: whoever decodes it reports the syntax error (the documents that
// parsed before the error are still measured and checked).
func Check(name string, data []byte, b Budget) (Stats, error) {
	b = b.withDefaults()
	var st Stats
	if len(data) > b.MaxBytes {
		return st, &Error{Name: name, Stats: st, Reason: fmt.Sprintf(
			"it is %s bytes (the limit for a file read as YAML is %s): split it into smaller files",
			thousands(int64(len(data))), thousands(int64(b.MaxBytes)))}
	}
	m := &measurer{}
	measure := func(doc *yaml.Node) error {
		st.Documents++
		c := m.measure(doc)
		if m.cycle != "" {
			return &Error{Name: name, Stats: st, Reason: fmt.Sprintf(
				"the alias *%s is inside its own anchor &%s: it expands without end; remove the alias", m.cycle, m.cycle)}
		}
		st.Expanded = add(st.Expanded, c.size)
		st.Depth = max(st.Depth, c.depth)
		return nil
	}
	if !bytes.Contains(data, []byte("---")) && !bytes.Contains(data, []byte("...")) {
		// One document (documents are separated by "---" or ended by
		// "..."): parsed from memory, faster than the stream decoder.
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err == nil && doc.Kind != 0 {
			if err := measure(&doc); err != nil {
				return st, err
			}
		}
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc yaml.Node
			if err := dec.Decode(&doc); err != nil {
				break // io.EOF, or a syntax error the real decoder reports
			}
			if err := measure(&doc); err != nil {
				return st, err
			}
		}
	}
	st.Parsed = m.parsed
	added := st.Expanded - st.Parsed
	switch {
	case added > b.MaxAliasNodes:
		return st, &Error{Name: name, Stats: st, Reason: fmt.Sprintf(
			"aliases expand it to %s nodes from %s as written (%s added by aliases; the limit is %s): write the shared parts out, or share fewer of them",
			thousands(st.Expanded), thousands(st.Parsed), thousands(added), thousands(b.MaxAliasNodes))}
	case st.Expanded > b.MaxNodes:
		return st, &Error{Name: name, Stats: st, Reason: fmt.Sprintf(
			"it holds %s nodes, aliases expanded (the limit is %s): split it into smaller files",
			thousands(st.Expanded), thousands(b.MaxNodes))}
	case st.Depth > int64(b.MaxDepth):
		return st, &Error{Name: name, Stats: st, Reason: fmt.Sprintf(
			"it nests %s levels deep, aliases expanded (the limit is %s): flatten it",
			thousands(st.Depth), thousands(int64(b.MaxDepth)))}
	}
	return st, nil
}

// cost is what a node expands to.
type cost struct{ size, depth int64 }

// measurer computes the expanded cost of nodes, once per node reached
// through an alias (memo), so the work is linear in the parsed nodes.
type measurer struct {
	memo   map[*yaml.Node]cost
	active map[*yaml.Node]bool // anchors being measured (cycle check)
	parsed int64
	cycle  string // the anchor of an alias inside itself
}

// satMax is where counts stop growing (no overflow, far over any limit).
const satMax = 1 << 62

// add adds two counts (each at most satMax) without overflow.
func add(a, b int64) int64 {
	if a >= satMax-b {
		return satMax
	}
	return a + b
}

// measure returns n's expanded size and depth; it counts n's parsed nodes
// once (a node reached again through an alias is not counted again).
func (m *measurer) measure(n *yaml.Node) cost {
	if n.Kind == yaml.AliasNode {
		m.parsed++
		if n.Alias == nil {
			return cost{1, 1}
		}
		return m.target(n.Alias, n.Value)
	}
	if c, ok := m.memo[n]; ok {
		return c
	}
	m.parsed++
	c := cost{size: 1, depth: 1}
	for _, ch := range n.Content {
		cc := m.measure(ch)
		if m.cycle != "" {
			return c
		}
		c.size = add(c.size, cc.size)
		c.depth = max(c.depth, cc.depth+1)
	}
	if n.Anchor != "" {
		if m.memo == nil {
			m.memo = map[*yaml.Node]cost{}
		}
		m.memo[n] = c
	}
	return c
}

// target is the cost of an alias's anchor node a, memoised.
func (m *measurer) target(a *yaml.Node, name string) cost {
	if c, ok := m.memo[a]; ok {
		return c
	}
	if m.active == nil {
		m.active = map[*yaml.Node]bool{}
	}
	if m.active[a] {
		m.cycle = name
		return cost{}
	}
	// The anchor is normally measured where it is written, before any
	// alias to it; an alias inside its own anchor gets here while the
	// anchor is being measured (the cycle above).
	m.active[a] = true
	parsed := m.parsed
	c := m.measure(a)
	m.parsed = parsed // counted where it is written
	delete(m.active, a)
	return c
}

// thousands writes n (not negative) with commas between groups of three
// digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
