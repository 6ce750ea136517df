package helmrender

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/hanzoai/deploy-web/internal/charttest"
)

// noExec puts recording helm, git and sh programs first on PATH; each
// writes a marker file if it is ever run, and the test fails if the
// marker exists at its end.
func noExec(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	for _, name := range []string{"helm", "git", "sh"} {
		script := fmt.Sprintf("#!/bin/sh\necho %s \"$@\" >> %s\nexit 1\n", name, marker)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if p, err := exec.LookPath("helm"); err != nil || p != filepath.Join(dir, "helm") {
		t.Fatalf("LookPath(helm) = %q, %v; want the shim in %s", p, err, dir)
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(marker); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a program ran while rendering: %q (err %v)", b, err)
		}
	})
}

// readChart reads a chart folder of testdata.
func readChart(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	return charttest.Chart(t, dir, "")
}

// tgz packs files under the folder top, as `helm package` does.
func tgz(t *testing.T, top string, files map[string][]byte, extra ...*tar.Header) []byte {
	t.Helper()
	return charttest.Pack(t, top, files, extra...)
}

// shopFiles is the shop chart with its cache dependency vendored as
// `helm dependency build` leaves it (charts/cache-0.3.1.tgz) and its
// library chart vendored as a folder.
func shopFiles(t *testing.T) map[string][]byte {
	files := readChart(t, "shop")
	files["charts/cache-0.3.1.tgz"] = tgz(t, "cache", readChart(t, "cache"))
	return files
}

func objNames(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func image(t *testing.T, o *unstructured.Unstructured) string {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	if len(cs) == 0 {
		t.Fatalf("%s/%s has no containers", o.GetKind(), o.GetName())
	}
	img, _, _ := unstructured.NestedString(cs[0].(map[string]any), "image")
	return img
}

func TestRenderWebapp(t *testing.T) {
	noExec(t)
	files := readChart(t, "webapp")
	res, err := Render(context.Background(), Request{Chart: "charts/webapp", Files: files, ReleaseName: "shop", Namespace: "dev"})
	if err != nil {
		t.Fatalf("Render(webapp) = %v", err)
	}
	want := []string{"ConfigMap/shop-webapp", "Deployment/shop-webapp", "Job/shop-webapp-migrate", "Service/shop-webapp", "ServiceAccount/shop-webapp"}
	if diff := cmp.Diff(want, objNames(res.Objects)); diff != "" {
		t.Errorf("Render(webapp) objects (-want +got):\n%s", diff)
	}
	if got := image(t, find(res.Objects, "Deployment", "shop-webapp")); got != "registry.example.com/team/webapp:2.3.1" {
		t.Errorf("Deployment image = %q, want the appVersion tag", got)
	}
	if got := HookPhase(find(res.Objects, "Job", "shop-webapp-migrate")); got != PhasePre {
		t.Errorf("HookPhase(migrate Job) = %d, want PhasePre", got)
	}
	if got := HookPhase(find(res.Objects, "Deployment", "shop-webapp")); got != PhaseMain {
		t.Errorf("HookPhase(Deployment) = %d, want PhaseMain", got)
	}
	if !containsLine(res.Warnings, "templates/tests/test-connection.yaml", "test hook") {
		t.Errorf("warnings = %q, want the test hook left out", res.Warnings)
	}
	if res.KubeVersion != DefaultKubeVersion {
		t.Errorf("KubeVersion = %q, want %q", res.KubeVersion, DefaultKubeVersion)
	}

	// A values file per environment, then inline values.
	res, err = Render(context.Background(), Request{Chart: "charts/webapp", Files: files, ReleaseName: "shop", Namespace: "dev",
		ValuesFiles: []ValuesFile{{Name: "envs/dev/values.yaml", Data: []byte("image:\n  tag: 2.4.0\ningress:\n  enabled: true\n")}},
		Values:      map[string]any{"replicaCount": 4, "migrations": map[string]any{"enabled": false}}})
	if err != nil {
		t.Fatalf("Render(webapp, values) = %v", err)
	}
	dep := find(res.Objects, "Deployment", "shop-webapp")
	if got := image(t, dep); got != "registry.example.com/team/webapp:2.4.0" {
		t.Errorf("Deployment image = %q, want the values file's tag", got)
	}
	if n, _, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas"); n != 4 {
		t.Errorf("replicas = %d, want the inline 4", n)
	}
	if find(res.Objects, "Ingress", "shop-webapp") == nil || find(res.Objects, "Job", "shop-webapp-migrate") != nil {
		t.Errorf("objects = %v, want the Ingress and no migrate Job", objNames(res.Objects))
	}
}

func containsLine(lines []string, subs ...string) bool {
	for _, l := range lines {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			return true
		}
	}
	return false
}

func TestRenderLibrarySubchart(t *testing.T) {
	noExec(t)
	files := shopFiles(t)
	res, err := Render(context.Background(), Request{Chart: "charts/shop", Files: files, ReleaseName: "web", Namespace: "dev"})
	if err != nil {
		t.Fatalf("Render(shop) = %v", err)
	}
	want := []string{"StatefulSet/web-cache", "Deployment/web-shop", "Service/web-shop"}
	if diff := cmp.Diff(want, objNames(res.Objects)); diff != "" {
		t.Errorf("Render(shop) objects (-want +got):\n%s", diff)
	}
	if got := image(t, find(res.Objects, "Deployment", "web-shop")); got != "registry.example.com/shop/storefront:5.0.0" {
		t.Errorf("Deployment image = %q", got)
	}
	// The chart is loaded afresh per render: the same files, the
	// subchart's condition off, then on again.
	res, err = Render(context.Background(), Request{Chart: "charts/shop", Files: files, ReleaseName: "web", Namespace: "dev", Values: map[string]any{"cache": map[string]any{"enabled": false}}})
	if err != nil || find(res.Objects, "StatefulSet", "web-cache") != nil {
		t.Fatalf("Render(shop, cache off) = %v, %v; want no StatefulSet", objNames(res.Objects), err)
	}
	res, err = Render(context.Background(), Request{Chart: "charts/shop", Files: files, ReleaseName: "web", Namespace: "dev"})
	if err != nil || find(res.Objects, "StatefulSet", "web-cache") == nil {
		t.Fatalf("Render(shop) again = %v, %v; want the StatefulSet back", objNames(res.Objects), err)
	}
}

func TestRenderDependencyRefusals(t *testing.T) {
	noExec(t)
	tests := []struct {
		name     string
		edit     func(map[string][]byte)
		wantFile string
		want     string // in the reason or the hint
	}{
		{"repo dependency not vendored", func(f map[string][]byte) { delete(f, "charts/cache-0.3.1.tgz") },
			"Chart.yaml", "dependency cache ~0.3.0 from oci://registry.example.com/charts is not vendored"},
		{"library dependency not vendored", func(f map[string][]byte) {
			for p := range f {
				if strings.HasPrefix(p, "charts/common/") {
					delete(f, p)
				}
			}
		}, "Chart.yaml", "helm dependency update"},
		{"Chart.lock out of step", func(f map[string][]byte) {
			f["Chart.yaml"] = bytes.Replace(f["Chart.yaml"], []byte("version: ~0.3.0"), []byte("version: ~0.3.1"), 1)
		}, "Chart.lock", "out of step"},
		{"Chart.lock missing", func(f map[string][]byte) { delete(f, "Chart.lock") }, "Chart.lock", "missing"},
		{"vendored version not the locked one", func(f map[string][]byte) {
			f["Chart.lock"] = bytes.Replace(f["Chart.lock"], []byte("version: 0.3.1"), []byte("version: 0.3.0"), 1)
		}, "Chart.lock", "out of step"},
		{"vendored version outside the range", func(f map[string][]byte) {
			c := readChart(t, "cache")
			c["Chart.yaml"] = bytes.Replace(c["Chart.yaml"], []byte("version: 0.3.1"), []byte("version: 0.4.0"), 1)
			f["charts/cache-0.3.1.tgz"] = tgz(t, "cache", c)
		}, "Chart.yaml", "asks for version ~0.3.0"},
		{"symbolic link in a vendored archive", func(f map[string][]byte) {
			f["charts/cache-0.3.1.tgz"] = tgz(t, "cache", readChart(t, "cache"), &tar.Header{Name: "cache/templates/x.yaml", Typeflag: tar.TypeSymlink, Linkname: "/etc/hostname"})
		}, "charts/cache-0.3.1.tgz", "is a link"},
		{"archive entry out of the archive", func(f map[string][]byte) {
			f["charts/cache-0.3.1.tgz"] = tgz(t, "cache", readChart(t, "cache"), &tar.Header{Name: "../../etc/x.yaml", Typeflag: tar.TypeReg})
		}, "charts/cache-0.3.1.tgz", "leaves the archive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := shopFiles(t)
			tt.edit(files)
			_, err := Render(context.Background(), Request{Chart: "charts/shop", Files: files, ReleaseName: "web", Namespace: "dev"})
			var he *Error
			if !errors.As(err, &he) {
				t.Fatalf("Render = %v, want an *Error", err)
			}
			if he.File != tt.wantFile || !strings.Contains(he.Reason+" "+he.Hint, tt.want) {
				t.Errorf("Render error = %q (file %q), want file %q and %q", err, he.File, tt.wantFile, tt.want)
			}
		})
	}
}

// chartWith is a minimal chart with the given templates.
func chartWith(templates map[string]string) map[string][]byte {
	f := map[string][]byte{"Chart.yaml": []byte("apiVersion: v2\nname: t\nversion: 0.1.0\n")}
	for n, s := range templates {
		f["templates/"+n] = []byte(s)
	}
	return f
}

func TestRenderBombsStop(t *testing.T) {
	noExec(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {x: %s}\n"
	tests := []struct {
		name string
		tpl  string
		lim  Limits
		want string
	}{
		{"range until bomb", `{{range until 2000000000}}x{{end}}`, Limits{}, "until asks for 2000000000 items"},
		{"untilStep bomb", `{{range untilStep 0 2000000000 1}}x{{end}}`, Limits{}, "untilStep asks for"},
		{"seq bomb", `{{seq 2000000000}}`, Limits{}, "seq asks for"},
		{"10 MB repeat", fmt.Sprintf(cm, `{{repeat 10485760 "x"}}`), Limits{}, "repeat makes 10485760 copies"},
		{"repeat under the cap, written often", `{{range until 100}}{{repeat 1048576 "x"}}{{end}}`, Limits{}, "the templates write more than"},
		{"recursive include", `{{define "a"}}{{include "a" .}}{{end}}{{include "a" .}}`, Limits{}, "nest more than 100 deep"},
		{"fan-out include", `{{define "a"}}{{if gt . 0}}{{include "a" (sub . 1)}}{{include "a" (sub . 1)}}{{end}}{{end}}{{include "a" 60}}`, Limits{MaxSteps: 100_000}, "more than 100000 steps"},
		{"recursive template action", `{{define "a"}}{{if gt . 0}}{{template "a" (sub . 1)}}{{template "a" (sub . 1)}}{{end}}{{end}}{{template "a" 60}}`, Limits{MaxSteps: 100_000}, "more than 100000 steps"},
		{"recursive tpl", `{{define "a"}}{{tpl "{{include \"a\" .}}" .}}{{end}}{{include "a" .}}`, Limits{}, "nest more than 100 deep"},
		{"silent nested range", `{{range 100000}}{{range 100000}}{{end}}{{end}}`, Limits{MaxSteps: 100_000}, "more than 100000 steps"},
		{"deadline", `{{range 100000}}{{range 100000}}{{end}}{{end}}`, Limits{Timeout: 50 * time.Millisecond, MaxSteps: 1 << 62}, "did not finish within their deadline"},
		{"string doubled in a variable", `{{$s := "xx"}}{{range until 64}}{{$s = cat $s $s}}{{end}}`, Limits{}, "bytes"},
		{"list doubled", `{{$l := list 1}}{{range until 64}}{{$l = concat $l $l}}{{end}}`, Limits{}, "returns a value of more than"},
		{"dict that holds itself twice", `{{$d := dict}}{{range until 64}}{{$d = dict "a" $d "b" $d}}{{end}}{{toJson $d}}`, Limits{}, "returns a value of more than"},
		{"indent bomb", `{{indent 100000000 "x"}}`, Limits{}, "indent by 100000000 spaces"},
		{"random length bomb", `{{randAlphaNum 100000000}}`, Limits{}, "randAlphaNum 100000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render(context.Background(), Request{Chart: "bomb", Files: chartWith(map[string]string{"bomb.yaml": tt.tpl}), ReleaseName: "r", Namespace: "dev", Limits: tt.lim})
			var he *Error
			if !errors.As(err, &he) || !strings.Contains(he.Reason, tt.want) {
				t.Fatalf("Render(%s) = %v, want an *Error with %q", tt.name, err, tt.want)
			}
		})
	}
}

func TestRenderValuesAliasBomb(t *testing.T) {
	noExec(t)
	bomb := "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
	for _, tt := range []struct {
		name string
		req  Request
		file string
	}{
		{"values file", Request{Files: readChart(t, "webapp"), ValuesFiles: []ValuesFile{{Name: "envs/dev/values.yaml", Data: []byte(bomb)}}}, "envs/dev/values.yaml"},
		{"chart values.yaml", Request{Files: func() map[string][]byte { f := readChart(t, "webapp"); f["values.yaml"] = []byte(bomb); return f }()}, "values.yaml"},
		{"subchart values.yaml", Request{Files: func() map[string][]byte {
			f := chartWith(nil)
			f["charts/sub/Chart.yaml"] = []byte("apiVersion: v2\nname: sub\nversion: 1.0.0\n")
			f["charts/sub/values.yaml"] = []byte(bomb)
			return f
		}()}, "charts/sub/values.yaml"},
		{"fromYaml of a file", Request{Files: func() map[string][]byte {
			f := chartWith(map[string]string{"x.yaml": `{{ $x := .Files.Get "files/bomb.yaml" | fromYaml }}`})
			f["files/bomb.yaml"] = []byte(bomb)
			return f
		}()}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Chart, tt.req.ReleaseName, tt.req.Namespace = "c", "r", "dev"
			_, err := Render(context.Background(), tt.req)
			var he *Error
			if !errors.As(err, &he) || he.File != tt.file || !strings.Contains(he.Reason, "too complex") {
				t.Fatalf("Render = %v, want an *Error naming %q as too complex", err, tt.file)
			}
		})
	}
}

// TestRenderSchemaRefs: a schema's references are followed only to the
// chart's own JSON documents (in memory); every other one is dropped with
// a warning, and the rest of the schema still checks the values. The
// documents a followed reference would reach outside the chart refuse
// every value, so following one would fail the render.
func TestRenderSchemaRefs(t *testing.T) {
	noExec(t)
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, `{"not": {}}`)
	}))
	defer srv.Close()
	secret := filepath.Join(t.TempDir(), "schema.json")
	if err := os.WriteFile(secret, []byte(`{"not": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	const img = `{"type": "object", "required": ["tag"], "properties": {"tag": {"type": "string", "pattern": "^[0-9.]+$"}}}`
	tests := []struct {
		name   string
		schema string
		files  map[string]string
		values map[string]any
		err    string // a refusal with this text, or
		warn   string // a warning with this text ("" for none)
	}{
		{name: "http $ref dropped", schema: `{"type": "object", "properties": {"image": {"$ref": "` + srv.URL + `/s.json"}}}`, warn: srv.URL + "/s.json"},
		{name: "file $ref dropped", schema: `{"$ref": "file://` + secret + `"}`, warn: "file://" + secret},
		{name: "path out of the chart dropped", schema: `{"properties": {"image": {"$ref": "../../../../etc/passwd"}}}`, warn: "etc/passwd"},
		{name: "a property named like a keyword", schema: `{"properties": {"default": {"$ref": "` + srv.URL + `/s.json"}, "enum": {"type": "object", "properties": {"x": {"$ref": "file://` + secret + `"}}}}}`, warn: srv.URL + "/s.json"},
		{name: "$dynamicRef dropped", schema: `{"$dynamicRef": "` + srv.URL + `/s.json"}`, warn: "uses $dynamicRef"},
		{name: "rest still checks", schema: `{"properties": {"image": {"$ref": "` + srv.URL + `/s.json"}, "replicaCount": {"type": "integer"}}}`, values: map[string]any{"replicaCount": "three"}, err: "replicaCount"},
		{name: "local $ref followed", schema: `{"$defs": {"n": {"type": "integer", "minimum": 1}}, "properties": {"replicaCount": {"$ref": "#/$defs/n"}}}`, values: map[string]any{"replicaCount": 0}, err: "minimum"},
		{name: "file of the chart followed", schema: `{"properties": {"image": {"$ref": "schemas/image.json"}}}`, files: map[string]string{"schemas/image.json": img}, values: map[string]any{"image": map[string]any{"tag": "latest"}}, err: "does not match pattern"},
		{name: "file of the chart by $id followed", schema: `{"$id": "https://charts.example.com/webapp/values.schema.json", "properties": {"image": {"$ref": "schemas/image.json#"}}}`, files: map[string]string{"schemas/image.json": img}, values: map[string]any{"image": map[string]any{"repository": "x"}}, err: "tag"},
		{name: "documents that refer to each other", schema: `{"properties": {"image": {"$ref": "schemas/a.json"}}}`, files: map[string]string{"schemas/a.json": `{"properties": {"next": {"$ref": "b.json"}}}`, "schemas/b.json": `{"type": "object", "properties": {"next": {"$ref": "a.json"}}}`}, values: map[string]any{"image": map[string]any{"next": 3}}, err: "next"},
		{name: "unknown $schema", schema: `{"$schema": "` + srv.URL + `/meta.json", "type": "object"}`, err: "does not compile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := readChart(t, "webapp")
			files["values.schema.json"] = []byte(tt.schema)
			for n, d := range tt.files {
				files[n] = []byte(d)
			}
			res, err := Render(context.Background(), Request{Chart: "c", Files: files, ReleaseName: "r", Namespace: "dev", Values: tt.values})
			if tt.err != "" {
				var he *Error
				if !errors.As(err, &he) || he.File != "values.schema.json" || !strings.Contains(he.Reason, tt.err) {
					t.Fatalf("Render = %v, want an *Error on values.schema.json with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Render = %v", err)
			}
			if tt.warn != "" && !containsLine(res.Warnings, "values.schema.json refers to", tt.warn, "not checked") && !containsLine(res.Warnings, "values.schema.json "+tt.warn, "not checked") {
				t.Errorf("warnings = %q, want the dropped reference %q", res.Warnings, tt.warn)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the schema server got %d requests, want 0", n)
	}
	// A chain of references longer than maxSchemaDocs stops.
	files := readChart(t, "webapp")
	files["values.schema.json"] = []byte(`{"$ref": "schemas/0.json"}`)
	for i := 0; i <= maxSchemaDocs; i++ {
		files[fmt.Sprintf("schemas/%d.json", i)] = []byte(fmt.Sprintf(`{"properties": {"x": {"$ref": "%d.json"}}}`, i+1))
	}
	if _, err := Render(context.Background(), Request{Chart: "c", Files: files, ReleaseName: "r", Namespace: "dev"}); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("Render(a chain of %d documents) = %v, want a refusal", maxSchemaDocs+1, err)
	}
	// The chart's own schema still validates.
	_, err := Render(context.Background(), Request{Chart: "c", Files: readChart(t, "webapp"), ReleaseName: "r", Namespace: "dev", Values: map[string]any{"replicaCount": -1}})
	var he *Error
	if !errors.As(err, &he) || !strings.Contains(he.Reason, "schema") {
		t.Errorf("Render(replicaCount -1) = %v, want the schema's refusal", err)
	}
}

func TestRenderLookupAndRandomWarn(t *testing.T) {
	noExec(t)
	files := chartWith(map[string]string{
		"secret.yaml": `{{- $s := lookup "v1" "Secret" .Release.Namespace "db" }}
apiVersion: v1
kind: Secret
metadata: {name: db}
stringData:
  password: {{ if $s }}{{ index $s.data "password" | b64dec }}{{ else }}{{ randAlphaNum 16 }}{{ end }}
  host: {{ getHostByName "db.example.com" | quote }}
`,
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stamp}\ndata: {at: {{ now | date \"2006\" | quote }}, found: {{ (lookup \"v1\" \"ConfigMap\" \"dev\" \"x\") | len | quote }}}\n",
	})
	res, err := Render(context.Background(), Request{Chart: "c", Files: files, ReleaseName: "r", Namespace: "dev"})
	if err != nil {
		t.Fatalf("Render = %v", err)
	}
	for _, w := range [][]string{
		{"templates/secret.yaml calls lookup", "returns nothing"},
		{"templates/secret.yaml calls randAlphaNum", "every render differs", "set the value in the values file"},
		{"templates/secret.yaml calls getHostByName"},
		{"templates/cm.yaml calls now", "every render differs"},
		{"templates/cm.yaml calls lookup"},
	} {
		if !containsLine(res.Warnings, w...) {
			t.Errorf("warnings = %q, want one with %q", res.Warnings, w)
		}
	}
	s := find(res.Objects, "Secret", "db")
	if pw, _, _ := unstructured.NestedString(s.Object, "stringData", "password"); len(pw) != 16 {
		t.Errorf("password = %q, want lookup's not-found branch (16 random characters)", pw)
	}
	if h, _, _ := unstructured.NestedString(s.Object, "stringData", "host"); h != "" {
		t.Errorf("getHostByName = %q, want \"\"", h)
	}
	if n, _, _ := unstructured.NestedString(find(res.Objects, "ConfigMap", "stamp").Object, "data", "found"); n != "0" {
		t.Errorf("len (lookup ...) = %q, want 0", n)
	}
}

func TestRenderCapabilities(t *testing.T) {
	noExec(t)
	files := chartWith(map[string]string{"caps.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: caps}
data:
  version: {{ .Capabilities.KubeVersion.Version | quote }}
  minor: {{ .Capabilities.KubeVersion.Minor | quote }}
  widgets: {{ .Capabilities.APIVersions.Has "example.com/v1/Widget" | quote }}
  apps: {{ .Capabilities.APIVersions.Has "apps/v1" | quote }}
`})
	for _, tt := range []struct {
		caps                    Capabilities
		version, minor, widgets string
	}{
		{Capabilities{}, DefaultKubeVersion, "37", "false"},
		{Capabilities{KubeVersion: "v1.31.4", APIVersions: []string{"example.com/v1", "example.com/v1/Widget"}}, "v1.31.4", "31", "true"},
	} {
		res, err := Render(context.Background(), Request{Chart: "c", Files: files, ReleaseName: "r", Namespace: "dev", Capabilities: tt.caps})
		if err != nil {
			t.Fatalf("Render(%+v) = %v", tt.caps, err)
		}
		data, _, _ := unstructured.NestedStringMap(res.Objects[0].Object, "data")
		want := map[string]string{"version": tt.version, "minor": tt.minor, "widgets": tt.widgets, "apps": "true"}
		if diff := cmp.Diff(want, data); diff != "" {
			t.Errorf("Render(%+v) capabilities (-want +got):\n%s", tt.caps, diff)
		}
	}
	// The chart's kubeVersion constraint is checked against them.
	_, err := Render(context.Background(), Request{Chart: "c", Files: readChart(t, "webapp"), ReleaseName: "r", Namespace: "dev", Capabilities: Capabilities{KubeVersion: "v1.20.0"}})
	var he *Error
	if !errors.As(err, &he) || he.File != "Chart.yaml" || !strings.Contains(he.Reason, "requires Kubernetes >=1.25.0-0") {
		t.Errorf("Render(webapp on 1.20) = %v, want the kubeVersion refusal", err)
	}
}

// TestHelmSchemeRegistrations pins what importing Helm does to
// client-go's global scheme: it adds apiextensions.k8s.io v1 and v1beta1
// (pkg/chart/common lists the known API versions) and nothing else, so
// every other kind decodes as before.
func TestHelmSchemeRegistrations(t *testing.T) {
	want := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextv1.AddToScheme, apiextv1beta1.AddToScheme} {
		if err := add(want); err != nil {
			t.Fatal(err)
		}
	}
	got := clientgoscheme.Scheme.AllKnownTypes()
	for gvk := range want.AllKnownTypes() {
		if _, ok := got[gvk]; !ok {
			t.Errorf("the global scheme lacks %s", gvk)
		}
	}
	for gvk, typ := range got {
		if w, ok := want.AllKnownTypes()[gvk]; !ok || w != typ {
			t.Errorf("the global scheme holds %s as %v, not client-go's own", gvk, typ)
		}
	}
}

// TestRenderHelmignore: files the chart's .helmignore excludes (a file,
// a folder, a glob) and hidden files under templates/ (Helm's default
// rule) are not loaded: not rendered, not in .Files.
func TestRenderHelmignore(t *testing.T) {
	noExec(t)
	files := chartWith(map[string]string{
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: files}\ndata:\n  notes: {{ .Files.Get \"notes.txt\" | quote }}\n  kept: {{ .Files.Get \"kept.txt\" | quote }}\n  scratch: {{ len (.Files.Glob \"scratch/**\") | quote }}\n",
		// Would not render: ignored by name, by glob, by Helm's default.
		"broken.yaml":  "{{ fail \"broken.yaml was loaded\" }}\n",
		"old.yaml.bak": "{{ fail \"old.yaml.bak was loaded\" }}\n",
		".draft.yaml":  "{{ fail \".draft.yaml was loaded\" }}\n",
	})
	files[".helmignore"] = []byte("# not for the chart\nnotes.txt\nscratch/\n*.bak\ntemplates/broken.yaml\n")
	files["notes.txt"] = []byte("internal notes")
	files["kept.txt"] = []byte("kept")
	files["scratch/a.yaml"] = []byte("a: 1\n")
	res, err := Render(context.Background(), Request{Chart: "c", Files: files, ReleaseName: "r", Namespace: "dev"})
	if err != nil {
		t.Fatalf("Render = %v, want the ignored templates left out", err)
	}
	cm := find(res.Objects, "ConfigMap", "files")
	for key, want := range map[string]string{"notes": "", "kept": "kept", "scratch": "0"} {
		if got, _, _ := unstructured.NestedString(cm.Object, "data", key); got != want {
			t.Errorf("data.%s = %q, want %q", key, got, want)
		}
	}
	if len(res.Objects) != 1 {
		t.Errorf("rendered %d objects, want the ConfigMap alone", len(res.Objects))
	}

	files[".helmignore"] = bytes.Repeat([]byte("x\n"), maxHelmignoreBytes)
	var he *Error
	if _, err := Render(context.Background(), Request{Chart: "c", Files: files, ReleaseName: "r", Namespace: "dev"}); !errors.As(err, &he) || he.File != ".helmignore" {
		t.Errorf("Render with a huge .helmignore = %v, want a refusal naming it", err)
	}
}
