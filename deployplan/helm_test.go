package deployplan

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/charttest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// chartTestdata reads a chart of helmrender's testdata as files under
// prefix.
func chartTestdata(t testing.TB, chart, prefix string) map[string]string {
	t.Helper()
	return charttest.Strings(charttest.Chart(t, chart, prefix))
}

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetNamespace()+"/"+o.GetKind()+"/"+o.GetName())
	}
	return out
}

// helmRepo writes a repository with the webapp chart, a values file per
// environment, an overlay that uses the chart through helmCharts, and a
// catalog.
func helmRepo(t testing.TB) string {
	dir := t.TempDir()
	files := chartTestdata(t, "webapp", "charts/webapp")
	files["envs/dev/values.yaml"] = "image:\n  tag: 2.4.0\nreplicaCount: 1\n"
	files["overlays/dev/kustomization.yaml"] = `namespace: dev
namePrefix: dev-
labels:
  - pairs: {team: shop}
helmGlobals:
  chartHome: ../../charts
helmCharts:
  - name: webapp
    version: 1.4.0
    releaseName: shop
    valuesFile: ../../envs/dev/values.yaml
    valuesInline:
      migrations: {enabled: false}
images:
  - name: registry.example.com/team/webapp
    newTag: 2.5.0
patches:
  - target: {kind: Deployment}
    patch: |-
      - op: replace
        path: /spec/replicas
        value: 3
`
	files["catalog.json"] = `{"commit": "` + commitA + `", "services": []}`
	writeFiles(t, dir, files)
	return dir
}

func TestRenderHelmChartFolder(t *testing.T) {
	shimPATH(t)
	dir := helmRepo(t)
	helm := &envconfig.HelmSource{ReleaseName: "shop", ValueFiles: []string{"../../envs/dev/values.yaml"}, Values: map[string]any{"replicaCount": 2}}
	local := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Path: "charts/webapp", Helm: helm, KubeVersion: "v1.33.1"}, Catalog: "catalog.json", ConfigDir: dir}
	commitAll(t, dir)
	git := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: "file://" + dir, Ref: "master", Path: "charts/webapp", Helm: helm}, Catalog: "catalog.json"}
	for _, env := range []*envconfig.Environment{local, git} {
		r, err := Render(context.Background(), env)
		if err != nil {
			t.Fatalf("Render(chart, repo %q) = %v", env.Source.Repo, err)
		}
		want := []string{"dev/ConfigMap/shop-webapp", "dev/Deployment/shop-webapp", "dev/Job/shop-webapp-migrate", "dev/Service/shop-webapp", "dev/ServiceAccount/shop-webapp"}
		if diff := cmp.Diff(want, names(r.Objects)); diff != "" {
			t.Errorf("Render(chart) objects (-want +got):\n%s", diff)
		}
		ws, _ := WorkloadOf(findObj(r.Objects, "Deployment", "shop-webapp"))
		if len(ws.Containers) != 1 || ws.Containers[0].Image != "registry.example.com/team/webapp:2.4.0" {
			t.Errorf("workload = %+v, want the values file's tag", ws)
		}
		if !anyContains(r.Warnings, "test-connection.yaml", "test hook") {
			t.Errorf("warnings = %q, want the test hook left out", r.Warnings)
		}
		if got := anyContains(r.Warnings, "rendered for Kubernetes"); got != (env.Source.KubeVersion == "") {
			t.Errorf("warnings = %q: the assumed Kubernetes version is told %v, want %v", r.Warnings, got, env.Source.KubeVersion == "")
		}
		wantChart := []ChartInfo{{Path: "charts/webapp", Name: "webapp", Version: "1.4.0", Release: "shop", Via: "source.helm",
			ValuesFiles: []string{"envs/dev/values.yaml"}, KubeVersion: cmpOr(strings.TrimPrefix(env.Source.KubeVersion, "v"), "1.37.0"), Objects: 5}}
		wantChart[0].KubeVersion = "v" + wantChart[0].KubeVersion
		if diff := cmp.Diff(wantChart, r.Charts); diff != "" {
			t.Errorf("Render(chart) charts (-want +got):\n%s", diff)
		}
	}
}

func findObj(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func anyContains(lines []string, subs ...string) bool {
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

// TestRenderHelmChartsInKustomization renders a kustomization's helmCharts
// entry in-process and lets the rest of the kustomization transform its
// output: namespace, namePrefix, labels, images and patches.
func TestRenderHelmChartsInKustomization(t *testing.T) {
	shimPATH(t)
	dir := helmRepo(t)
	local := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Path: "overlays/dev"}, Catalog: "catalog.json", ConfigDir: dir}
	commitAll(t, dir)
	git := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: "file://" + dir, Ref: "master", Path: "overlays/dev"}, Catalog: "catalog.json"}
	for _, env := range []*envconfig.Environment{local, git} {
		r, err := Render(context.Background(), env)
		if err != nil {
			t.Fatalf("Render(helmCharts, repo %q) = %v", env.Source.Repo, err)
		}
		want := []string{"dev/ServiceAccount/dev-shop-webapp", "dev/ConfigMap/dev-shop-webapp", "dev/Service/dev-shop-webapp", "dev/Deployment/dev-shop-webapp"}
		if diff := cmp.Diff(want, names(r.Objects)); diff != "" {
			t.Errorf("Render(helmCharts) objects (-want +got):\n%s", diff)
		}
		d := findObj(r.Objects, "Deployment", "dev-shop-webapp")
		ws, _ := WorkloadOf(d)
		if len(ws.Containers) != 1 || ws.Containers[0].Image != "registry.example.com/team/webapp:2.5.0" {
			t.Errorf("workload = %+v, want the images: tag", ws)
		}
		if n, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); n != 3 {
			t.Errorf("replicas = %d, want the patch's 3", n)
		}
		if d.GetLabels()["team"] != "shop" || d.GetLabels()["app.kubernetes.io/instance"] != "shop" {
			t.Errorf("labels = %v, want the chart's and the kustomization's", d.GetLabels())
		}
		sa, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "serviceAccountName")
		if sa != "dev-shop-webapp" {
			t.Errorf("serviceAccountName = %q, want the prefixed name (kustomize's name references)", sa)
		}
		// The entry's valuesInline turns the migration Job off: four.
		if len(r.Charts) != 1 || r.Charts[0].Objects != 4 || r.Charts[0].Via != "overlays/dev/kustomization.yaml" || r.Charts[0].Version != "1.4.0" || r.Charts[0].Release != "shop" ||
			strings.Join(r.Charts[0].ValuesFiles, ",") != "envs/dev/values.yaml" {
			t.Errorf("charts = %+v, want webapp 1.4.0 via overlays/dev/kustomization.yaml with envs/dev/values.yaml", r.Charts)
		}
	}
}

func TestRenderHelmRefusals(t *testing.T) {
	logFile := shimPATH(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.yaml"), []byte("password: hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bomb := "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
	tests := []struct {
		name       string
		valueFiles []string
		extra      map[string]string
		link       [2]string // link path (in the repo) -> target
		gitToo     bool
		wantFile   string
		want       string
	}{
		{name: "symbolic link out of the repository", link: [2]string{"charts/webapp/files/key.yaml", filepath.Join(outside, "secret.yaml")},
			wantFile: "charts/webapp/files/key.yaml", want: "symbolic link", gitToo: true},
		{name: "symbolic link out of the chart, inside the repository", link: [2]string{"charts/webapp/files/cat.json", "../../../catalog.json"},
			wantFile: "charts/webapp/files/cat.json", want: "symbolic link", gitToo: true},
		{name: "values file outside the repository", valueFiles: []string{"../../../../../../../../../" + strings.TrimPrefix(filepath.Join(outside, "secret.yaml"), "/")},
			want: "leaves the repository"},
		{name: "values file missing", valueFiles: []string{"../../envs/prod/values.yaml"}, wantFile: "envs/prod/values.yaml", want: "not in the repository", gitToo: true},
		{name: "values alias bomb", valueFiles: []string{"../../envs/dev/bomb.yaml"}, extra: map[string]string{"envs/dev/bomb.yaml": bomb},
			wantFile: "envs/dev/bomb.yaml", want: "too complex", gitToo: true},
		{name: "repo dependency not vendored", extra: map[string]string{"charts/webapp/Chart.yaml": "apiVersion: v2\nname: webapp\nversion: 1.4.0\ndependencies:\n  - {name: redis, version: 19.x, repository: https://charts.example.com}\n"},
			wantFile: "charts/webapp/Chart.yaml", want: "helm dependency update", gitToo: true},
		{name: "template bomb", extra: map[string]string{"charts/webapp/templates/bomb.yaml": `{{range until 2000000000}}x{{end}}`},
			wantFile: "", want: "until asks for", gitToo: true},
	}
	for _, tt := range tests {
		modes := []string{"local"}
		if tt.gitToo {
			modes = append(modes, "git")
		}
		for _, mode := range modes {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				dir := helmRepo(t)
				writeFiles(t, dir, tt.extra)
				if tt.link[0] != "" {
					p := filepath.Join(dir, tt.link[0])
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.Symlink(tt.link[1], p); err != nil {
						t.Fatal(err)
					}
				}
				helm := &envconfig.HelmSource{ReleaseName: "shop", ValueFiles: tt.valueFiles}
				env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Path: "charts/webapp", Helm: helm}, Catalog: "catalog.json", ConfigDir: dir}
				if mode == "git" {
					commitAll(t, dir)
					env = &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: "file://" + dir, Ref: "master", Path: "charts/webapp", Helm: helm}, Catalog: "catalog.json"}
				}
				_, err := Render(context.Background(), env)
				var ce *ChartError
				if !errors.As(err, &ce) {
					t.Fatalf("Render = %v, want a *ChartError", err)
				}
				if (tt.wantFile != "" && ce.File != tt.wantFile) || !strings.Contains(ce.Reason+" "+ce.Hint, tt.want) {
					t.Errorf("Render error = %q (file %q), want file %q and %q", err, ce.File, tt.wantFile, tt.want)
				}
				if b := ce.Blocker(); b.ID != BlockerHelmChart || len(b.Affected) != 1 {
					t.Errorf("Blocker() = %+v", b)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("Render error %q shows the file outside the repository", err)
				}
			})
		}
	}
	if b, err := os.ReadFile(logFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a program ran while rendering: %q (err %v)", b, err)
	}
}

func TestSortForApplyHooks(t *testing.T) {
	obj := func(kind, name, hook, weight string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"name": name}}}
		if hook != "" {
			a := map[string]string{"helm.sh/hook": hook}
			if weight != "" {
				a["helm.sh/hook-weight"] = weight
			}
			u.SetAnnotations(a)
		}
		return u
	}
	objs := []*unstructured.Unstructured{
		obj("Job", "notify", "post-install,post-upgrade", ""),
		obj("Deployment", "web", "", ""),
		obj("Job", "migrate", "pre-upgrade", "5"),
		obj("ConfigMap", "conf", "", ""),
		obj("ConfigMap", "migrate-conf", "pre-install,pre-upgrade", "-1"),
	}
	sortForApply(objs, nil)
	var got []string
	for _, o := range objs {
		got = append(got, o.GetName())
	}
	want := []string{"migrate-conf", "migrate", "conf", "web", "notify"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sortForApply order (-want +got):\n%s", diff)
	}
}

func TestConfigHelmSource(t *testing.T) {
	for _, tt := range []struct{ name, source, wantField string }{
		{"valid", `{path: charts/webapp, kubeVersion: v1.31.0, helm: {releaseName: shop, valueFiles: [../../envs/dev/values.yaml], values: {replicaCount: 2, image: {tag: "1.2"}}}}`, ""},
		{"unknown key", `{path: charts/webapp, helm: {releaseName: shop, valuesFiles: [x.yaml]}}`, "(dev).source.helm.valuesFiles"},
		{"bad release name", `{path: charts/webapp, helm: {releaseName: Shop_1}}`, "(dev).source.helm.releaseName"},
		{"absolute values file", `{path: charts/webapp, helm: {releaseName: shop, valueFiles: [/etc/passwd]}}`, "(dev).source.helm.valueFiles[0]"},
		{"bad kubeVersion", `{path: charts/webapp, kubeVersion: latest}`, "(dev).source.kubeVersion"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := envconfig.ParseConfig([]byte("environments:\n  - {name: dev, cluster: {context: c}, namespace: dev, catalog: catalog.json, source: "+tt.source+"}\n"), filepath.Join(dir, "cfg"))
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("ParseConfig = %v, want no error", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantField) {
				t.Errorf("ParseConfig = %v, want an error on %s", err, tt.wantField)
			}
		})
	}
}

// TestReleaseVersion: a cluster that reports v0.0.0 (an API server built
// without its version) is no version to render a chart for.
func TestReleaseVersion(t *testing.T) {
	for in, want := range map[string]string{
		"v1.37.2":                   "v1.37.2",
		"v1.30.0-eks-123":           "v1.30.0-eks-123",
		"v0.0.0-master+$Format:%H$": "",
		"v0.0.0":                    "",
		"":                          "",
		"garbage":                   "",
	} {
		if got := releaseVersion(in); got != want {
			t.Errorf("releaseVersion(%q) = %q, want %q", in, got, want)
		}
	}
}
