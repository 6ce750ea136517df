package demo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/yaml"

	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/fleetset"
)

// TestDemoConfigsDecodeAsBefore: the demo's environments.yaml and
// clusters.yaml load through the strict decoder to what
// sigs.k8s.io/yaml made of them.
func TestDemoConfigsDecodeAsBefore(t *testing.T) {
	dir := t.TempDir()
	// Without and with the demo's Prometheus (metrics and checks).
	for _, promURL := range []string{"", "http://127.0.0.1:9090"} {
		envs := []byte(environmentsYAML("file://"+filepath.Join(dir, manifestRepoDir), filepath.Join(dir, "kubeconfig"), promURL))
		var old envconfig.Config
		if err := yaml.UnmarshalStrict(envs, &old); err != nil {
			t.Fatalf("environments.yaml (Prometheus %q), the old decoder: %v", promURL, err)
		}
		got, err := envconfig.ParseConfig(envs, dir)
		if err != nil {
			t.Fatalf("environments.yaml (Prometheus %q): ParseConfig = %v", promURL, err)
		}
		if diff := cmp.Diff(&old, got, cmpopts.IgnoreUnexported(envconfig.Environment{}), cmpopts.IgnoreFields(envconfig.Environment{}, "ConfigDir")); diff != "" {
			t.Errorf("environments.yaml (Prometheus %q) decodes differently (-old +new):\n%s", promURL, diff)
		}
	}

	var members []Member
	for _, m := range []struct {
		name       string
		namespaces []string
	}{{HomeCluster, []string{"storefront", "payments"}}, {SecondCluster, SecondNamespaces()}} {
		kc := filepath.Join(dir, m.name+".kubeconfig")
		if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		members = append(members, Member{Name: m.name, Cluster: &devcluster.Cluster{Kubeconfig: kc}, Namespaces: m.namespaces})
	}
	path, err := writeClustersFile(dir, members)
	if err != nil {
		t.Fatalf("writeClustersFile = %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var oldCs []fleetset.Cluster
	if err := yaml.UnmarshalStrict(data, &oldCs); err != nil {
		t.Fatalf("clusters.yaml, the old decoder: %v", err)
	}
	for i := range oldCs {
		oldCs[i].AppResource = fleetset.DefaultAppResource // Parse's default
	}
	cs, err := fleetset.LoadFile(path)
	if err != nil {
		t.Fatalf("clusters.yaml: LoadFile = %v", err)
	}
	if diff := cmp.Diff(oldCs, cs); diff != "" {
		t.Errorf("clusters.yaml decodes differently (-old +new):\n%s", diff)
	}
}
