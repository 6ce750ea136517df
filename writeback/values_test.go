package writeback

import (
	"strings"
	"testing"
)

func TestSetValues(t *testing.T) {
	tag := func(v string) []ValueSet { return []ValueSet{{Path: []string{"image", "tag"}, Value: v}} }
	tests := []struct {
		name string
		edit SetValues
		cur  string
		want string // the new file; "" when refused
		err  string // a substring of the refusal
	}{
		{"in place, comments and order kept", SetValues{File: "v.yaml", Set: tag("1.0.0")},
			"# dev\nreplicas: 2\nimage:\n  repository: ghcr.io/acme/api # the repo\n  tag: 1.1.0 # bumped\nz: 1\n",
			"# dev\nreplicas: 2\nimage:\n  repository: ghcr.io/acme/api # the repo\n  tag: 1.0.0 # bumped\nz: 1\n", ""},
		{"a tag YAML would read as a number stays a string", SetValues{File: "v.yaml", Set: tag("2")}, "image:\n  tag: \"1\"\n", "image:\n  tag: \"2\"\n", ""},
		{"missing keys are added", SetValues{File: "v.yaml", Set: tag("1.0.0")}, "replicas: 2\n", "replicas: 2\nimage:\n  tag: 1.0.0\n", ""},
		{"an empty file", SetValues{File: "v.yaml", Set: tag("1.0.0")}, "", "image:\n  tag: 1.0.0\n", ""},
		{"valuesInline of a helmCharts entry", SetValues{File: "k.yaml", Chart: "api", Set: tag("1.0.0")},
			"helmCharts:\n  - name: web\n  - name: api\n    valuesInline:\n      image:\n        tag: 1.1.0\n",
			"helmCharts:\n  - name: web\n  - name: api\n    valuesInline:\n      image:\n        tag: 1.0.0\n", ""},
		{"no such helmCharts entry", SetValues{File: "k.yaml", Chart: "api", Set: tag("1.0.0")}, "helmCharts:\n  - name: web\n", "", "no entry api"},
		{"a scalar on the way", SetValues{File: "v.yaml", Set: tag("1.0.0")}, "image: ghcr.io/acme/api:1.1.0\n", "", "image is not a mapping"},
		{"a mapping at the key", SetValues{File: "v.yaml", Set: []ValueSet{{Path: []string{"image"}, Value: "x:1"}}}, "image:\n  tag: 1\n", "", "image is not a scalar"},
		{"two documents", SetValues{File: "v.yaml", Set: tag("1.0.0")}, "a: 1\n---\nb: 2\n", "", "the file has 2"},
		{"a control character in a key", SetValues{File: "v.yaml", Set: []ValueSet{{Path: []string{"ima\x1bge"}, Value: "1"}}}, "a: 1\n", "", "control character"},
		{"a value with a newline", SetValues{File: "v.yaml", Set: tag("1.0.0\nevil: true")}, "a: 1\n", "", "is not an image reference"},
		{"a path too deep", SetValues{File: "v.yaml", Set: []ValueSet{{Path: strings.Split(strings.Repeat("k.", 17)+"k", "."), Value: "1"}}}, "a: 1\n", "", "want 1 to 16 keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.edit.Apply([]byte(tt.cur))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Apply = %q, %v; want an error containing %q", got, err, tt.err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("Apply = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
