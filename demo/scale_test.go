package demo

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/operator"
)

// TestFleetSpecMix checks the seeded fleet's mix and that every App's spec
// is one the operator accepts.
func TestFleetSpecMix(t *testing.T) {
	ns := []string{"storefront", "payments"}
	const n = 2000
	counts := map[fleetClass]int{}
	names := map[string]bool{}
	history := 0
	for i := range n {
		a := fleetSpec(i, ns)
		counts[a.class]++
		key := a.namespace + "/" + a.name
		if names[key] {
			t.Fatalf("fleetSpec(%d) = %s, a duplicate", i, key)
		}
		names[key] = true
		if a.next != "" {
			history++
			if a.class != classHealthy {
				t.Errorf("fleetSpec(%d): a second release on a %v App", i, a.class)
			}
		}
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": a.name, "namespace": a.namespace}, "spec": a.spec}}
		spec, err := operator.ParseSpec(u)
		if err != nil {
			t.Fatalf("fleetSpec(%d): %v", i, err)
		}
		if r := *spec.Replicas; r < 1 || r > 3 {
			t.Errorf("fleetSpec(%d) replicas = %d, want 1-3", i, r)
		}
	}
	want := map[fleetClass]int{classProgressing: 40, classImagePull: 20, classStuck: 60, classCrashLoop: 10}
	want[classHealthy] = n - 130
	for c, w := range want {
		if counts[c] != w {
			t.Errorf("Apps of class %d = %d, want %d", c, counts[c], w)
		}
	}
	if history < n/5 {
		t.Errorf("Apps with a second release = %d, want at least %d", history, n/5)
	}
}
