package revdiff

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// environment500 is the manifests of a 500-object environment (Deployments,
// Services, ConfigMaps with a file each, Secrets by hash) at revision rev:
// rev changes every tenth Deployment's image and every twentieth
// ConfigMap's file.
func environment500(rev int) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for i := range 125 {
		name := fmt.Sprintf("svc-%03d", i)
		img := "registry.example/app:1"
		if i%10 == 0 {
			img = fmt.Sprintf("registry.example/app:%d", rev)
		}
		d := deploy(name, 2, img)
		_ = unstructured.SetNestedStringMap(d.Object, map[string]string{"app": name, "team": "web"}, "metadata", "labels")
		_ = unstructured.SetNestedSlice(d.Object, []any{map[string]any{"name": "app", "image": img,
			"env":       []any{map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "B", "value": "2"}},
			"ports":     []any{map[string]any{"containerPort": int64(8080), "name": "http"}},
			"resources": map[string]any{"limits": map[string]any{"cpu": "500m", "memory": "256Mi"}}}},
			"spec", "template", "spec", "containers")
		svc := obj("v1", "Service", "web", name, map[string]any{"selector": map[string]any{"app": name},
			"ports": []any{map[string]any{"port": int64(80), "targetPort": "http"}}})
		cm := obj("v1", "ConfigMap", "web", name, nil)
		file := ""
		for l := range 40 {
			file += fmt.Sprintf("key%d = value%d\n", l, l)
		}
		if i%20 == 0 {
			file += fmt.Sprintf("rev = %d\n", rev)
		}
		cm.Object["data"] = map[string]any{"app.conf": file}
		out = append(out, d, svc, cm, secret(name, fmt.Sprintf("sha256:%d", rev*(i%2)), nil))
	}
	return out
}

func BenchmarkCompare500(b *testing.B) {
	a, c := environment500(1), environment500(2)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compare(a, c, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCompare500Counts: the benchmark's two records of a 500-object
// environment differ in the resources environment500 changes. The
// issue's bound (under a second) is BenchmarkCompare500's to show, not a
// timed assertion (those flake on a busy machine).
func TestCompare500Counts(t *testing.T) {
	a, c := environment500(1), environment500(2)
	res, err := Compare(a, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Counts{Changed: 13 + 7 + 62, Unchanged: 500 - 82}); res.Counts != want {
		t.Errorf("Compare counts = %+v, want %+v", res.Counts, want)
	}
}
