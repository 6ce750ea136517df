package managedfields

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      *metav1.FieldsV1
		want    string // the set's String(); "" for nil
		wantErr bool
	}{
		{"nil", nil, "", false},
		{"empty", &metav1.FieldsV1{}, "", false},
		{"fields and a keyed element", metav1.NewFieldsV1(`{"f:spec":{"f:ports":{"k:{\"port\":80}":{".":{},"f:port":{}}}}}`), ".spec.ports[port=80]\n.spec.ports[port=80].port", false},
		{"an unknown element kind is left out", metav1.NewFieldsV1(`{"f:a":{},"z:future":{}}`), ".a", false},
		{"not JSON", metav1.NewFieldsV1(`{"f:a":`), "", true},
		{"a key that is not JSON", metav1.NewFieldsV1(`{"k:{port":{}}`), "", true},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("Parse(%s) error = %v, want error %v", tt.name, err, tt.wantErr)
			continue
		}
		s := ""
		if got != nil {
			s = got.String()
		}
		if s != tt.want {
			t.Errorf("Parse(%s) = %q, want %q", tt.name, s, tt.want)
		}
	}
}

func TestMatches(t *testing.T) {
	set, err := Parse(metav1.NewFieldsV1(`{"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{},"v:\"y\"":{},"i:0":{},"f:x":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	pe := map[string]fieldpath.PathElement{}
	set.Members.Iterate(func(p fieldpath.PathElement) { pe[p.String()] = p })
	key, val, idx, field := pe[`[containerPort=8080,protocol="TCP"]`], pe[`[="y"]`], pe[`[0]`], pe[`.x`]
	tests := []struct {
		name string
		el   any
		pe   fieldpath.PathElement
		want bool
	}{
		{"keys equal (int64 from the cluster)", map[string]any{"containerPort": int64(8080), "protocol": "TCP", "name": "http"}, key, true},
		{"keys equal (float64 from JSON)", map[string]any{"containerPort": 8080.0, "protocol": "TCP"}, key, true},
		{"a key differs", map[string]any{"containerPort": int64(8080), "protocol": "UDP"}, key, false},
		{"a key missing", map[string]any{"containerPort": int64(8080)}, key, false},
		{"not a map", "8080", key, false},
		{"value equal", "y", val, true},
		{"value differs", "x", val, false},
		{"an index names no element", "y", idx, false},
		{"a field names no element", map[string]any{"x": 1.0}, field, false},
	}
	for _, tt := range tests {
		if got := Matches(tt.el, tt.pe); got != tt.want {
			t.Errorf("Matches(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
