package deployplan

import (
	"context"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/envconfig"
	"sigs.k8s.io/yaml"
)

// BenchmarkRenderHelm renders charts the way a plan does, from git
// (file://) with a values file per environment, each against the same
// objects committed as plain manifests in a kustomize folder: helmrender's
// testdata chart webapp (a ServiceAccount, a ConfigMap, a Service, a
// Deployment and a pre-install hook Job, helpers, a values schema) and the
// real public chart podinfo 6.14.1 with its own values-prod.yaml (two
// Deployments, two Services, a ConfigMap, an HPA; its chart tests are
// left out):
//
//	go test -tags kustomize_disable_go_plugin_support -run '^$' -bench BenchmarkRenderHelm -benchmem -count 5 -cpu 1 ./deployplan/
//
// Peak memory is measured per case in a process of its own (BENCHMARKS.md).
func BenchmarkRenderHelm(b *testing.B) {
	dir := helmRepo(b)
	for p, d := range chartTestdata(b, "public/podinfo", "charts/podinfo") {
		if p == "charts/podinfo/values-prod.yaml" {
			p = "envs/prod/podinfo.yaml"
		}
		writeFiles(b, dir, map[string]string{p: d})
	}
	for _, ch := range []struct {
		name string
		helm *envconfig.HelmSource
		path string
		objs int
	}{
		{"webapp", &envconfig.HelmSource{ReleaseName: "shop", ValueFiles: []string{"../../envs/dev/values.yaml"}}, "charts/webapp", 5},
		{"podinfo", &envconfig.HelmSource{ReleaseName: "podinfo", ValueFiles: []string{"../../envs/prod/podinfo.yaml"}}, "charts/podinfo", 6},
	} {
		chartEnv := &envconfig.Environment{Name: "dev", Namespace: "dev", Catalog: "catalog.json",
			Source: envconfig.Source{Repo: "file://" + dir, Ref: "master", Path: ch.path, Helm: ch.helm, KubeVersion: "v1.37.2"}}
		// The same objects as plain manifests.
		local := &envconfig.Environment{Name: "dev", Namespace: "dev", Catalog: "catalog.json", ConfigDir: dir,
			Source: envconfig.Source{Path: ch.path, Helm: ch.helm, KubeVersion: "v1.37.2"}}
		r, err := Render(context.Background(), local)
		if err != nil {
			b.Fatal(err)
		}
		if len(r.Objects) != ch.objs {
			b.Fatalf("%s renders %d objects, want %d", ch.name, len(r.Objects), ch.objs)
		}
		var res []string
		files := map[string]string{}
		for i, o := range r.Objects {
			y, err := yaml.Marshal(o.Object)
			if err != nil {
				b.Fatal(err)
			}
			name := strings.ToLower(o.GetKind()) + "-" + string(rune('a'+i)) + ".yaml"
			files["plain-"+ch.name+"/"+name] = string(y)
			res = append(res, name)
		}
		files["plain-"+ch.name+"/kustomization.yaml"] = "resources: [" + strings.Join(res, ", ") + "]\n"
		writeFiles(b, dir, files)
		commitAll(b, dir)
		plainEnv := &envconfig.Environment{Name: "dev", Namespace: "dev", Catalog: "catalog.json",
			Source: envconfig.Source{Repo: "file://" + dir, Ref: "master", Path: "plain-" + ch.name}}
		for _, c := range []struct {
			name string
			env  *envconfig.Environment
		}{{ch.name + "/chart", chartEnv}, {ch.name + "/plain", plainEnv}} {
			b.Run(c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					r, err := Render(context.Background(), c.env)
					if err != nil || len(r.Objects) != ch.objs {
						b.Fatalf("Render(%s) = %v, %v; want %d objects", c.name, r, err, ch.objs)
					}
				}
			})
		}
	}
}
