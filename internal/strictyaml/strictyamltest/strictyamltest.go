// Package strictyamltest checks that a loader built on strictyaml refuses
// every other spelling of every key of its type. The keys come from the
// type's json tags by reflection, so a key added to a config type is
// covered without touching its test.
package strictyamltest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode"

	yaml "go.yaml.in/yaml/v3"

	"github.com/hanzoai/deploy-web/internal/strictyaml"
)

// Variants are the other spellings of key a case-insensitive decoder
// would take or a hurried hand would write: upper case, lower case, the
// first letter flipped, snake_case and kebab-case; key itself is left out.
func Variants(key string) []string {
	var snake, kebab strings.Builder
	for i, r := range key {
		if unicode.IsUpper(r) && i > 0 {
			snake.WriteByte('_')
			kebab.WriteByte('-')
		}
		snake.WriteRune(unicode.ToLower(r))
		kebab.WriteRune(unicode.ToLower(r))
	}
	flip := []rune(key)
	if unicode.IsUpper(flip[0]) {
		flip[0] = unicode.ToLower(flip[0])
	} else {
		flip[0] = unicode.ToUpper(flip[0])
	}
	var out []string
	seen := map[string]bool{key: true}
	for _, v := range []string{strings.ToUpper(key), strings.ToLower(key), string(flip), snake.String(), kebab.String()} {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// With returns doc (YAML or JSON; asJSON says which to write back) with
// key set to value in the mapping at path (the leading segments of a
// KeyPaths entry; "[]" is the first element of a list), creating the
// mappings and lists on the way.
func With(doc []byte, path []string, key string, value any, asJSON bool) ([]byte, error) {
	var root any
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, err
	}
	root, err := set(root, path, key, value)
	if err != nil {
		return nil, err
	}
	if asJSON {
		return json.Marshal(root)
	}
	return yaml.Marshal(root)
}

func set(node any, path []string, key string, value any) (any, error) {
	if len(path) == 0 {
		m, ok := node.(map[string]any)
		if node == nil {
			m, ok = map[string]any{}, true
		}
		if !ok {
			return nil, fmt.Errorf("strictyamltest: %T is not a mapping", node)
		}
		m[key] = value
		return m, nil
	}
	if path[0] == "[]" {
		l, ok := node.([]any)
		if node == nil || ok && len(l) == 0 {
			l, ok = []any{nil}, true
		}
		if !ok {
			return nil, fmt.Errorf("strictyamltest: %T is not a list", node)
		}
		c, err := set(l[0], path[1:], key, value)
		l[0] = c
		return l, err
	}
	m, ok := node.(map[string]any)
	if node == nil {
		m, ok = map[string]any{}, true
	}
	if !ok {
		return nil, fmt.Errorf("strictyamltest: %T is not a mapping", node)
	}
	c, err := set(m[path[0]], path[1:], key, value)
	m[path[0]] = c
	return m, err
}

// CaseVariants runs a subtest per key of type t and per variant of it:
// good (a document load accepts) with the variant added beside the key,
// and with the variant alone, must both be refused by load with an error
// that names the variant and the right spelling.
func CaseVariants(t *testing.T, good []byte, typ reflect.Type, asJSON bool, load func([]byte) error) {
	t.Helper()
	if err := load(good); err != nil {
		t.Fatalf("load(good document) = %v, want nil", err)
	}
	paths := strictyaml.KeyPaths(typ)
	if len(paths) == 0 {
		t.Fatalf("KeyPaths(%s) is empty", typ)
	}
	for _, p := range paths {
		key := p[len(p)-1]
		for _, v := range Variants(key) {
			t.Run(strings.Join(p, ".")+"/"+v, func(t *testing.T) {
				alone, err := With(good, p[:len(p)-1], v, "x", asJSON)
				if err != nil {
					t.Fatal(err)
				}
				err = load(alone)
				want := fmt.Sprintf("%s: unknown key: keys are case-sensitive, did you mean %q?", v, key)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("load(%s written %s) = %v\nwant an error containing %q", key, v, err, want)
				}
				both, err := With(alone, p[:len(p)-1], key, "x", asJSON)
				if err != nil {
					t.Fatal(err)
				}
				if err := load(both); err == nil || !strings.Contains(err.Error(), v+": ") {
					t.Errorf("load(%s and %s) = %v, want an error naming %s", key, v, err, v)
				}
			})
		}
	}
}
