package helmrender

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The validator applies a schema to the values by walking both, without
// memory of what it already did: a schema whose references branch and
// meet again (anyOf of two $refs to the same definition, level after
// level) or recurse with the values' depth makes it work exponentially,
// and it cannot be stopped once started (it takes no context). So before
// validating, schemaCost counts the applications it could make, as the
// sum over the (schema, value) pairs it could reach, each
// counted once per way to reach it, memoised per pair; over
// maxSchemaApplications the schema is refused. The count over-estimates
// (every branch of anyOf and oneOf is taken, every pattern property
// applies to every key), which only refuses sooner.

// maxSchemaApplications caps what the validator may do for one schema and
// its values, in applications weighted by what each compares: a real
// chart's schema applies a few thousand times.
const maxSchemaApplications = 200_000

// maxSchemaPairs caps the (schema, place) pairs the count itself visits.
const maxSchemaPairs = 1_000_000

// costKey is a schema and the value it applies to: an object or an array
// by its identity; every scalar alike (applying a schema to a scalar
// costs the same whatever the scalar), so the memo holds no paths.
type costKey struct {
	s  *jsonschema.Schema
	at uintptr
}

// instanceID is v's identity for the memo: 0 for a scalar.
func instanceID(v any) uintptr {
	switch x := v.(type) {
	case map[string]any:
		return reflect.ValueOf(x).Pointer()
	case []any:
		if len(x) == 0 {
			return 0 // nothing below it: costs as a scalar
		}
		return reflect.ValueOf(x).Pointer()
	}
	return 0
}

type schemaCounter struct {
	memo    map[costKey]int64
	active  map[costKey]bool
	weights map[*jsonschema.Schema]int64
	over    bool
}

// schemaCost is how many times validating v against s could apply a
// schema, saturating just above maxSchemaApplications.
func schemaCost(s *jsonschema.Schema, v any) int64 {
	c := &schemaCounter{memo: map[costKey]int64{}, active: map[costKey]bool{}, weights: map[*jsonschema.Schema]int64{}}
	return c.cost(s, v)
}

// weight is what one application of s costs on its own: 1, and what its
// keywords compare or list (each enum value and the const by their size,
// each required name), so a schema of a million enum entries costs a
// million each time it applies (and its refusal's text is as long).
func (c *schemaCounter) weight(s *jsonschema.Schema) int64 {
	if w, ok := c.weights[s]; ok {
		return w
	}
	w := sat(1, int64(len(s.Required)))
	if s.Enum != nil {
		for _, v := range s.Enum.Values {
			w = sat(w, valueSize(v, maxSchemaApplications+1))
		}
	}
	if s.Const != nil {
		w = sat(w, valueSize(*s.Const, maxSchemaApplications+1))
	}
	c.weights[s] = w
	return w
}

// valueSize counts the nodes of a decoded JSON value, at most max.
func valueSize(v any, max int64) int64 {
	n := int64(1)
	stack := []any{v}
	for len(stack) > 0 && n < max {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch t := x.(type) {
		case map[string]any:
			for _, e := range t {
				n++
				stack = append(stack, e)
			}
		case []any:
			for _, e := range t {
				n++
				stack = append(stack, e)
			}
		}
	}
	return min(n, max)
}

func sat(a, b int64) int64 {
	if a+b > maxSchemaApplications {
		return maxSchemaApplications + 1
	}
	return a + b
}

func (c *schemaCounter) cost(s *jsonschema.Schema, v any) int64 {
	if s == nil || c.over {
		return 0
	}
	k := costKey{s, instanceID(v)}
	if n, ok := c.memo[k]; ok {
		return n
	}
	if c.active[k] {
		return 1 // the validator stops a reference cycle at the same place
	}
	if len(c.memo) >= maxSchemaPairs {
		c.over = true
		return maxSchemaApplications + 1
	}
	c.active[k] = true
	n := c.weight(s)
	same := func(sub *jsonschema.Schema) { n = sat(n, c.cost(sub, v)) }
	same(s.Ref)
	same(s.RecursiveRef)
	if s.DynamicRef != nil {
		same(s.DynamicRef.Ref)
	}
	same(s.Not)
	for _, list := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for _, sub := range list {
			same(sub)
		}
	}
	same(s.If)
	same(s.Then)
	same(s.Else)
	for _, sub := range sortedSchemas(s.DependentSchemas) {
		same(sub)
	}
	for _, name := range sortedKeys(s.Dependencies) {
		if sub, ok := s.Dependencies[name].(*jsonschema.Schema); ok {
			same(sub)
		}
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for key := range x {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		add, _ := s.AdditionalProperties.(*jsonschema.Schema)
		for _, key := range keys {
			child := func(sub *jsonschema.Schema) { n = sat(n, c.cost(sub, x[key])) }
			child(s.Properties[key])
			for _, sub := range s.PatternProperties {
				child(sub)
			}
			child(add)
			child(s.UnevaluatedProperties)
			n = sat(n, c.cost(s.PropertyNames, key))
		}
	case []any:
		prefix := s.PrefixItems
		var items, rest *jsonschema.Schema
		switch it := s.Items.(type) {
		case *jsonschema.Schema:
			items = it
		case []*jsonschema.Schema:
			prefix = it
		}
		if s.Items2020 != nil {
			items = s.Items2020
		}
		rest, _ = s.AdditionalItems.(*jsonschema.Schema)
		for i, e := range x {
			child := func(sub *jsonschema.Schema) { n = sat(n, c.cost(sub, e)) }
			if i < len(prefix) {
				child(prefix[i])
			} else {
				child(items)
				child(rest)
			}
			child(s.Contains)
			child(s.UnevaluatedItems)
		}
	}
	delete(c.active, k)
	c.memo[k] = n
	if n > maxSchemaApplications {
		c.over = true // refused: the rest need not be counted
	}
	return n
}

func sortedSchemas(m map[string]*jsonschema.Schema) []*jsonschema.Schema {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*jsonschema.Schema, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// costError is the refusal of a schema over the bound.
func costError() string {
	return fmt.Sprintf("validating the values would apply the schema more than %d times (its references branch and meet again, or recurse with the values)", maxSchemaApplications)
}
