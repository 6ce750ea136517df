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

// TestCountConverged counts from a store's objects: only seeded Apps whose
// generation the operator observed and whose Ready condition is the one
// their class is built to reach; after a release, only those running it.
func TestCountConverged(t *testing.T) {
	ns := []string{"storefront", "payments"}
	app := func(i int, gen, observed int64, reason, image string) *unstructured.Unstructured {
		namespace, name := FleetApp(i, ns)
		status := "False"
		if reason == "RolloutComplete" {
			status = "True"
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": name, "namespace": namespace, "generation": gen},
			"status": map[string]any{
				"observedGeneration": observed, "image": image,
				"conditions": []any{map[string]any{"type": "Ready", "status": status, "reason": reason}},
			},
		}}
	}
	want := map[string]fleetApp{}
	for _, i := range []int{15, 14, 0, 6, 12} { // healthy, healthy, progressing, stuck, crash-looping
		a := fleetSpec(i, ns)
		want[a.namespace+"/"+a.name] = a
	}
	if a := want["payments/fleet-00015"]; a.class != classHealthy || a.next != "" {
		t.Fatalf("fleet-00015 = class %d next %q: the fixture assumes a healthy App without a second release", a.class, a.next)
	}
	if a := want["storefront/fleet-00014"]; a.class != classHealthy || a.next != "" {
		t.Fatalf("fleet-00014 = class %d next %q: the fixture assumes a healthy App without a second release", a.class, a.next)
	}
	objs := []any{
		app(15, 1, 1, "RolloutComplete", ""),          // converged
		app(14, 2, 1, "RolloutComplete", ""),          // generation not observed yet
		app(0, 1, 1, "RollingOut", ""),                // progressing: converged
		app(6, 1, 1, "RollingOut", ""),                // stuck, deadline not passed yet
		app(12, 1, 1, "ProgressDeadlineExceeded", ""), // crash-looping: converged
		app(999, 1, 1, "RolloutComplete", ""),         // not one of ours
		"not an object",
	}
	if got := countConverged(objs, want, false); got != 3 {
		t.Errorf("countConverged = %d, want 3", got)
	}
	released := fleetApp{name: "fleet-00015", namespace: "payments", class: classHealthy, next: "registry.demo.local/payments/fleet-00015:1.1.1"}
	want["payments/fleet-00015"] = released
	if got := countConverged(objs, want, true); got != 2 {
		t.Errorf("countConverged after a release not yet running = %d, want 2", got)
	}
	objs[0] = app(15, 2, 2, "RolloutComplete", released.next)
	if got := countConverged(objs, want, true); got != 3 {
		t.Errorf("countConverged after the release = %d, want 3", got)
	}
}

// TestNotConverged names every App left with the state it is in, including
// Apps the store does not hold, and withoutStalled drops exactly those.
func TestNotConverged(t *testing.T) {
	ns := []string{"storefront", "payments"}
	want := map[string]fleetApp{}
	var apps []fleetApp
	for _, i := range []int{15, 14, 0, 6} { // healthy, healthy, progressing, stuck
		a := fleetSpec(i, ns)
		want[a.namespace+"/"+a.name] = a
		apps = append(apps, a)
	}
	obj := func(i int, gen, observed int64, status, reason, message string) *unstructured.Unstructured {
		namespace, name := FleetApp(i, ns)
		return &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": name, "namespace": namespace, "generation": gen},
			"status": map[string]any{
				"observedGeneration": observed, "lastReconciledAt": "2026-12-01T19:00:00Z",
				"conditions": []any{map[string]any{"type": "Ready", "status": status, "reason": reason, "message": message}},
			},
		}}
	}
	objs := []any{
		obj(15, 1, 1, "True", "RolloutComplete", "2 of 2 replicas available"), // converged
		obj(0, 1, 1, "True", "RolloutComplete", "1 of 1 replicas available"),  // progressing, an hour later: converged
		obj(6, 3, 2, "False", "RollingOut", "0 of 1 updated replicas available\x1b[2J"),
		// fleet-00014 is missing from the store
	}
	left := notConverged(objs, want, false)
	wantLeft := []string{
		`storefront/fleet-00006 (stuck): Ready=False RollingOut: "0 of 1 updated replicas available\x1b[2J"; generation 3, observed 2; status written 2026-12-01T19:00:00Z`,
		"storefront/fleet-00014 (healthy): not found",
	}
	if len(left) != len(wantLeft) {
		t.Fatalf("notConverged = %q, want %q", left, wantLeft)
	}
	for i := range left {
		if left[i].String() != wantLeft[i] {
			t.Errorf("notConverged[%d] = %q, want %q", i, left[i].String(), wantLeft[i])
		}
	}
	if got := countConverged(objs, want, false); got != len(want)-len(left) {
		t.Errorf("countConverged = %d, want %d (the Apps notConverged does not name)", got, len(want)-len(left))
	}
	kept := withoutStalled(apps, left)
	if len(kept) != 2 || kept[0].name != "fleet-00015" || kept[1].name != "fleet-00000" {
		t.Errorf("withoutStalled kept %v, want fleet-00015 and fleet-00000", kept)
	}
	if got := truncate("héllo", 2); got != "hé..." {
		t.Errorf("truncate = %q, want %q", got, "hé...")
	}
	if got := truncate("hé", 2); got != "hé" {
		t.Errorf("truncate = %q, want %q", got, "hé")
	}
}
