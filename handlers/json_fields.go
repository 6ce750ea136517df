package handlers

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
)

// unknownJSONField is the first key of the JSON document data, in
// document order, that no field of t (a struct, a pointer to one, or a
// slice of them, at any depth) takes, matched as encoding/json matches
// (the tag's name, or the field's, case-insensitively): what a decoder
// with DisallowUnknownFields refused, named from our own types instead
// of from the decoder's error text. False when every key has a field or
// data is not JSON.
func unknownJSONField(data []byte, t reflect.Type) (string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		dec := json.NewDecoder(bytes.NewReader(data))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return "", false // a value of a type with its own JSON (a time, a duration)
		}
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
			ft, ok := jsonFieldType(t, key)
			if !ok {
				return key, true
			}
			if k, ok := unknownJSONField(raw, ft); ok {
				return k, true
			}
		}
	case reflect.Slice, reflect.Array:
		var elems []json.RawMessage
		if json.Unmarshal(data, &elems) != nil {
			return "", false
		}
		for _, e := range elems {
			if k, ok := unknownJSONField(e, t.Elem()); ok {
				return k, true
			}
		}
	}
	return "", false
}

// jsonFieldType is the type of the field of struct t that takes key,
// its embedded structs' fields included.
func jsonFieldType(t reflect.Type, key string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				if ft, ok := jsonFieldType(et, key); ok {
					return ft, true
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.EqualFold(name, key) {
			return f.Type, true
		}
	}
	return nil, false
}
