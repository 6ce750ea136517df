package deployplan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/objrules"
)

// appObj is App name, depending on deps ("" for no annotation).
func appObj(name, deps string) *unstructured.Unstructured {
	var ann map[string]string
	if deps != "" {
		ann = map[string]string{DependsOnAnnotation: deps}
	}
	return waveObj("hanzo.ai/v1", "App", name, ann)
}

// childObj is an object of kind of App app (labelled with its name).
func childObj(apiVersion, kind, name, app string) *unstructured.Unstructured {
	o := waveObj(apiVersion, kind, name, nil)
	o.SetLabels(map[string]string{appcr.InstanceLabel: app})
	return o
}

// TestDependsOn: the annotation's strict parsing: App/name entries (DNS
// labels) separated by commas, spaces around them allowed; anything else
// refused with its reason, the value cut.
func TestDependsOn(t *testing.T) {
	tests := []struct {
		value   string
		want    []string
		wantErr string // in the error; "" for none
	}{
		{"App/a", []string{"a"}, ""},
		{"App/a,App/b-2", []string{"a", "b-2"}, ""},
		{" App/a , App/b ", []string{"a", "b"}, ""},
		{"", nil, "is not App/name"},
		{"App/a,", nil, "is not App/name"},
		{"a", nil, "is not App/name"},
		{"Deployment/a", nil, "is not App/name"},
		{"app/a", nil, "is not App/name"},
		{"App/", nil, "not an App's name"},
		{"App/A", nil, "not an App's name"},
		{"App/a.b", nil, "not an App's name"},
		{"App/a_b", nil, "not an App's name"},
		{"App/-a", nil, "not an App's name"},
		{"App/a\u202eb", nil, "not an App's name"},
		{"App/" + strings.Repeat("a", 64), nil, "not an App's name"},
		{"App/a,App/a", nil, "names App/a twice"},
		{strings.Repeat("App/a,", 200), nil, "bytes: more than 1024"},
		{strings.TrimSuffix(strings.Repeat("App/a,", 33), ","), nil, "names 33 Apps: more than 32"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			got, err := DependsOn(appObj("x", tt.value))
			if tt.value == "" {
				// An empty value is still the annotation: refused.
				o := appObj("x", "")
				o.SetAnnotations(map[string]string{DependsOnAnnotation: ""})
				got, err = DependsOn(o)
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("DependsOn(%q) = %v", tt.value, err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("DependsOn(%q) (-want +got):\n%s", tt.value, diff)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("DependsOn(%q) = %v, %v; want error %q", tt.value, got, err, tt.wantErr)
			}
			if len(err.Error()) > 300 {
				t.Errorf("DependsOn(%q)'s error is %d bytes: the value is not cut", tt.value, len(err.Error()))
			}
		})
	}
	if got, err := DependsOn(appObj("x", "")); got != nil || err != nil {
		t.Errorf("DependsOn(no annotation) = %v, %v; want nothing", got, err)
	}
}

// TestDependsOnCheck: a cycle is a blocker naming it App by App, an App
// depending on one the render does not hold a blocker naming both, a
// refused annotation or one on an object that is no App a blocker naming
// the object; dependencies without a cycle are none.
func TestDependsOnCheck(t *testing.T) {
	tests := []struct {
		name   string
		objs   []*unstructured.Unstructured
		wantID string
		want   []string // in the message
	}{
		{"a chain", []*unstructured.Unstructured{appObj("a", ""), appObj("b", "App/a"), appObj("c", "App/a,App/b")}, "", nil},
		{"a cycle of two", []*unstructured.Unstructured{appObj("b", "App/a"), appObj("a", "App/b")}, "depends-on-cycle", []string{"App/a -> App/b -> App/a"}},
		{"a cycle of three", []*unstructured.Unstructured{appObj("x", ""), appObj("c", "App/b"), appObj("a", "App/c"), appObj("b", "App/a,App/x")},
			"depends-on-cycle", []string{"App/a -> App/c -> App/b -> App/a"}},
		{"an App on itself", []*unstructured.Unstructured{appObj("a", "App/a")}, "depends-on-cycle", []string{"App/a -> App/a"}},
		{"two cycles", []*unstructured.Unstructured{appObj("a", "App/b"), appObj("b", "App/a"), appObj("c", "App/d"), appObj("d", "App/c")},
			"depends-on-cycle", []string{"App/a -> App/b -> App/a", "App/c -> App/d -> App/c"}},
		{"a missing App", []*unstructured.Unstructured{appObj("a", ""), appObj("b", "App/a,App/ghost")}, "depends-on-missing", []string{"App/b depends on App/ghost, which is not in the environment"}},
		{"a refused annotation", []*unstructured.Unstructured{appObj("b", "App/A")}, "depends-on-annotation", []string{"App/b", "not an App's name"}},
		{"on an object that is no App", []*unstructured.Unstructured{appObj("a", ""), func() *unstructured.Unstructured {
			return waveObj("apps/v1", "Deployment", "b", map[string]string{DependsOnAnnotation: "App/a"})
		}()}, "depends-on-annotation", []string{"Deployment/b", "only an App"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bs := DependsOnCheck(tt.objs)
			if tt.wantID == "" {
				if len(bs) != 0 {
					t.Fatalf("DependsOnCheck = %+v, want none", bs)
				}
				return
			}
			if len(bs) != 1 || bs[0].ID != tt.wantID {
				t.Fatalf("DependsOnCheck = %+v, want one %s blocker", bs, tt.wantID)
			}
			for _, w := range tt.want {
				if !strings.Contains(bs[0].Message, w) {
					t.Errorf("message %q lacks %q", bs[0].Message, w)
				}
			}
		})
	}
}

// TestDependsOnOrder: an App's objects (its App CR and those labelled
// with its name) apply after those of the Apps it depends on, their
// waves (wave annotations, kind groups) kept inside each App stage; the
// first wave of a stage names its Apps and the Apps it waits for, with
// their workloads; objects of no App go with the first stage.
func TestDependsOnOrder(t *testing.T) {
	objs := []*unstructured.Unstructured{
		childObj("apps/v1", "Deployment", "web", "web"),
		appObj("web", "App/api"),
		childObj("v1", "ConfigMap", "api-config", "api"),
		appObj("api", "App/db"),
		childObj("apps/v1", "Deployment", "api", "api"),
		waveObj("v1", "ConfigMap", "shared", nil),
		appObj("db", ""),
		func() *unstructured.Unstructured {
			o := childObj("apps/v1", "Deployment", "db-migrate", "db")
			o.SetAnnotations(waveAnn("1"))
			return o
		}(),
		appObj("cache", ""),
		appObj("front", "App/api,App/cache"),
	}
	d := appDepsOf(objs)
	sortForApply(objs, d)
	want := []string{
		"ConfigMap/shared", "App/db", "App/cache", "Deployment/db-migrate",
		"ConfigMap/api-config", "Deployment/api", "App/api",
		"Deployment/web", "App/web", "App/front",
	}
	if diff := cmp.Diff(want, refs(objs)); diff != "" {
		t.Errorf("sortForApply order (-want +got):\n%s", diff)
	}
	got := wavePlans(wavesOf(objs, d))
	wantWaves := []WavePlan{
		{Wave: 0, Objects: []string{"ConfigMap/shared", "App/db", "App/cache"}, Workloads: []string{"App/db", "App/cache"}},
		{Wave: 1, Objects: []string{"Deployment/db-migrate"}, Workloads: []string{"Deployment/db-migrate"}},
		{Wave: 0, Objects: []string{"ConfigMap/api-config", "Deployment/api", "App/api"}, Workloads: []string{"Deployment/api", "App/api"},
			Apps: []string{"App/api"}, WaitsFor: []string{"App/db"}},
		{Wave: 0, Objects: []string{"Deployment/web", "App/web", "App/front"}, Workloads: []string{"Deployment/web", "App/web", "App/front"},
			Apps: []string{"App/front", "App/web"}, WaitsFor: []string{"App/api", "App/cache"}},
	}
	if diff := cmp.Diff(wantWaves, got); diff != "" {
		t.Errorf("wavePlans (-want +got):\n%s", diff)
	}
	ws := wavesOf(objs, d)
	if diff := cmp.Diff([]string{"App/db", "Deployment/db-migrate"}, refs(ws[2].waitObjs)); diff != "" {
		t.Errorf("before App/api's first wave, the apply waits for (-want +got):\n%s", diff)
	}
	if ws[1].waitObjs != nil || ws[3].waitObjs == nil {
		t.Errorf("waits: wave 1 of stage 0 %v, first wave of stage 2 %v; want none, and App/api's and App/cache's", refs(ws[1].waitObjs), refs(ws[3].waitObjs))
	}
	lines := strings.Join(waveLines(got), "\n")
	for _, w := range []string{"wave 0 of App/api: once App/db healthy, ConfigMap/api-config, Deployment/api, App/api", "wave 0 of App/front, App/web: once App/api, App/cache healthy"} {
		if !strings.Contains(lines, w) {
			t.Errorf("waveLines lack %q:\n%s", w, lines)
		}
	}
}

// TestDependsOnOnly: an apply of one App (ObjectFilter) keeps the stage
// of its App: its first wave waits for the Apps it depends on, which it
// does not write; a cycle leaves every App in the first stage.
func TestDependsOnOnly(t *testing.T) {
	all := []*unstructured.Unstructured{appObj("a", ""), childObj("apps/v1", "Deployment", "a", "a"), appObj("b", "App/a"), childObj("v1", "ConfigMap", "b", "b")}
	r, err := AppObjects("hanzo.ai", "App", "b").only(&Rendered{Objects: all})
	if err != nil {
		t.Fatal(err)
	}
	d := appDepsOf(append(append([]*unstructured.Unstructured(nil), r.Objects...), r.outside...))
	objs := append([]*unstructured.Unstructured(nil), r.Objects...)
	sortForApply(objs, d)
	ws := wavesOf(objs, d)
	if len(ws) != 1 {
		t.Fatalf("%d waves, want 1", len(ws))
	}
	if diff := cmp.Diff([]string{"App/a", "Deployment/a"}, refs(ws[0].waitObjs)); diff != "" {
		t.Errorf("App b alone waits for (-want +got):\n%s", diff)
	}
	cyc := appDepsOf([]*unstructured.Unstructured{appObj("a", "App/b"), appObj("b", "App/a")})
	if cyc.stage["a"] != 0 || cyc.stage["b"] != 0 {
		t.Errorf("stages of a cycle = %v, want 0", cyc.stage)
	}
}

// TestSettled: what the apply's waits and "why" let go on: Healthy and
// Suspended only.
func TestSettled(t *testing.T) {
	for _, tt := range []struct {
		st   objrules.HealthStatus
		want bool
	}{
		{objrules.HealthHealthy, true}, {objrules.HealthSuspended, true}, {objrules.HealthProgressing, false},
		{objrules.HealthDegraded, false}, {objrules.HealthMissing, false}, {objrules.HealthUnknown, false},
	} {
		if got := Settled(objrules.Health{Status: tt.st}); got != tt.want {
			t.Errorf("Settled(%s) = %v, want %v", tt.st, got, tt.want)
		}
	}
}
