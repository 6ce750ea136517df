package deployplan

import (
	"context"
	"fmt"
	"github.com/hanzoai/deploy-web/envconfig"
	"strings"
	"testing"
)

// TestSourcePlanBoundary: source-plan knows the environment's namespace:
// a kustomize namespace: other than it, or a cluster-scoped object, is a
// divergence with the id the cluster plan's blocker has (it used to pass
// offline and be blocked by the cluster plan).
func TestSourcePlanBoundary(t *testing.T) {
	deployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  selector: {matchLabels: {app: api}}\n  template:\n    metadata: {labels: {app: api}}\n" +
		"    spec: {containers: [{name: api, image: \"ghcr.io/acme/api:6.14.1@" + digestA + "\"}]}\n"
	role := "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reader}\nrules: []\n"
	tests := []struct {
		name  string
		kust  string
		want  []string // divergence ids
		avoid []string
	}{
		{"the environment's namespace", "namespace: dev\nresources: [d.yaml]\n", nil, []string{"outside-namespace", "cluster-scoped"}},
		{"no namespace (the environment's is used)", "resources: [d.yaml]\n", nil, []string{"outside-namespace"}},
		{"another namespace", "namespace: staging\nresources: [d.yaml]\n", []string{"outside-namespace"}, nil},
		{"a cluster-scoped object", "namespace: dev\nresources: [d.yaml, role.yaml]\n", []string{"cluster-scoped"}, []string{"outside-namespace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"k/kustomization.yaml": tt.kust, "k/d.yaml": deployment, "k/role.yaml": role,
				"catalog.json": fmt.Sprintf(`{"mode": "version", "services": [{"id": "api", "image": "ghcr.io/acme/api", "tag": "6.14.1", "digest": %q, "published": true}]}`, digestA),
			})
			cfg, err := envconfig.ParseConfig([]byte("environments:\n  - {name: dev, cluster: {context: nowhere}, namespace: dev, source: {path: k}, catalog: catalog.json}\n"), dir)
			if err != nil {
				t.Fatal(err)
			}
			env, err := cfg.Env("dev")
			if err != nil {
				t.Fatal(err)
			}
			res, err := SourcePlan(context.Background(), env, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Namespace != "dev" {
				t.Errorf("SourcePlan().Namespace = %q, want dev", res.Namespace)
			}
			var ids []string
			for _, d := range res.Divergences {
				ids = append(ids, d.ID)
			}
			got := strings.Join(ids, " ")
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("SourcePlan(%s) divergences = %q, want %s", tt.name, got, w)
				}
			}
			for _, a := range tt.avoid {
				if strings.Contains(got, a) {
					t.Errorf("SourcePlan(%s) divergences = %q, want no %s", tt.name, got, a)
				}
			}
		})
	}
}
