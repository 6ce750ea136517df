package revdiff

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/deployplan"
)

func obj(apiVersion, kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}}}
	if ns != "" {
		u.SetNamespace(ns)
	}
	if spec != nil {
		u.Object["spec"] = spec
	}
	return u
}

func deploy(name string, replicas int64, image string) *unstructured.Unstructured {
	return obj("apps/v1", "Deployment", "web", name, map[string]any{"replicas": replicas,
		"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": image}}}}})
}

func secret(name, hash string, data map[string]any) *unstructured.Unstructured {
	u := obj("v1", "Secret", "web", name, nil)
	if hash != "" {
		u.SetAnnotations(map[string]string{deployplan.SecretHashAnnotation: hash})
	}
	if data != nil {
		u.Object["data"] = data
	}
	return u
}

func TestCompareStatuses(t *testing.T) {
	cm := func(v string) *unstructured.Unstructured {
		u := obj("v1", "ConfigMap", "web", "cfg", nil)
		u.Object["data"] = map[string]any{"k": v}
		return u
	}
	tests := []struct {
		name     string
		from, to []*unstructured.Unstructured
		want     Counts
		status   map[string]string // key string -> summary
	}{
		{"same", []*unstructured.Unstructured{deploy("api", 2, "a:1")}, []*unstructured.Unstructured{deploy("api", 2, "a:1")},
			Counts{Unchanged: 1}, map[string]string{}},
		{"added", nil, []*unstructured.Unstructured{deploy("api", 2, "a:1")},
			Counts{Added: 1}, map[string]string{"Deployment.apps web/api": "added"}},
		{"removed", []*unstructured.Unstructured{cm("1")}, nil,
			Counts{Removed: 1}, map[string]string{"ConfigMap web/cfg": "removed"}},
		{"changed", []*unstructured.Unstructured{deploy("api", 2, "a:1"), cm("1")}, []*unstructured.Unstructured{deploy("api", 3, "a:1"), cm("1")},
			Counts{Changed: 1, Unchanged: 1}, map[string]string{"Deployment.apps web/api": "changed"}},
		{"version is not part of the key", []*unstructured.Unstructured{obj("apps/v1beta2", "Deployment", "web", "x", nil)}, []*unstructured.Unstructured{obj("apps/v1", "Deployment", "web", "x", nil)},
			Counts{Changed: 1}, map[string]string{"Deployment.apps web/x": "changed"}},
		{"server fields do not count", []*unstructured.Unstructured{withServerFields(deploy("api", 2, "a:1"))}, []*unstructured.Unstructured{deploy("api", 2, "a:1")},
			Counts{Unchanged: 1}, map[string]string{}},
		{"secret same hash", []*unstructured.Unstructured{secret("s", "sha256:aa", nil)}, []*unstructured.Unstructured{secret("s", "sha256:aa", nil)},
			Counts{Unchanged: 1}, map[string]string{}},
		{"secret other hash", []*unstructured.Unstructured{secret("s", "sha256:aa", nil)}, []*unstructured.Unstructured{secret("s", "sha256:bb", nil)},
			Counts{Changed: 1}, map[string]string{"Secret web/s": "changed (hash)"}},
		{"secret unknown hash", []*unstructured.Unstructured{secret("s", "", nil)}, []*unstructured.Unstructured{secret("s", "", nil)},
			Counts{Changed: 1}, map[string]string{"Secret web/s": "changed (hash)"}},
		{"secret added", nil, []*unstructured.Unstructured{secret("s", "sha256:aa", nil)},
			Counts{Added: 1}, map[string]string{"Secret web/s": "added"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Compare(tt.from, tt.to, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Counts != tt.want {
				t.Errorf("Compare counts = %+v, want %+v", res.Counts, tt.want)
			}
			got := map[string]string{}
			for _, r := range res.Resources {
				got[r.Key.String()] = r.Summary()
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.status) {
				t.Errorf("Compare resources = %v, want %v", got, tt.status)
			}
			if res.Changes() != (len(tt.status) > 0) {
				t.Errorf("Changes() = %v, want %v", res.Changes(), len(tt.status) > 0)
			}
		})
	}
}

func withServerFields(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	u.SetResourceVersion("42")
	u.SetUID("u-1")
	u.SetGeneration(7)
	u.Object["status"] = map[string]any{"replicas": int64(2)}
	return u
}

// The from side is the left (before, "-"), the to side the right (after,
// "+"), as in the resource diff.
func TestCompareDirection(t *testing.T) {
	res, err := Compare([]*unstructured.Unstructured{deploy("api", 2, "a:1")}, []*unstructured.Unstructured{deploy("api", 2, "a:2")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	diff := res.Resources[0].Unified()
	if !strings.Contains(diff, "\n-      - image: a:1\n") || !strings.Contains(diff, "\n+      - image: a:2\n") {
		t.Errorf("Unified() = %q, want -a:1 and +a:2", diff)
	}
	if r := res.Resources[0]; r.Added != 1 || r.Removed != 1 {
		t.Errorf("lines = +%d -%d, want +1 -1", r.Added, r.Removed)
	}
}

// A live side is restricted to the fields the other side sets: defaulted
// fields are not changes, a hand edit of a set field is.
func TestCompareLiveRestriction(t *testing.T) {
	live := withServerFields(deploy("api", 2, "a:1"))
	_ = unstructured.SetNestedField(live.Object, "RollingUpdate", "spec", "strategy", "type")
	_ = unstructured.SetNestedField(live.Object, int64(600), "spec", "progressDeadlineSeconds")
	tests := []struct {
		name    string
		from    []*unstructured.Unstructured
		to      []*unstructured.Unstructured
		opts    Options
		changed int
	}{
		{"live to desired", []*unstructured.Unstructured{live}, []*unstructured.Unstructured{deploy("api", 2, "a:1")}, Options{FromLive: true}, 0},
		{"desired to live", []*unstructured.Unstructured{deploy("api", 2, "a:1")}, []*unstructured.Unstructured{live}, Options{ToLive: true}, 0},
		{"live unrestricted shows defaults", []*unstructured.Unstructured{live}, []*unstructured.Unstructured{deploy("api", 2, "a:1")}, Options{}, 1},
		{"hand edit shows", []*unstructured.Unstructured{live}, []*unstructured.Unstructured{deploy("api", 5, "a:1")}, Options{FromLive: true}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Compare(tt.from, tt.to, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Counts.Changed != tt.changed {
				t.Errorf("Compare changed = %d, want %d (%+v)", res.Counts.Changed, tt.changed, res.Resources)
			}
		})
	}
}

// A Secret's values never reach a diff, even when a caller forgot to strip
// them: the comparison reads the hash annotation alone.
func TestCompareSecretValuesNeverShown(t *testing.T) {
	const value = "c3VwZXItc2VjcmV0LXZhbHVl" // base64 of super-secret-value
	from := []*unstructured.Unstructured{secret("s", "sha256:aa", map[string]any{"password": value})}
	to := []*unstructured.Unstructured{secret("s", "sha256:bb", map[string]any{"password": value + "x"})}
	res, err := Compare(from, to, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := NewReport("prod", "a", "b", "", res)
	for name, out := range map[string]string{"markdown": rep.Markdown(), "unified": res.Resources[0].Unified(), "json": mustJSON(t, rep)} {
		if strings.Contains(out, value) || strings.Contains(out, "password") || strings.Contains(out, "sha256:aa") {
			t.Errorf("%s output holds a Secret's data or hash:\n%s", name, out)
		}
	}
	if got := res.Resources[0].Summary(); got != "changed (hash)" {
		t.Errorf("Summary() = %q, want changed (hash)", got)
	}
}

func TestStripLive(t *testing.T) {
	live := secret("s", "sha256:aa", map[string]any{"password": "c2VjcmV0"})
	live.SetLabels(map[string]string{"a": "b"})
	ann := live.GetAnnotations()
	ann["kubectl.kubernetes.io/last-applied-configuration"] = `{"data":{"password":"c2VjcmV0"}}`
	live.SetAnnotations(ann)
	cm := obj("v1", "ConfigMap", "web", "c", nil)
	out := StripLive([]*unstructured.Unstructured{live, cm})
	want := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s", "namespace": "web",
		"annotations": map[string]any{deployplan.SecretHashAnnotation: "sha256:aa"}}}
	if fmt.Sprint(out[0].Object) != fmt.Sprint(want) {
		t.Errorf("StripLive(secret) = %v, want %v", out[0].Object, want)
	}
	if out[1] != cm {
		t.Errorf("StripLive(configmap) = %v, want it unchanged", out[1])
	}
	if _, ok := live.Object["data"]; !ok {
		t.Error("StripLive modified its argument")
	}
}

func TestCompareBounds(t *testing.T) {
	var from, to []*unstructured.Unstructured
	for i := range 10 {
		from = append(from, deploy(fmt.Sprintf("d%02d", i), 1, "a:1"))
		to = append(to, deploy(fmt.Sprintf("d%02d", i), 2, "a:2"))
	}
	res, err := Compare(from, to, Options{MaxResources: 4, MaxLines: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Omitted != 6 || res.Counts.Changed != 4 || !res.Changes() {
		t.Errorf("Compare omitted %d changed %d, want 6 and 4", res.Omitted, res.Counts.Changed)
	}
	if !res.LinesCut {
		t.Error("Compare LinesCut = false, want true")
	}
	for _, r := range res.Resources {
		if n := rowCount(r.Hunks); n > 3 || !r.LinesCut {
			t.Errorf("%s: %d rows (cut %v), want at most 3, cut", r.Key, n, r.LinesCut)
		}
	}
	res, err = Compare(from, to, Options{MaxTotalLines: 5})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, r := range res.Resources {
		total += rowCount(r.Hunks)
	}
	if total > 5 || !res.LinesCut {
		t.Errorf("Compare total rows = %d (cut %v), want at most 5, cut", total, res.LinesCut)
	}
}

func TestCompareErrors(t *testing.T) {
	d := deploy("api", 1, "a:1")
	tests := []struct {
		name     string
		from, to []*unstructured.Unstructured
		want     string
	}{
		{"duplicate", []*unstructured.Unstructured{d, d}, nil, "revdiff: from: Deployment.apps web/api is listed twice"},
		{"nil", nil, []*unstructured.Unstructured{nil}, "revdiff: to: manifest 0 is nil"},
	}
	for _, tt := range tests {
		if _, err := Compare(tt.from, tt.to, Options{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Compare error = %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestCompareUnmanagedShowsNoValues: a live resource deploy-web does not
// manage compares as changed, "exists, not managed here", with no line
// of it in the diff or the Markdown.
func TestCompareUnmanagedShowsNoValues(t *testing.T) {
	ref := obj("v1", "ConfigMap", "web", "app-settings", nil)
	ref.Object["data"] = map[string]any{"mode": "ours"}
	live := obj("v1", "ConfigMap", "web", "app-settings", nil) // as deployplan.LiveReader stubs it
	res, err := Compare([]*unstructured.Unstructured{live}, []*unstructured.Unstructured{ref},
		Options{FromLive: true, Unmanaged: map[Key]bool{KeyOf(live): true}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Counts.Changed != 1 || len(res.Resources) != 1 {
		t.Fatalf("Compare = %+v, want one changed resource", res)
	}
	r := res.Resources[0]
	if !r.Unmanaged || r.Summary() != NotManagedHere || len(r.Hunks) != 0 {
		t.Errorf("resource = %+v (summary %q), want unmanaged, %q, no hunks", r, r.Summary(), NotManagedHere)
	}
	md := NewReport("dev", "live", "ref:pr", "", res).Markdown()
	if strings.Contains(md, "mode") || !strings.Contains(md, NotManagedHere) {
		t.Errorf("Markdown shows a value of an unmanaged resource or lacks %q:\n%s", NotManagedHere, md)
	}
	// Without the mark the same pair is a line diff.
	res, err = Compare([]*unstructured.Unstructured{live}, []*unstructured.Unstructured{ref}, Options{FromLive: true})
	if err != nil || res.Resources[0].Unmanaged || len(res.Resources[0].Hunks) == 0 {
		t.Errorf("Compare without Unmanaged = %+v, %v, want a line diff", res, err)
	}
}
