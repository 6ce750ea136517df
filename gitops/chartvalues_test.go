package gitops

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/writeback"
)

// chartTree is a repository with a chart charts/api whose template
// renders App api with spec.image from imageTmpl, its values.yaml
// chartValues, and the files of extra.
func chartTree(imageTmpl, chartValues string, extra map[string]string) fstest.MapFS {
	tree := fstest.MapFS{
		"charts/api/Chart.yaml":          {Data: []byte("apiVersion: v2\nname: api\nversion: 0.1.0\n")},
		"charts/api/values.yaml":         {Data: []byte(chartValues)},
		"charts/api/templates/app.yaml":  {Data: []byte("apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: api\nspec:\n  image: " + imageTmpl + "\n  replicas: {{ .Values.replicas | default 1 }}\n")},
		"charts/api/templates/note.yaml": {Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api-note\ndata:\n  replicas: {{ .Values.replicas | default 1 | quote }}\n")},
	}
	for p, s := range extra {
		tree[p] = &fstest.MapFile{Data: []byte(s)}
	}
	return tree
}

// chartEnv is environment dev rendering charts/api with source.helm and
// valueFiles (relative to the chart folder), or the kustomize folder
// overlays/dev when valueFiles is nil.
func chartEnv(t *testing.T, helm string) *envconfig.Environment {
	t.Helper()
	source := "{repo: \"file:///m.git\", ref: main, path: overlays/dev}"
	if helm != "" {
		source = "{repo: \"file:///m.git\", ref: main, path: charts/api, helm: " + helm + "}"
	}
	cfg, err := envconfig.ParseConfig([]byte(`environments:
  - name: dev
    cluster: {context: test}
    namespace: apps
    source: `+source+`
    catalog: catalog.json
    writeBack: {mode: push}
`), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &cfg.Environments[0]
}

const (
	repoTagTmpl = `"{{ .Values.image.repository }}:{{ .Values.image.tag }}"`
	oldDigest   = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	newDigest   = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	devHelm     = "{releaseName: api, valueFiles: [../../envs/dev/values.yaml]}"
)

// applyEdits applies edits to a copy of tree.
func applyEdits(t *testing.T, tree fstest.MapFS, edits []writeback.Edit) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	for p, f := range tree {
		out[p] = f
	}
	for _, e := range edits {
		cur, err := fs.ReadFile(out, e.Target())
		if err != nil {
			t.Fatalf("edit of %s: %v", e.Target(), err)
		}
		b, err := e.Apply(cur)
		if err != nil {
			t.Fatalf("edit of %s: %v", e.Target(), err)
		}
		out[e.Target()] = &fstest.MapFile{Data: b}
	}
	return out
}

func TestChartValuesEdits(t *testing.T) {
	tests := []struct {
		name  string
		helm  string // source.helm; "" renders overlays/dev
		tmpl  string
		chart string // the chart's values.yaml
		extra map[string]string
		want  appcr.ImageRef
		// files are the files the edits change, with a substring of each
		// one's new content.
		files map[string]string
	}{
		{
			name: "repository and tag, the tag in the environment's values file", helm: devHelm, tmpl: repoTagTmpl,
			chart: "image:\n  repository: ghcr.io/acme/api\n  tag: 1.0.0\n",
			extra: map[string]string{"envs/dev/values.yaml": "# dev\nreplicas: 2\nimage:\n  # the release dev runs\n  tag: 1.1.0 # bumped by CI\n"},
			want:  appcr.ImageRef{Repository: "ghcr.io/acme/api", Tag: "1.0.0"},
			files: map[string]string{"envs/dev/values.yaml": "# dev\nreplicas: 2\nimage:\n  # the release dev runs\n  tag: 1.0.0 # bumped by CI\n"},
		},
		{
			// The chart's values.yaml (shared by every environment) holds
			// the tag: the environment's own file gets the key.
			name: "tag alone, set by the chart's defaults", helm: devHelm, tmpl: `"ghcr.io/acme/api:{{ .Values.tag }}"`,
			chart: "tag: 1.1.0\n",
			extra: map[string]string{"envs/dev/values.yaml": "replicas: 2\n"},
			want:  appcr.ImageRef{Repository: "ghcr.io/acme/api", Tag: "1.0.0"},
			files: map[string]string{"envs/dev/values.yaml": "replicas: 2\ntag: 1.0.0\n"},
		},
		{
			name: "the whole image in one value", helm: devHelm, tmpl: `"{{ .Values.image }}"`,
			chart: "image: ghcr.io/acme/api:0.9.0\n",
			extra: map[string]string{"envs/dev/values.yaml": "image: \"ghcr.io/acme/api:1.1.0\"\n"},
			want:  appcr.ImageRef{Repository: "ghcr.io/acme/api", Tag: "1.0.0"},
			files: map[string]string{"envs/dev/values.yaml": "image: \"ghcr.io/acme/api:1.0.0\"\n"},
		},
		{
			name: "a digest key", helm: devHelm, tmpl: `"{{ .Values.image.repository }}@{{ .Values.image.digest }}"`,
			chart: "image:\n  repository: ghcr.io/acme/api\n",
			extra: map[string]string{"envs/dev/values.yaml": "image:\n  digest: " + oldDigest + "\n"},
			want:  appcr.ImageRef{Repository: "ghcr.io/acme/api", Digest: newDigest},
			files: map[string]string{"envs/dev/values.yaml": "image:\n  digest: " + newDigest + "\n"},
		},
		{
			name: "tag and digest keys", helm: devHelm, tmpl: `"{{ .Values.image.repository }}:{{ .Values.image.tag }}{{ with .Values.image.digest }}@{{ . }}{{ end }}"`,
			chart: "image:\n  repository: ghcr.io/acme/api\n",
			extra: map[string]string{"envs/dev/values.yaml": "image:\n  tag: 1.1.0\n  digest: " + oldDigest + "\n"},
			want:  appcr.ImageRef{Repository: "ghcr.io/acme/api", Tag: "1.0.0", Digest: newDigest},
			files: map[string]string{"envs/dev/values.yaml": "image:\n  tag: 1.0.0\n  digest: " + newDigest + "\n"},
		},
		{
			name: "a tag key alone takes a digest with it", helm: devHelm, tmpl: repoTagTmpl,
			chart: "image:\n  repository: ghcr.io/acme/api\n",
			extra: map[string]string{"envs/dev/values.yaml": "image:\n  tag: 1.1.0\n"},
			want:  appcr.ImageRef{Repository: "ghcr.io/acme/api", Tag: "1.0.0", Digest: newDigest},
			files: map[string]string{"envs/dev/values.yaml": "tag: 1.0.0@" + newDigest},
		},
		{
			name: "kustomize helmCharts: the overlay's valuesInline", tmpl: repoTagTmpl,
			chart: "image:\n  repository: ghcr.io/acme/api\n  tag: 0.9.0\n",
			extra: map[string]string{
				"overlays/dev/kustomization.yaml": "namespace: apps\nhelmGlobals: {chartHome: ../../charts}\nhelmCharts:\n  - name: api\n    releaseName: api\n    valuesInline:\n      image:\n        tag: 1.1.0\n",
			},
			want:  appcr.ImageRef{Repository: "ghcr.io/acme/api", Tag: "1.0.0"},
			files: map[string]string{"overlays/dev/kustomization.yaml": "    valuesInline:\n      image:\n        tag: 1.0.0\n"},
		},
		{
			name: "kustomize helmCharts: the overlay's values file", tmpl: repoTagTmpl,
			chart: "image:\n  repository: ghcr.io/acme/api\n  tag: 0.9.0\n",
			extra: map[string]string{
				"overlays/dev/kustomization.yaml": "namespace: apps\nhelmGlobals: {chartHome: ../../charts}\nhelmCharts:\n  - {name: api, releaseName: api, valuesFile: values.yaml}\n",
				"overlays/dev/values.yaml":        "image:\n  tag: 1.1.0\n",
			},
			want:  appcr.ImageRef{Repository: "ghcr.io/acme/api", Tag: "1.0.0"},
			files: map[string]string{"overlays/dev/values.yaml": "image:\n  tag: 1.0.0\n"},
		},
		{
			// A values file every environment shares sets the tag: the
			// overlay's own valuesInline overrides it.
			name: "kustomize helmCharts: a shared values file is not written", tmpl: repoTagTmpl,
			chart: "image:\n  repository: ghcr.io/acme/api\n  tag: 0.9.0\n",
			extra: map[string]string{
				"overlays/dev/kustomization.yaml": "namespace: apps\nhelmGlobals: {chartHome: ../../charts}\nhelmCharts:\n  - {name: api, releaseName: api, valuesFile: ../common/values.yaml}\n",
				"overlays/common/values.yaml":     "image:\n  tag: 1.1.0\n",
			},
			want:  appcr.ImageRef{Repository: "ghcr.io/acme/api", Tag: "1.0.0"},
			files: map[string]string{"overlays/dev/kustomization.yaml": "valuesInline:"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := chartTree(tt.tmpl, tt.chart, tt.extra)
			env := chartEnv(t, tt.helm)
			edits, ok, err := chartValuesEdits(context.Background(), tree, env, "hanzo.ai", "App", "api", tt.want)
			if err != nil || !ok {
				t.Fatalf("chartValuesEdits = %v, %v; want edits", ok, err)
			}
			edited := applyEdits(t, tree, edits)
			for p, f := range tree {
				if want, named := tt.files[p]; named {
					if got := string(edited[p].Data); got == string(f.Data) || !strings.Contains(got, want) {
						t.Errorf("%s after the edit = %q, want it changed, containing %q", p, got, want)
					}
				} else if string(edited[p].Data) != string(f.Data) {
					t.Errorf("%s changed: %q; want only %v written", p, edited[p].Data, tt.files)
				}
			}
			// The edited tree renders the App at the version asked for.
			if err := checkRenderedImage(context.Background(), env, edited, "hanzo.ai", "App", "api", tt.want.Repository, tt.want.Tag); tt.want.Digest == "" && err != nil {
				t.Errorf("the edited tree: %v", err)
			}
			objs, err := deployplan.RenderFS(context.Background(), env, edited)
			if err != nil {
				t.Fatal(err)
			}
			if img, _ := appImage(objs, "hanzo.ai", "App", "api"); appcr.ParseImageRef(img) != tt.want {
				t.Errorf("the edited tree renders api at %q, want %s", img, tt.want)
			}
		})
	}
}

func TestChartValuesEditsRefused(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
	deep := "image:\n  tag: 1.1.0\n"
	for i := range 20 {
		deep += strings.Repeat("  ", i) + "k:\n"
	}
	deep += strings.Repeat("  ", 20) + "x: 1.1.0\n"
	tests := []struct {
		name  string
		helm  string
		tmpl  string
		chart string
		extra map[string]string
		want  string // a substring of the refusal
	}{
		{"no key holds the image", devHelm, `"ghcr.io/acme/api:1.1.0"`, "replicas: 1\n", map[string]string{"envs/dev/values.yaml": "replicas: 2\n"},
			"add image.repository and image.tag"},
		{"two keys hold the tag", devHelm, `"registry.example/{{ .Values.path }}/api:{{ .Values.image.tag }}"`, "path: 1.1.0\n",
			map[string]string{"envs/dev/values.yaml": "image:\n  tag: 1.1.0\n"}, "set by several values (image.tag, path)"},
		{"source.helm.values sets it", "{releaseName: api, valueFiles: [../../envs/dev/values.yaml], values: {image: {tag: 1.1.0}}}", repoTagTmpl,
			"image:\n  repository: ghcr.io/acme/api\n", map[string]string{"envs/dev/values.yaml": "replicas: 2\n"}, "source.helm.values of environment dev sets image.tag"},
		{"no values file of its own", "{releaseName: api}", repoTagTmpl, "image:\n  repository: ghcr.io/acme/api\n  tag: 1.1.0\n", nil,
			"charts/api/values.yaml sets image.tag (the image of the App) and environment dev has no values file of its own"},
		{"an alias bomb in the values file", devHelm, repoTagTmpl, "image:\n  repository: ghcr.io/acme/api\n",
			map[string]string{"envs/dev/values.yaml": "image:\n  tag: 1.1.0\n" + bomb}, "cannot be read"},
		{"values nested too deep", devHelm, repoTagTmpl, "image:\n  repository: ghcr.io/acme/api\n",
			map[string]string{"envs/dev/values.yaml": deep}, "values nested deeper than 16 keys"},
		{"digest pinned, tag asked for", devHelm, `"{{ .Values.image.repository }}@{{ .Values.image.digest }}"`, "image:\n  repository: ghcr.io/acme/api\n",
			map[string]string{"envs/dev/values.yaml": "image:\n  digest: " + oldDigest + "\n"}, "pins App api's image by digest (image.digest)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := chartTree(tt.tmpl, tt.chart, tt.extra)
			_, ok, err := chartValuesEdits(context.Background(), tree, chartEnv(t, tt.helm), "hanzo.ai", "App", "api", appcr.ImageRef{Repository: "ghcr.io/acme/api", Tag: "1.0.0"})
			var e *Error
			if !ok || !errors.As(err, &e) || e.Kind != KindUnprocessable || !strings.Contains(e.Public, tt.want) {
				t.Fatalf("chartValuesEdits = %v, %v; want a 422 refusal containing %q", ok, err, tt.want)
			}
		})
	}
}

// TestChartValuesEditsNoChart: an environment of plain manifests renders
// no chart: the locator leaves it to Locate.
func TestChartValuesEditsNoChart(t *testing.T) {
	env := &envconfig.Environment{Name: "dev", Namespace: "apps", Source: envconfig.Source{Repo: "file:///m.git", Ref: "main", Path: "overlays/dev"}}
	edits, ok, err := chartValuesEdits(context.Background(), manifestTree(""), env, "hanzo.ai", "App", "api", appcr.ImageRef{Repository: "reg.example/acme/api", Tag: "1.1.0"})
	if ok || err != nil || edits != nil {
		t.Fatalf("chartValuesEdits(plain manifests) = %v, %v, %v; want not ok", edits, ok, err)
	}
}

// TestVersionEditsManifestsBesideAChart: an overlay that renders a chart
// beside plain manifests: the App of the manifests is Locate's (a patch
// that overrides it is refused with Locate's reason, not a chart's).
func TestVersionEditsManifestsBesideAChart(t *testing.T) {
	tree := manifestTree("helmGlobals: {chartHome: ../../charts}\nhelmCharts:\n  - {name: api, releaseName: other}\n" +
		"patches:\n  - target: {kind: App, name: api}\n    path: pin.yaml\n")
	for p, f := range chartTree(`"ghcr.io/acme/other:{{ .Values.tag }}"`, "tag: 3.0.0\n", nil) {
		tree[p] = f
	}
	tree["charts/api/templates/app.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: other\nspec:\n  image: \"ghcr.io/acme/other:{{ .Values.tag }}\"\n")}
	tree["overlays/dev/pin.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: hanzo.ai/v1\nkind: App\nmetadata:\n  name: api\nspec:\n  image: reg.example/acme/api:1.2.0\n")}
	env := &envconfig.Environment{Name: "dev", Namespace: "apps", Source: envconfig.Source{Repo: "file:///m.git", Ref: "main", Path: "overlays/dev"}}
	ch := writeback.ImageChange{Dir: "overlays/dev", Kind: "App", Name: "api", Repository: "reg.example/acme/api", Tag: "1.1.0"}
	_, err := versionEdits(context.Background(), tree, env, "hanzo.ai", ch, 0)
	var le *locateError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "a patch sets App api's spec.image") {
		t.Fatalf("versionEdits = %v, want Locate's refusal of the patch", err)
	}
	// The chart's own App is found in its values: the tag is the chart's
	// default, so the overlay's valuesInline overrides it.
	ch = writeback.ImageChange{Dir: "overlays/dev", Kind: "App", Name: "other", Repository: "ghcr.io/acme/other", Tag: "2.0.0"}
	edits, err := versionEdits(context.Background(), tree, env, "hanzo.ai", ch, 0)
	if err != nil || len(edits) != 1 || edits[0].Target() != "overlays/dev/kustomization.yaml" {
		t.Fatalf("versionEdits(other) = %+v, %v; want the overlay's valuesInline", edits, err)
	}
	if got := string(applyEdits(t, tree, edits)["overlays/dev/kustomization.yaml"].Data); !strings.Contains(got, "valuesInline: {tag: 2.0.0}") {
		t.Errorf("the overlay after the edit = %q, want valuesInline with tag 2.0.0", got)
	}
}
