package operator

import (
	"strings"
	"testing"
)

// TestCRDServesScale: the App CRD serves the scale subresource (kubectl
// scale app/NAME), and each of its paths is an integer field of the
// schema: spec.replicas, which the operator renders into the Deployment,
// and status.replicas, which writeStatus reports from it.
func TestCRDServesScale(t *testing.T) {
	crd, err := CRD()
	if err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) != 1 {
		t.Fatalf("CRD versions = %d, want 1", len(crd.Spec.Versions))
	}
	v := crd.Spec.Versions[0]
	if v.Subresources == nil || v.Subresources.Scale == nil {
		t.Fatalf("CRD %s subresources = %+v, want scale", v.Name, v.Subresources)
	}
	sc := v.Subresources.Scale
	for _, tt := range []struct{ name, path, want string }{
		{"specReplicasPath", sc.SpecReplicasPath, ".spec.replicas"},
		{"statusReplicasPath", sc.StatusReplicasPath, ".status.replicas"},
	} {
		if tt.path != tt.want {
			t.Errorf("scale.%s = %q, want %q", tt.name, tt.path, tt.want)
			continue
		}
		props := v.Schema.OpenAPIV3Schema.Properties
		parts := strings.Split(strings.TrimPrefix(tt.path, "."), ".")
		for i, p := range parts {
			field, ok := props[p]
			if !ok {
				t.Errorf("scale.%s %s: the schema has no %s", tt.name, tt.path, strings.Join(parts[:i+1], "."))
				break
			}
			if i == len(parts)-1 && field.Type != "integer" {
				t.Errorf("scale.%s %s: type %q, want integer", tt.name, tt.path, field.Type)
			}
			props = field.Properties
		}
	}
	if sc.LabelSelectorPath != nil {
		t.Errorf("scale.labelSelectorPath = %q, want none (an App autoscales with spec.autoscaling)", *sc.LabelSelectorPath)
	}
}
