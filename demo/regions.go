package demo

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/fleetset"
)

// The demo's clusters. The first keeps the name of its kubeconfig context
// (as a cluster of --kubeconfig is named, and as the demo's environments
// name it); the second is a region of its own.
const (
	// HomeCluster is the first cluster: the seeded fleet, the deploy
	// environments and the plan history.
	HomeCluster = "devcluster"
	// SecondCluster is the second cluster, with a few Apps in states of
	// their own (SecondFleet).
	SecondCluster = "eu-west"
	// ClustersFileName is the clusters file (--clusters) in the demo folder.
	ClustersFileName = "clusters.yaml"
)

// SecondNamespaces are the platform namespaces of SecondCluster.
func SecondNamespaces() []string { return []string{"storefront", "payments"} }

// Member is one running cluster of the demo.
type Member struct {
	// Name is the cluster's name in the console.
	Name string
	// Cluster is its control plane.
	Cluster *devcluster.Cluster
	// Namespaces are its platform namespaces.
	Namespaces []string
}

// secondFleet is SecondCluster's fleet: one App of each state, and cart,
// which the first cluster has too (same namespace and name) at another
// version, so the console must tell the two apart.
func secondFleet() []seedApp {
	const reg = "registry.demo.local/"
	return []seedApp{
		{name: "cart", namespace: "storefront", repo: reg + "storefront/cart", logs: "http",
			base: map[string]any{"replicas": int64(2), "host": "eu.shop.demo.local"},
			releases: []release{
				ok(tag(reg+"storefront/cart", "3.1.0")), ok(tag(reg+"storefront/cart", "3.2.0")), ok(tag(reg+"storefront/cart", "3.3.0")),
			},
			expectHealth: "Healthy", expectSync: "Synced"},
		{name: "pricing", namespace: "storefront", repo: reg + "storefront/pricing", logs: "crash",
			base: map[string]any{"replicas": int64(2), "progressDeadlineSeconds": int64(25)},
			releases: []release{
				ok(tag(reg+"storefront/pricing", "2.0.0")), ok(tag(reg+"storefront/pricing", "2.1.0")),
				// 2.2.0 crashes on start: Degraded once the deadline passes, 2.1.0 keeps serving.
				{spec: with(tag(reg+"storefront/pricing", "2.2.0"), "podLabels", map[string]any{devcluster.BehaviorLabel: devcluster.BehaviorCrashLoop})},
			},
			expectHealth: "Degraded", expectSync: "OutOfSync"},
		{name: "inventory", namespace: "storefront", repo: reg + "storefront/inventory", logs: "http",
			// A long deadline: the stuck pull stays Progressing for the hour.
			base: map[string]any{"replicas": int64(2), "progressDeadlineSeconds": int64(3600)},
			releases: []release{
				ok(tag(reg+"storefront/inventory", "1.4.0")),
				// A tag that was never pushed: the new pod waits in ImagePullBackOff.
				{spec: with(tag(reg+"storefront/inventory", "1.5.0"), "podLabels", map[string]any{devcluster.BehaviorLabel: devcluster.BehaviorImagePull})},
			},
			expectHealth: "Progressing", expectSync: "OutOfSync"},
		{name: "vat", namespace: "payments", repo: reg + "payments/vat", logs: "worker",
			base:         map[string]any{"replicas": int64(2)},
			releases:     []release{ok(tag(reg+"payments/vat", "1.0.0")), ok(tag(reg+"payments/vat", "1.1.0"))},
			expectHealth: "Healthy", expectSync: "Synced"},
		{name: "settlement", namespace: "payments", repo: reg + "payments/settlement", logs: "worker",
			base:         map[string]any{"replicas": int64(1)},
			releases:     []release{ok(tag(reg+"payments/settlement", "0.9.0")), ok(tag(reg+"payments/settlement", "1.0.0"))},
			expectHealth: "Healthy", expectSync: "Synced"},
	}
}

// writeClustersFile writes the clusters file (fleetset's format) naming
// every member with its kubeconfig and namespaces, and checks it loads.
func writeClustersFile(dir string, members []Member) (string, error) {
	cs := make([]fleetset.Cluster, len(members))
	for i, m := range members {
		cs[i] = fleetset.Cluster{Name: m.Name, Kubeconfig: m.Cluster.Kubeconfig, Namespaces: m.Namespaces}
	}
	b, err := yaml.Marshal(cs)
	if err != nil {
		return "", fmt.Errorf("demo: clusters file: %w", err)
	}
	path := filepath.Join(dir, ClustersFileName)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return "", fmt.Errorf("demo: clusters file: %w", err)
	}
	if _, err := fleetset.LoadFile(path); err != nil {
		return "", fmt.Errorf("demo: %w", err)
	}
	return path, nil
}
