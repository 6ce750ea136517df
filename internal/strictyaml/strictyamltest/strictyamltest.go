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

// Edit returns doc (YAML or JSON; asJSON says which to write back) with
// edit applied to the mapping at path (the leading segments of a KeyPaths
// entry; "[]" is the first element of a list), creating the mappings and
// lists on the way. Keys come out sorted.
func Edit(doc []byte, path []string, asJSON bool, edit func(map[string]any)) ([]byte, error) {
	var root any
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, err
	}
	root, err := apply(root, path, edit)
	if err != nil {
		return nil, err
	}
	if asJSON {
		return json.Marshal(root)
	}
	return yaml.Marshal(root)
}

func apply(node any, path []string, edit func(map[string]any)) (any, error) {
	if len(path) > 0 && path[0] == "[]" {
		l, ok := node.([]any)
		if node == nil || ok && len(l) == 0 {
			l, ok = []any{nil}, true
		}
		if !ok {
			return nil, fmt.Errorf("strictyamltest: %T is not a list", node)
		}
		c, err := apply(l[0], path[1:], edit)
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
	if len(path) == 0 {
		edit(m)
		return m, nil
	}
	c, err := apply(m[path[0]], path[1:], edit)
	m[path[0]] = c
	return m, err
}

// CaseVariants runs a subtest per key of type typ and per variant of it
// (Variants): the variant written instead of the key, and the variant
// written beside it, in good (a document load accepts), must be refused
// by load with an error naming the variant (and, instead of the key, the
// right spelling).
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
		parent, key := p[:len(p)-1], p[len(p)-1]
		for _, v := range Variants(key) {
			t.Run(strings.Join(p, ".")+"/"+v, func(t *testing.T) {
				instead, err := Edit(good, parent, asJSON, func(m map[string]any) {
					val, ok := m[key]
					if !ok {
						val = "x"
					}
					delete(m, key)
					m[v] = val
				})
				if err != nil {
					t.Fatal(err)
				}
				err = load(instead)
				want := fmt.Sprintf("%s: unknown key: keys are case-sensitive, did you mean %q?", v, key)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("load(%s written %s) = %v\nwant an error containing %q", key, v, err, want)
				}
				beside, err := Edit(good, parent, asJSON, func(m map[string]any) {
					if _, ok := m[key]; !ok {
						m[key] = "x"
					}
					m[v] = m[key]
				})
				if err != nil {
					t.Fatal(err)
				}
				if err := load(beside); err == nil || !strings.Contains(err.Error(), v+": ") {
					t.Errorf("load(%s and %s) = %v, want an error naming %s", key, v, err, v)
				}
			})
		}
	}
}
