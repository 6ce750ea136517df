package envconfig

import "cmp"

// ClusterName is the name audit records give the cluster of environment
// e: its name in mapped (the console's configured clusters, by
// environment) when there, else "in-cluster", its kubeconfig context, or
// "kubeconfig" (the default context of the kubeconfig it resolves to).
func (e *Environment) ClusterName(mapped map[string]string) string {
	if n := mapped[e.Name]; n != "" {
		return n
	}
	if e.Cluster.InCluster {
		return "in-cluster"
	}
	return cmp.Or(e.Cluster.Context, "kubeconfig")
}
