package promotion

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func app(name, version string, health objrules.HealthStatus) kubeview.AppRow {
	return kubeview.AppRow{Name: name, Namespace: "ns", Version: version, Image: "reg.example/" + name + ":" + version,
		Health: objrules.Health{Status: health}, LastDeployed: t0}
}

func threeColumns() []Column {
	return []Column{{Env: "dev", Namespace: "dev"}, {Env: "staging", Namespace: "staging", After: "dev", Soak: 10 * time.Minute},
		{Env: "prod", Namespace: "production", After: "staging", Protected: true, Soak: time.Hour}}
}

// versions is a matrix as "app: v v v" per row, "" for an absent cell and
// a trailing "*" on a marked one.
func versions(m Matrix) []string {
	var out []string
	for _, r := range m.Rows {
		s := r.App + ":"
		for _, c := range r.Cells {
			v := c.Version
			if !c.Present {
				v = "-"
			}
			if c.Differs {
				v += "*"
			}
			s += " " + v
		}
		out = append(out, s)
	}
	return out
}

func TestBuild(t *testing.T) {
	const h = objrules.HealthHealthy
	tests := []struct {
		name string
		cols []Column
		apps map[string][]kubeview.AppRow
		want []string
	}{
		{"one step behind", threeColumns(), map[string][]kubeview.AppRow{
			"dev":     {app("worker", "1.5.0", h), app("api", "1.5.0", h)},
			"staging": {app("api", "1.4.2", h), app("worker", "1.5.0", h)},
			"prod":    {app("api", "1.4.2", h), app("worker", "1.4.2", h)},
		}, []string{"api: 1.5.0 1.4.2* 1.4.2", "worker: 1.5.0 1.5.0 1.4.2*"}},
		{"absent here and there", threeColumns(), map[string][]kubeview.AppRow{
			"dev":  {app("new", "0.1.0", h)},
			"prod": {app("old", "1.0.0", h)},
		}, []string{"new: 0.1.0 -* -", "old: - - 1.0.0*"}},
		{"unavailable column marks nothing", func() []Column {
			c := threeColumns()
			c[1].Unavailable = "namespace staging is not watched"
			return c
		}(), map[string][]kubeview.AppRow{
			"dev":     {app("api", "1.5.0", h)},
			"staging": {app("api", "9.9.9", h)},
			"prod":    {app("api", "1.4.2", h)},
		}, []string{"api: 1.5.0 - 1.4.2"}},
		{"no promotion order", []Column{{Env: "a"}, {Env: "b"}}, map[string][]kubeview.AppRow{
			"a": {app("api", "1", h)}, "b": {app("api", "2", h)},
		}, []string{"api: 1 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, versions(Build(tt.cols, tt.apps))); diff != "" {
				t.Errorf("Build() versions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSameRelease(t *testing.T) {
	c := func(v, digest string) Cell { return Cell{Present: true, Version: v, Digest: digest} }
	tests := []struct {
		name string
		a, b Cell
		want bool
	}{
		{"same version", c("1.0", ""), c("1.0", ""), true},
		{"another version", c("1.0", ""), c("1.1", ""), false},
		{"same version, one digest", c("1.0", "sha256:aa"), c("1.0", ""), true},
		{"same version, other digest", c("1.0", "sha256:aa"), c("1.0", "sha256:bb"), false},
		{"absent", Cell{}, c("1.0", ""), false},
	}
	for _, tt := range tests {
		if got := SameRelease(tt.a, tt.b); got != tt.want {
			t.Errorf("SameRelease(%s) = %t, want %t", tt.name, got, tt.want)
		}
	}
}

func TestBuildDigest(t *testing.T) {
	r := app("api", "1.0", objrules.HealthHealthy)
	r.Image = "reg.example/api:1.0@sha256:0123"
	m := Build([]Column{{Env: "dev"}}, map[string][]kubeview.AppRow{"dev": {r}})
	if got, _ := m.Cell("api", "dev"); got.Digest != "sha256:0123" {
		t.Errorf("Build().Cell(api, dev).Digest = %q, want sha256:0123", got.Digest)
	}
	if _, ok := m.Cell("api", "prod"); ok {
		t.Errorf("Cell(api, prod) found a cell of an environment the matrix does not have")
	}
}

func TestFilter(t *testing.T) {
	const h = objrules.HealthHealthy
	m := Build(threeColumns(), map[string][]kubeview.AppRow{
		"dev":     {app("api", "1.5.0", h), app("worker", "1.4.2", objrules.HealthDegraded), app("web", "1.0", h)},
		"staging": {app("api", "1.4.2", h), app("worker", "1.4.2", h), app("web", "1.0", h)},
		"prod":    {app("api", "1.4.2", h), app("worker", "1.4.2", h), app("web", "1.0", h)},
	})
	tests := []struct {
		q    Query
		want []string
	}{
		{Query{}, []string{"api", "web", "worker"}},
		{Query{Search: "W"}, []string{"web", "worker"}},
		{Query{Differs: true}, []string{"api"}},
		{Query{Health: objrules.HealthDegraded}, []string{"worker"}},
		{Query{Search: "api", Health: objrules.HealthDegraded}, nil},
	}
	for _, tt := range tests {
		var got []string
		for _, r := range m.Filter(tt.q).Rows {
			got = append(got, r.App)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Filter(%+v) (-want +got):\n%s", tt.q, diff)
		}
	}
}
