package deployplan

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/charttest"
)

// TestRenderAppTemplateInKustomization: the real public chart bjw-s
// app-template 4.1.1, vendored with its library chart as `helm dependency
// build` leaves it (charts/common-4.1.1.tgz and Chart.lock), rendered by a
// kustomization's helmCharts entry with a values file per environment and
// transformed by the rest of the kustomization, from git, with recording
// helm, git and sh shims first on PATH that never run.
func TestRenderAppTemplateInKustomization(t *testing.T) {
	shimPATH(t)
	dir := t.TempDir()
	files := chartTestdata(t, "public/app-template", "charts/app-template")
	files["charts/app-template/charts/common-4.1.1.tgz"] = string(charttest.Pack(t, "common", charttest.Chart(t, "public/common", "")))
	files["envs/dev/echo.yaml"] = `controllers:
  main:
    containers:
      main:
        image: {repository: ghcr.io/example/echo, tag: 1.2.3}
service:
  main:
    controller: main
    ports:
      http: {port: 8080}
`
	files["overlays/dev/kustomization.yaml"] = `namespace: dev
namePrefix: dev-
labels:
  - pairs: {team: edge}
helmGlobals:
  chartHome: ../../charts
helmCharts:
  - name: app-template
    version: 4.1.1
    releaseName: echo
    valuesFile: ../../envs/dev/echo.yaml
images:
  - name: ghcr.io/example/echo
    newTag: 1.2.4
`
	files["catalog.json"] = `{"commit": "` + commitA + `", "services": []}`
	writeFiles(t, dir, files)
	commitAll(t, dir)
	env := &envconfig.Environment{Name: "dev", Namespace: "dev", Source: envconfig.Source{Repo: "file://" + dir, Ref: "master", Path: "overlays/dev", KubeVersion: "v1.37.2"}, Catalog: "catalog.json"}
	r, err := Render(context.Background(), env)
	if err != nil {
		t.Fatalf("Render(app-template) = %v", err)
	}
	if diff := cmp.Diff([]string{"dev/Service/dev-echo", "dev/Deployment/dev-echo"}, names(r.Objects)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	d := findObj(r.Objects, "Deployment", "dev-echo")
	ws, _ := WorkloadOf(d)
	if len(ws.Containers) != 1 || ws.Containers[0].Image != "ghcr.io/example/echo:1.2.4" {
		t.Errorf("workload = %+v, want the images: tag over the values file's", ws)
	}
	if d.GetLabels()["team"] != "edge" || d.GetLabels()["app.kubernetes.io/instance"] != "echo" {
		t.Errorf("labels = %v, want the chart's and the kustomization's", d.GetLabels())
	}
	if len(r.Charts) != 1 || r.Charts[0].Name != "app-template" || r.Charts[0].Version != "4.1.1" {
		t.Errorf("charts = %+v, want app-template 4.1.1", r.Charts)
	}
	if !anyContains(r.Warnings, "charts/common/values.schema.json refers to", "not checked") {
		t.Errorf("warnings = %q, want the library's schema references not followed", r.Warnings)
	}
}
