package deployplan

import (
	"context"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/envconfig"
	"sigs.k8s.io/yaml"
)

// BenchmarkRenderHelm renders a real chart (helmrender's testdata
// webapp: a ServiceAccount, a ConfigMap, a Service, a Deployment and a
// pre-install hook Job, helpers, a values schema) the way a plan does,
// from git (file://) with a values file per environment, against the same
// objects committed as plain manifests in a kustomize folder:
//
//	go test -tags kustomize_disable_go_plugin_support -run '^$' -bench BenchmarkRenderHelm -benchmem -count 5 -cpu 1 ./deployplan/
//
// Peak memory is measured per case in a process of its own (BENCHMARKS.md).
func BenchmarkRenderHelm(b *testing.B) {
	dir := helmRepo(b)
	helm := &envconfig.HelmSource{ReleaseName: "shop", ValueFiles: []string{"../../envs/dev/values.yaml"}}
	chartEnv := &envconfig.Environment{Name: "dev", Namespace: "dev", Catalog: "catalog.json",
		Source: envconfig.Source{Repo: "file://" + dir, Ref: "master", Path: "charts/webapp", Helm: helm, KubeVersion: "v1.37.2"}}
	// The same objects as plain manifests.
	local := &envconfig.Environment{Name: "dev", Namespace: "dev", Catalog: "catalog.json", ConfigDir: dir,
		Source: envconfig.Source{Path: "charts/webapp", Helm: helm, KubeVersion: "v1.37.2"}}
	r, err := Render(context.Background(), local)
	if err != nil {
		b.Fatal(err)
	}
	var docs, res []string
	for _, o := range r.Objects {
		y, err := yaml.Marshal(o.Object)
		if err != nil {
			b.Fatal(err)
		}
		name := strings.ToLower(o.GetKind()) + ".yaml"
		docs = append(docs, name, string(y))
		res = append(res, name)
	}
	files := map[string]string{"plain/kustomization.yaml": "resources: [" + strings.Join(res, ", ") + "]\n"}
	for i := 0; i < len(docs); i += 2 {
		files["plain/"+docs[i]] = docs[i+1]
	}
	writeFiles(b, dir, files)
	commitAll(b, dir)
	plainEnv := &envconfig.Environment{Name: "dev", Namespace: "dev", Catalog: "catalog.json",
		Source: envconfig.Source{Repo: "file://" + dir, Ref: "master", Path: "plain"}}
	for _, c := range []struct {
		name string
		env  *envconfig.Environment
	}{{"chart", chartEnv}, {"plain", plainEnv}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := Render(context.Background(), c.env)
				if err != nil || len(r.Objects) != 5 {
					b.Fatalf("Render(%s) = %v, %v; want 5 objects", c.name, r, err)
				}
			}
		})
	}
}
