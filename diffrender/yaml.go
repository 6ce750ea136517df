package diffrender

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	yaml "go.yaml.in/yaml/v2"
)

// leadingKeys are the top-level keys YAML writes first, in this order, the
// way kubectl and ArgoCD show a manifest; the other keys follow sorted.
var leadingKeys = []string{"apiVersion", "kind", "metadata", "spec"}

// YAML renders obj as YAML with a stable key order: apiVersion, kind,
// metadata and spec first, then the remaining top-level keys, and the keys
// of every nested map, in byte order (as kubectl and sigs.k8s.io/yaml do).
// Multi-line strings (a ConfigMap's files) are written as literal blocks, so
// a diff shows the lines of the file. Values outside JSON (NaN, infinities)
// are an error. A nil obj renders as "".
//
// The output is the one of sigs.k8s.io/yaml, whose YAML emitter it uses,
// without that package's round trip through JSON text, which more than
// doubles the cost of rendering a large manifest.
func YAML(obj map[string]any) (string, error) {
	s, err := renderYAML(obj)
	if err != nil {
		return "", fmt.Errorf("diffrender: %w", err)
	}
	return s, nil
}

// renderYAML is [YAML] without the package prefix on its errors.
func renderYAML(obj map[string]any) (string, error) {
	if obj == nil {
		return "", nil
	}
	keys := sortedKeys(obj)
	lead := make([]string, 0, len(leadingKeys))
	for _, k := range leadingKeys {
		if _, ok := obj[k]; ok {
			lead = append(lead, k)
			keys = slices.DeleteFunc(keys, func(s string) bool { return s == k })
		}
	}
	doc := make(yaml.MapSlice, 0, len(obj))
	for _, k := range append(lead, keys...) {
		v, err := yamlValue(obj[k])
		if err != nil {
			return "", fmt.Errorf("render %s as YAML: %w", k, err)
		}
		doc = append(doc, yaml.MapItem{Key: k, Value: v})
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("render YAML: %w", err)
	}
	return string(out), nil
}

// yamlValue converts a JSON-shaped value into what the YAML encoder writes
// as sigs.k8s.io/yaml would: maps as MapSlices in key order, integral
// floats (encoding/json's numbers) as integers. A value of any other Go
// type goes through encoding/json first, so its JSON field names apply.
func yamlValue(v any) (any, error) {
	switch v := v.(type) {
	case nil, string, bool, int, int32, int64, uint, uint32, uint64, json.Number:
		return v, nil
	case float64:
		return yamlFloat(v)
	case float32:
		return yamlFloat(float64(v))
	case map[string]any:
		ms := make(yaml.MapSlice, 0, len(v))
		for _, k := range sortedKeys(v) {
			e, err := yamlValue(v[k])
			if err != nil {
				return nil, err
			}
			ms = append(ms, yaml.MapItem{Key: k, Value: e})
		}
		return ms, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			var err error
			if out[i], err = yamlValue(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	return yamlValue(generic)
}

// yamlFloat writes an integral float as an integer, as a JSON round trip
// does (3, not 3.0; 1152921504606846976, not 1.152921504606847e+18), and
// refuses the values JSON cannot hold.
func yamlFloat(f float64) (any, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("unsupported value %v", f)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		return int64(f), nil
	}
	return f, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
