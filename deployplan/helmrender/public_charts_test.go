package helmrender

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The charts under testdata/public are real public charts, vendored as a
// platform team would (see testdata/public/README.md): podinfo 6.14.1
// (hooks, chart tests, a .helmignore) and bjw-s app-template 4.1.1 with
// its library chart common 4.1.1 vendored as `helm dependency build`
// leaves it (charts/common-4.1.1.tgz beside Chart.lock), whose schema
// refers to the library's by URL.

func appTemplateFiles(t *testing.T) map[string][]byte {
	files := readChart(t, "public/app-template")
	files["charts/common-4.1.1.tgz"] = tgz(t, "common", readChart(t, "public/common"))
	return files
}

func TestRenderPodinfo(t *testing.T) {
	noExec(t)
	files := readChart(t, "public/podinfo")
	res, err := Render(context.Background(), Request{
		Chart: "charts/podinfo", Files: files, ReleaseName: "podinfo", Namespace: "apps",
		// The chart's own production values, then hooks turned on.
		ValuesFiles: []ValuesFile{{Name: "charts/podinfo/values-prod.yaml", Data: files["values-prod.yaml"]}},
		Values: map[string]any{"hooks": map[string]any{
			"preInstall":  map[string]any{"job": map[string]any{"enabled": true}},
			"postUpgrade": map[string]any{"job": map[string]any{"enabled": true}},
			"preDelete":   map[string]any{"job": map[string]any{"enabled": true}},
		}},
		Capabilities: Capabilities{KubeVersion: "v1.37.2"},
	})
	if err != nil {
		t.Fatalf("Render(podinfo) = %v", err)
	}
	want := []string{"Deployment/podinfo", "HorizontalPodAutoscaler/podinfo", "Job/podinfo-post-upgrade", "Job/podinfo-pre-install",
		"ConfigMap/podinfo-redis", "Deployment/podinfo-redis", "Service/podinfo-redis", "Service/podinfo"}
	got := objNames(res.Objects)
	if strings.Join(sorted(got), " ") != strings.Join(sorted(want), " ") {
		t.Errorf("objects = %q, want %q", got, want)
	}
	if img := image(t, find(res.Objects, "Deployment", "podinfo")); img != "ghcr.io/stefanprodan/podinfo:6.14.1" {
		t.Errorf("podinfo image = %q", img)
	}
	if img := image(t, find(res.Objects, "Deployment", "podinfo-redis")); img != "redis:8.8.0" {
		t.Errorf("redis image = %q (values-prod.yaml sets 8.8.0)", img)
	}
	for _, o := range res.Objects {
		if o.GetNamespace() != "" && o.GetNamespace() != "apps" {
			t.Errorf("%s/%s in namespace %q, want apps", o.GetKind(), o.GetName(), o.GetNamespace())
		}
	}
	if HookPhase(find(res.Objects, "Job", "podinfo-pre-install")) != PhasePre || HookPhase(find(res.Objects, "Job", "podinfo-post-upgrade")) != PhasePost {
		t.Error("podinfo's pre-install Job is not PhasePre or its post-upgrade Job not PhasePost")
	}
	// The delete hook and the chart tests are left out and told; the
	// tests' randAlphaNum changes nothing applied, so no drift warning.
	if !containsLine(res.Warnings, "templates/hooks/job.yaml", "podinfo-pre-delete", "left out") {
		t.Errorf("warnings = %q, want the pre-delete hook left out", res.Warnings)
	}
	if !containsLine(res.Warnings, "test hook(s) left out", "templates/tests/") {
		t.Errorf("warnings = %q, want one line for the chart tests", res.Warnings)
	}
	if containsLine(res.Warnings, "randAlphaNum") {
		t.Errorf("warnings = %q: randAlphaNum is called only by chart tests, which are left out", res.Warnings)
	}
	if len(res.Warnings) != 2 {
		t.Errorf("warnings = %q, want exactly the two above", res.Warnings)
	}
	if res.ChartVersion != "6.14.1" || res.KubeVersion != "v1.37.2" {
		t.Errorf("ChartVersion, KubeVersion = %q, %q", res.ChartVersion, res.KubeVersion)
	}
	// The chart asks for Kubernetes >=1.23: an older cluster is refused.
	_, err = Render(context.Background(), Request{Chart: "charts/podinfo", Files: files, ReleaseName: "podinfo", Namespace: "apps", Capabilities: Capabilities{KubeVersion: "v1.22.0"}})
	var he *Error
	if !errors.As(err, &he) || he.File != "Chart.yaml" || !strings.Contains(he.Reason, ">=1.23.0-0") {
		t.Errorf("Render(podinfo for v1.22) = %v, want the chart's kubeVersion refusal", err)
	}
}

// appValues is an app as app-template's users write one: a controller
// with a container, a Service and an Ingress.
const appValues = `
controllers:
  main:
    strategy: RollingUpdate
    containers:
      main:
        image:
          repository: ghcr.io/example/echo
          tag: 1.2.3
        env:
          LOG_LEVEL: info
        probes:
          liveness:
            enabled: true
service:
  main:
    controller: main
    ports:
      http:
        port: 8080
ingress:
  main:
    hosts:
      - host: echo.example.com
        paths:
          - path: /
            service:
              identifier: main
              port: http
persistence:
  data:
    type: emptyDir
`

func TestRenderAppTemplate(t *testing.T) {
	noExec(t)
	res, err := Render(context.Background(), Request{
		Chart: "charts/app-template", Files: appTemplateFiles(t), ReleaseName: "echo", Namespace: "apps",
		ValuesFiles: []ValuesFile{{Name: "envs/dev/values.yaml", Data: []byte(appValues)}},
	})
	if err != nil {
		t.Fatalf("Render(app-template) = %v", err)
	}
	want := []string{"Deployment/echo", "Ingress/echo", "Service/echo"}
	if got := objNames(res.Objects); strings.Join(sorted(got), " ") != strings.Join(want, " ") {
		t.Errorf("objects = %q, want %q", got, want)
	}
	d := find(res.Objects, "Deployment", "echo")
	if img := image(t, d); img != "ghcr.io/example/echo:1.2.3" {
		t.Errorf("image = %q", img)
	}
	env, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if s := strings.Join(strings.Fields(fmtAny(env)), " "); !strings.Contains(s, "LOG_LEVEL") {
		t.Errorf("containers = %s, want LOG_LEVEL from the values", s)
	}
	// The library's schema is followed from app-template's $ref by URL to
	// the vendored copy (nothing fetched); the files it refers to are not
	// in the packaged library, so that part is not checked, and said.
	if !containsLine(res.Warnings, "charts/common/values.schema.json refers to", "schemas/definitions.json", "not checked") {
		t.Errorf("warnings = %q, want the library's dropped references", res.Warnings)
	}
	_, err = Render(context.Background(), Request{
		Chart: "charts/app-template", Files: appTemplateFiles(t), ReleaseName: "echo", Namespace: "apps",
		ValuesFiles: []ValuesFile{{Name: "envs/dev/values.yaml", Data: []byte(appValues + "global:\n  nameOverride: 5\n")}},
	})
	var he *Error
	if !errors.As(err, &he) || !strings.Contains(he.Reason, "/global/nameOverride") {
		t.Errorf("Render(global.nameOverride: 5) = %v, want the library schema's refusal (followed from app-template's $ref)", err)
	}
	// The library's own validation (a template's fail) is a clear refusal.
	_, err = Render(context.Background(), Request{
		Chart: "charts/app-template", Files: appTemplateFiles(t), ReleaseName: "echo", Namespace: "apps",
		ValuesFiles: []ValuesFile{{Name: "envs/dev/values.yaml", Data: []byte(strings.Replace(appValues, "controller: main", "controller: nope", 1))}},
	})
	if !errors.As(err, &he) || !strings.Contains(he.Reason, "nope") {
		t.Errorf("Render(a Service of an unknown controller) = %v, want the chart's own refusal naming it", err)
	}
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

func fmtAny(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestRenderPodinfoWarningsStable: podinfo's chart tests are named with
// randAlphaNum; the line that leaves them out names each by its kind and
// template, so the warnings are the same at every render (the index
// compares them to tell a change, and a plan's reader sees no churn).
func TestRenderPodinfoWarningsStable(t *testing.T) {
	noExec(t)
	files := readChart(t, "public/podinfo")
	render := func() []string {
		t.Helper()
		res, err := Render(context.Background(), Request{Chart: "charts/podinfo", Files: files, ReleaseName: "podinfo", Namespace: "apps",
			Capabilities: Capabilities{KubeVersion: "v1.37.2"}})
		if err != nil {
			t.Fatalf("Render(podinfo) = %v", err)
		}
		return res.Warnings
	}
	first, second := render(), render()
	if !slices.Equal(first, second) {
		t.Errorf("warnings of two renders differ:\n%q\n%q", first, second)
	}
	want := "chart charts/podinfo: 3 test hook(s) left out, deploy-web does not run chart tests (Pod in templates/tests/grpc.yaml, Pod in templates/tests/jwt.yaml, Pod in templates/tests/service.yaml)"
	if !slices.Contains(first, want) {
		t.Errorf("warnings = %q, want %q", first, want)
	}
}
