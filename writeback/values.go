package writeback

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// SetValues sets keys of a Helm chart's values where an environment keeps
// them: a values file (Chart ""), or the valuesInline of the helmCharts
// entry named Chart in the kustomization File. Each key's mappings are
// created when missing; the rest of the file (other keys, their order,
// comments) is kept, as for a kustomization's images: entry.
type SetValues struct {
	File string
	// Chart, when set, names the helmCharts entry of the kustomization
	// File whose valuesInline is edited.
	Chart string
	Set   []ValueSet
}

// ValueSet is one key of a values document: Path its mapping keys from
// the root ("image", "tag"), Value the string it is set to.
type ValueSet struct {
	Path  []string
	Value string
}

// Key is the dotted form of a values path: image.tag.
func (v ValueSet) Key() string { return strings.Join(v.Path, ".") }

// Target implements Edit.
func (e SetValues) Target() string { return e.File }

// maxValuesDepth bounds a values path.
const maxValuesDepth = 16

// Apply implements Edit.
func (e SetValues) Apply(cur []byte) ([]byte, error) {
	fail := func(format string, a ...any) error {
		return &EditError{File: e.File, Reason: fmt.Sprintf(format, a...)}
	}
	if len(e.Set) == 0 {
		return nil, fail("no value to set")
	}
	for _, s := range e.Set {
		if len(s.Path) == 0 || len(s.Path) > maxValuesDepth {
			return nil, fail("values key %q: want 1 to %d keys", s.Key(), maxValuesDepth)
		}
		for _, k := range s.Path {
			if k == "" || strings.ContainsFunc(k, func(r rune) bool { return r < ' ' || r == 0x7f }) {
				return nil, fail("values key %q holds an empty key or a control character", s.Key())
			}
		}
		if strings.ContainsAny(s.Value, "\r\n\t ") {
			return nil, fail("value %q of %s is not an image reference, tag or digest", s.Value, s.Key())
		}
	}
	nodes, err := readYAML(cur)
	if err != nil {
		return nil, fail("%v", err)
	}
	var root *yaml.RNode
	switch {
	case len(nodes) > 1:
		return nil, fail("a values file is one YAML document, the file has %d", len(nodes))
	case len(nodes) == 0 && e.Chart != "":
		return nil, fail("the kustomization is empty")
	case len(nodes) == 0:
		// An empty values file (or one of comments alone) gets its first
		// keys.
		root = yaml.NewMapRNode(nil)
		nodes = []*yaml.RNode{root}
	default:
		root = nodes[0]
	}
	if root.YNode().Kind != yaml.MappingNode {
		return nil, fail("the document is not a mapping")
	}
	values := root
	if e.Chart != "" {
		if values, err = inlineValues(root, e.Chart); err != nil {
			return nil, fail("%v", err)
		}
	}
	for _, s := range e.Set {
		m := values
		for i, k := range s.Path[:len(s.Path)-1] {
			next, err := m.Pipe(yaml.LookupCreate(yaml.MappingNode, k))
			if err != nil {
				return nil, fail("%s: %v", strings.Join(s.Path[:i+1], "."), err)
			}
			if next.YNode().Kind != yaml.MappingNode {
				return nil, fail("%s is not a mapping, so %s cannot be set in it", strings.Join(s.Path[:i+1], "."), s.Key())
			}
			m = next
		}
		if f := m.Field(s.Path[len(s.Path)-1]); f != nil && f.Value.YNode().Kind != yaml.ScalarNode {
			return nil, fail("%s is not a scalar", s.Key())
		}
		if err := setString(m, s.Path[len(s.Path)-1], s.Value); err != nil {
			return nil, fail("%s: %v", s.Key(), err)
		}
	}
	return writeYAML(nodes)
}

// inlineValues is the valuesInline mapping of the one helmCharts entry of
// kustomization k named chart, created when the entry has none.
func inlineValues(k *yaml.RNode, chart string) (*yaml.RNode, error) {
	charts, err := k.Pipe(yaml.Lookup("helmCharts"))
	if err != nil || charts == nil || charts.YNode().Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("no helmCharts list")
	}
	elems, err := charts.Elements()
	if err != nil {
		return nil, fmt.Errorf("helmCharts: %v", err)
	}
	var entry *yaml.RNode
	for _, el := range elems {
		if el.YNode().Kind != yaml.MappingNode {
			continue
		}
		if n := el.Field("name"); n != nil && yaml.GetValue(n.Value) == chart {
			if entry != nil {
				return nil, fmt.Errorf("helmCharts: %s is listed twice: keep one entry", chart)
			}
			entry = el
		}
	}
	if entry == nil {
		return nil, fmt.Errorf("helmCharts: no entry %s", chart)
	}
	v, err := entry.Pipe(yaml.LookupCreate(yaml.MappingNode, "valuesInline"))
	if err != nil {
		return nil, fmt.Errorf("helmCharts %s valuesInline: %v", chart, err)
	}
	if v.YNode().Kind != yaml.MappingNode {
		return nil, fmt.Errorf("helmCharts %s valuesInline is not a mapping", chart)
	}
	return v, nil
}
