package strictyamltest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVariants(t *testing.T) {
	tests := []struct {
		key  string
		want []string
	}{
		{"tokenEnv", []string{"TOKENENV", "tokenenv", "TokenEnv", "token_env", "token-env"}},
		{"name", []string{"NAME", "Name"}},
		{"inCluster", []string{"INCLUSTER", "incluster", "InCluster", "in_cluster", "in-cluster"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Variants(tt.key)); diff != "" {
			t.Errorf("Variants(%q) (-want +got):\n%s", tt.key, diff)
		}
	}
}

func TestEdit(t *testing.T) {
	tests := []struct {
		name   string
		doc    string
		path   []string
		asJSON bool
		want   string
	}{
		{"into a list element", "a: [{b: 1}]\n", []string{"a", "[]"}, false, "a:\n    - B: x\n      b: 1\n"},
		{"creating the way", "a: 1\n", []string{"c", "[]", "d"}, true, `{"a":1,"c":[{"d":{"B":"x"}}]}`},
		{"a root list", `[{"b": 1}]`, []string{"[]"}, true, `[{"B":"x","b":1}]`},
	}
	for _, tt := range tests {
		got, err := Edit([]byte(tt.doc), tt.path, tt.asJSON, func(m map[string]any) { m["B"] = "x" })
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: Edit = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	if _, err := Edit([]byte("a: 1\n"), []string{"a", "b"}, false, func(map[string]any) {}); err == nil {
		t.Errorf("Edit(through a scalar) = nil error, want one")
	}
}
