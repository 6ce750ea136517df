package strictyaml

import (
	"reflect"
	"testing"
	"time"
)

// TestUnknownJSONKey: every key a field takes (embedded structs, lists
// of structs, any case) is known; "-", unexported fields and unknown keys
// at any depth are named, the first in document order; a type that
// decodes itself ends the walk.
func TestUnknownJSONKey(t *testing.T) {
	type inner struct {
		Name string `json:"name"`
	}
	type Base struct {
		ID string `json:"id"`
	}
	type doc struct {
		Base
		Items  []inner `json:"items"`
		Skip   string  `json:"-"`
		Plain  int
		At     time.Time      `json:"at"`
		Free   map[string]any `json:"free"`
		hidden int
	}
	_ = doc{}.hidden
	for _, tt := range []struct {
		body string
		want string
	}{
		{`{"id": "a", "items": [{"name": "x"}], "plain": 1, "Name": 2}`, "Name"},
		{`{"id": "a", "items": [{"NAME": "x"}], "plain": 1, "at": "2026-12-05T00:00:00Z", "free": {"any": 1}}`, ""},
		{`{"items": [{"name": "x"}, {"nme": "y"}]}`, "nme"},
		{`{"zz": 1, "aa": 2}`, "zz"},
		{`{"Skip": "x"}`, "Skip"},
		{`{"hidden": 1}`, "hidden"},
		{"{\"gro\u202eups\": 1}", "gro\u202eups"},
		{`not json`, ""},
	} {
		got, ok := UnknownJSONKey([]byte(tt.body), reflect.TypeOf(&doc{}))
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("UnknownJSONKey(%s) = %q, %v; want %q", tt.body, got, ok, tt.want)
		}
	}
}
