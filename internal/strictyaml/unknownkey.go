package strictyaml

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
)

// UnknownJSONKey is the first key of the JSON document data, in document
// order, that no field of t takes (at any depth: structs, pointers, lists
// of them), matched as encoding/json matches a key to a field (the
// fields' names by this package's rules, case-insensitively): the key a
// json.Decoder with DisallowUnknownFields refused, named from the type
// instead of from the decoder's error text. Types that decode themselves
// and Go maps end the walk. False when every key has a field or data is
// not JSON.
func UnknownJSONKey(data []byte, t reflect.Type) (string, bool) {
	for !decodesItself(t) && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if decodesItself(t) {
		return "", false
	}
	switch t.Kind() {
	case reflect.Struct:
		dec := json.NewDecoder(bytes.NewReader(data))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return "", false
		}
		fs := fields(t)
		for dec.More() {
			tok, err := dec.Token()
			key, ok := tok.(string)
			if err != nil || !ok {
				return "", false
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return "", false
			}
			i := slicesIndexFold(fs, key)
			if i < 0 {
				return key, true
			}
			if k, ok := UnknownJSONKey(raw, fs[i].typ); ok {
				return k, true
			}
		}
	case reflect.Slice, reflect.Array:
		var elems []json.RawMessage
		if json.Unmarshal(data, &elems) != nil {
			return "", false
		}
		for _, e := range elems {
			if k, ok := UnknownJSONKey(e, t.Elem()); ok {
				return k, true
			}
		}
	}
	return "", false
}

// slicesIndexFold is the index of the field named key, an exact match
// first, else one equal under case folding (encoding/json's rule); -1
// for none.
func slicesIndexFold(fs []field, key string) int {
	fold := -1
	for i, f := range fs {
		if f.name == key {
			return i
		}
		if fold < 0 && strings.EqualFold(f.name, key) {
			fold = i
		}
	}
	return fold
}
