package templates

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/deployplan"
)

// TestReportHelmCharts: a plan of an environment with Helm charts lists
// each chart with its version, release, values files, the Kubernetes
// version it was rendered for and its objects; names from the repository
// come back escaped; a plan without charts has no such table.
func TestReportHelmCharts(t *testing.T) {
	r := &deployplan.Report{}
	r.DeployApply.Source.Charts = []deployplan.ChartInfo{
		{Path: "charts/podinfo", Name: "podinfo", Version: "6.14.1", Release: "podinfo", Via: "source.helm", ValuesFiles: []string{"envs/dev/values.yaml", "envs/dev/<b>x</b>.yaml"}, KubeVersion: "v1.37.2", Objects: 6},
		{Path: "charts/web", Name: "web", Version: "0.3.0", Release: "web", Via: "overlays/dev/kustomization.yaml", KubeVersion: "v1.37.2", Objects: 2},
	}
	var buf bytes.Buffer
	if err := reportBody(ReportView{Env: "dev", Report: r}).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{`data-testid="helm-charts"`, "charts/podinfo", "6.14.1", "via source.helm", "envs/dev/values.yaml", "v1.37.2", "via overlays/dev/kustomization.yaml", "envs/dev/&lt;b&gt;x&lt;/b&gt;.yaml"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(html, "<b>x") {
		t.Error("a values file's name is not escaped")
	}
	md := r.Markdown()
	if !strings.Contains(md, "## Helm charts") || !strings.Contains(md, "| `charts/web` (web, via overlays/dev/kustomization.yaml) | `0.3.0` | `web` | – | `v1.37.2` | 2 |") {
		t.Errorf("Markdown lacks the charts table:\n%s", md)
	}

	buf.Reset()
	if err := reportBody(ReportView{Env: "dev", Report: &deployplan.Report{}}).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "helm-charts") || strings.Contains((&deployplan.Report{}).Markdown(), "Helm charts") {
		t.Error("a plan without charts shows a charts table")
	}
}
