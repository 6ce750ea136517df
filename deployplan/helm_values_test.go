package deployplan

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/hanzoai/deploy-web/envconfig"
)

func TestChartValuesOf(t *testing.T) {
	chart := map[string]string{
		"charts/web/Chart.yaml":            "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"charts/web/values.yaml":           "image: {tag: \"0.1\"}\n",
		"charts/web/templates/cm.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n",
		"envs/dev.yaml":                    "image: {tag: \"1.0\"}\n",
		"overlays/dev/values.yaml":         "image: {tag: \"2.0\"}\n",
		"overlays/dev/more.yaml":           "replicas: 2\n",
		"overlays/dev/kustomization.yaml":  "helmGlobals: {chartHome: ../../charts}\nhelmCharts:\n  - {name: web, releaseName: web, valuesFile: values.yaml, additionalValuesFiles: [more.yaml], valuesInline: {port: 80}}\n",
		"overlays/repl/kustomization.yaml": "helmGlobals: {chartHome: ../../charts}\nhelmCharts:\n  - {name: web, valuesFile: ../dev/values.yaml, valuesMerge: replace}\n",
		"overlays/bomb/kustomization.yaml": "helmGlobals: {chartHome: ../../charts}\nhelmCharts:\n  - {name: web, valuesFile: bomb.yaml}\n",
		"overlays/bomb/bomb.yaml":          "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n",
	}
	tree := fstest.MapFS{}
	for p, s := range chart {
		tree[p] = &fstest.MapFile{Data: []byte(s)}
	}
	type layer struct {
		File, Inline string
		Values       map[string]any
	}
	tests := []struct {
		name   string
		source envconfig.Source
		want   []layer
		kust   string
	}{
		{"source.helm", envconfig.Source{Repo: "file:///m.git", Ref: "main", Path: "charts/web", Helm: &envconfig.HelmSource{ReleaseName: "web", ValueFiles: []string{"../../envs/dev.yaml"}, Values: map[string]any{"x": "y"}}},
			[]layer{{File: "charts/web/values.yaml", Values: map[string]any{"image": map[string]any{"tag": "0.1"}}}, {File: "envs/dev.yaml", Values: map[string]any{"image": map[string]any{"tag": "1.0"}}}, {Inline: InlineSource, Values: map[string]any{"x": "y"}}}, ""},
		{"helmCharts", envconfig.Source{Repo: "file:///m.git", Ref: "main", Path: "overlays/dev"},
			[]layer{{File: "charts/web/values.yaml", Values: map[string]any{"image": map[string]any{"tag": "0.1"}}}, {File: "overlays/dev/values.yaml", Values: map[string]any{"image": map[string]any{"tag": "2.0"}}},
				{File: "overlays/dev/more.yaml", Values: map[string]any{"replicas": float64(2)}}, {Inline: InlineHelmCharts, Values: map[string]any{"port": float64(80)}}}, "overlays/dev/kustomization.yaml"},
		// valuesMerge: replace renders without the files: they are no layer.
		{"helmCharts, valuesMerge replace", envconfig.Source{Repo: "file:///m.git", Ref: "main", Path: "overlays/repl"},
			[]layer{{File: "charts/web/values.yaml", Values: map[string]any{"image": map[string]any{"tag": "0.1"}}}, {Inline: InlineHelmCharts}}, "overlays/repl/kustomization.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cvs, err := ChartValuesOf(context.Background(), &envconfig.Environment{Name: "dev", Namespace: "apps", Source: tt.source}, tree)
			if err != nil || len(cvs) != 1 {
				t.Fatalf("ChartValuesOf = %+v, %v; want one chart", cvs, err)
			}
			var got []layer
			for _, l := range cvs[0].Layers {
				got = append(got, layer(l))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" || cvs[0].Chart != "charts/web" || cvs[0].Kustomization != tt.kust {
				t.Errorf("ChartValuesOf = chart %s of %q, layers (-want +got):\n%s", cvs[0].Chart, cvs[0].Kustomization, diff)
			}
		})
	}
	_, err := ChartValuesOf(context.Background(), &envconfig.Environment{Name: "dev", Namespace: "apps", Source: envconfig.Source{Repo: "file:///m.git", Ref: "main", Path: "overlays/bomb"}}, tree)
	var ce *ChartError
	if !errors.As(err, &ce) || ce.File != "overlays/bomb/bomb.yaml" {
		t.Errorf("ChartValuesOf(an alias bomb) = %v, want a ChartError naming the file", err)
	}
}
