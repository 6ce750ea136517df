package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/fleetset"
)

const testKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: secret-token-value}}]
contexts: [{name: admin@eu, context: {cluster: c, user: u}}]
current-context: admin@eu
`

func TestClusterTargets(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "eu.kubeconfig"), []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "clusters.yaml")
	if err := os.WriteFile(file, []byte("- {name: eu-west, kubeconfig: eu.kubeconfig, namespaces: [shop]}\n- {name: us, kubeconfig: eu.kubeconfig, context: admin@eu, namespaces: [shop, pay]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rc := &rest.Config{Host: "https://flags"}
	base := serveConfig{Namespaces: "shop", AppResource: fleetset.DefaultAppResource}
	for _, tt := range []struct {
		name      string
		cfg       func(c *serveConfig)
		wantNames []string
		wantErr   string
	}{
		{"flags: one cluster, in-cluster by default", func(c *serveConfig) {}, []string{"in-cluster"}, ""},
		{"flags: --cluster-name", func(c *serveConfig) { c.ClusterName = "prod" }, []string{"prod"}, ""},
		{"flags: a bad --cluster-name", func(c *serveConfig) { c.ClusterName = "../prod" }, nil, `--cluster-name: "../prod" is not a DNS label`},
		{"flags: no namespaces", func(c *serveConfig) { c.Namespaces = "" }, nil, "--namespaces: give at least one"},
		{"flags: a bad App resource", func(c *serveConfig) { c.AppResource = "apps" }, nil, "--app-resource:"},
		{"file", func(c *serveConfig) { c.Namespaces, c.Clusters = "", file }, []string{"eu-west", "us"}, ""},
		{"file and --namespaces", func(c *serveConfig) { c.Clusters = file }, nil, "--namespaces: not with --clusters"},
		{"file and --cluster-name", func(c *serveConfig) { c.Namespaces, c.Clusters, c.ClusterName = "", file, "x" }, nil, "--cluster-name: not with --clusters"},
		{"file and --app-resource", func(c *serveConfig) { c.Namespaces, c.Clusters, c.AppResource = "", file, "w.v1.example.com" }, nil, "--app-resource: not with --clusters"},
		{"a missing file", func(c *serveConfig) { c.Namespaces, c.Clusters = "", filepath.Join(dir, "nope.yaml") }, nil, "--clusters: fleetset: read clusters file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base
			tt.cfg(&cfg)
			got, err := clusterTargets(cfg, rc)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("clusterTargets() error = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "secret-token-value") {
					t.Errorf("clusterTargets() error = %v, shows a credential", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("clusterTargets() error = %v", err)
			}
			var names []string
			for _, tg := range got {
				names = append(names, tg.cfg.Name)
				if tg.rc == nil {
					t.Errorf("cluster %s: no client configuration", tg.cfg.Name)
				}
			}
			if diff := cmp.Diff(tt.wantNames, names); diff != "" {
				t.Errorf("clusterTargets() names mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvClusters(t *testing.T) {
	targets := []clusterTarget{
		{cfg: fleetset.Cluster{Name: "home", InCluster: true}},
		{cfg: fleetset.Cluster{Name: "eu-west", Kubeconfig: "/k", Context: "admin@eu"}},
		{cfg: fleetset.Cluster{Name: "devcluster", Kubeconfig: "/k"}},
	}
	cfg := &envconfig.Config{Environments: []envconfig.Environment{
		{Name: "a", Cluster: envconfig.ClusterRef{InCluster: true}},
		{Name: "b", Cluster: envconfig.ClusterRef{Context: "admin@eu"}},
		{Name: "c", Cluster: envconfig.ClusterRef{Context: "devcluster"}},
		{Name: "d", Cluster: envconfig.ClusterRef{Context: "elsewhere"}},
	}}
	want := map[string]string{"a": "home", "b": "eu-west", "c": "devcluster"}
	if diff := cmp.Diff(want, envClusters(cfg, targets)); diff != "" {
		t.Errorf("envClusters() mismatch (-want +got):\n%s", diff)
	}
}

// TestEnvRestConfigs: each environment is planned and applied with the
// config of the cluster the environments page names for it (never the
// home cluster's because it is home); one no configured cluster matches
// is resolved from its own kubeconfig and context, and one that cannot be
// resolved gets an error rather than another cluster's config.
func TestEnvRestConfigs(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "own.kubeconfig")
	if err := os.WriteFile(own, []byte(strings.ReplaceAll(testKubeconfig, "127.0.0.1:1", "127.0.0.1:3")), 0o600); err != nil {
		t.Fatal(err)
	}
	targets := []clusterTarget{
		{cfg: fleetset.Cluster{Name: "home", InCluster: true}, rc: &rest.Config{Host: "https://home"}},
		{cfg: fleetset.Cluster{Name: "eu-west", Kubeconfig: "/k", Context: "admin@eu"}, rc: &rest.Config{Host: "https://eu-west"}},
		{cfg: fleetset.Cluster{Name: "devcluster", Kubeconfig: "/k"}, rc: &rest.Config{Host: "https://devcluster"}},
	}
	cfg := &envconfig.Config{Environments: []envconfig.Environment{
		{Name: "a", Cluster: envconfig.ClusterRef{InCluster: true}},
		{Name: "b", Cluster: envconfig.ClusterRef{Context: "admin@eu"}},
		{Name: "c", Cluster: envconfig.ClusterRef{Context: "devcluster"}},
		{Name: "d", Cluster: envconfig.ClusterRef{Context: "admin@eu", Kubeconfig: own}},
		{Name: "e", Cluster: envconfig.ClusterRef{Context: "nowhere", Kubeconfig: own}},
		{Name: "f", Cluster: envconfig.ClusterRef{Context: "admin@eu", Kubeconfig: filepath.Join(dir, "missing.kubeconfig")}},
	}}
	// d names context admin@eu, which eu-west's is: it is mapped (and
	// shown) as eu-west, so it is eu-west's config, not its own file's.
	wantHost := map[string]string{"a": "https://home", "b": "https://eu-west", "c": "https://devcluster", "d": "https://eu-west"}
	shown := envClusters(cfg, targets)
	resolve := envRestConfigs(cfg, targets, "")
	hostOf := map[string]string{}
	for _, tg := range targets {
		hostOf[tg.cfg.Name] = tg.rc.Host
	}
	for i := range cfg.Environments {
		env := &cfg.Environments[i]
		rc, err := resolve(env)
		if want, ok := wantHost[env.Name]; ok {
			if err != nil || rc.Host != want {
				t.Errorf("environment %s: config = %v, %v; want host %s", env.Name, rc, err, want)
				continue
			}
		}
		if name, ok := shown[env.Name]; ok && (err != nil || rc.Host != hostOf[name]) {
			t.Errorf("environment %s: the page shows cluster %s (%s) but the plan engine gets %v, %v", env.Name, name, hostOf[name], rc, err)
		}
		if err == nil && rc.Host == "https://home" && env.Name != "a" {
			t.Errorf("environment %s: falls back to the home cluster", env.Name)
		}
	}
	// Unmapped: resolved from the environment's own fields, or an error.
	cfg.Environments = append(cfg.Environments, envconfig.Environment{Name: "g", Cluster: envconfig.ClusterRef{Context: "admin@eu", Kubeconfig: own}})
	targets2 := targets[:1]
	resolve = envRestConfigs(cfg, targets2, "")
	if rc, err := resolve(&cfg.Environments[len(cfg.Environments)-1]); err != nil || rc.Host != "https://127.0.0.1:3" {
		t.Errorf("unmapped environment g: config = %v, %v; want its own kubeconfig's https://127.0.0.1:3", rc, err)
	}
	for _, name := range []string{"e", "f"} {
		env, _ := cfg.Env(name)
		rc, err := resolve(env)
		if err == nil {
			t.Errorf("environment %s (unresolvable): config = %v, want an error", name, rc.Host)
		} else if strings.Contains(err.Error(), "secret-token-value") {
			t.Errorf("environment %s: error %v shows a credential", name, err)
		}
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	env, _ := cfg.Env("a")
	if rc, err := envRestConfigs(cfg, targets[1:], "")(env); err == nil {
		t.Errorf("inCluster environment with no in-cluster target outside a pod: config = %v, want an error", rc.Host)
	}
}
