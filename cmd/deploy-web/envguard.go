package main

import (
	"fmt"

	"github.com/hanzoai/deploy-web/envconfig"
)

// guardEnvironments checks the environments file against what serve
// keeps for itself: no environment deploys to deploy-web's own namespace
// or to its plan history's (an apply there could replace its service
// account, its session keys or its history), and no local source is
// read from a folder holding a file serve keeps secret (secrets: the OIDC
// client secret and session-key files, the clusters file and its
// kubeconfigs). own is deploy-web's own namespace ("" outside a cluster)
// and ownFrom where it was found.
func guardEnvironments(envCfg *envconfig.Config, historyNS, own, ownFrom string, secrets []string) error {
	if err := envCfg.CheckNamespace(historyNS, "the plan history's, --history-namespace"); err != nil {
		return fmt.Errorf("--environments: %w", err)
	}
	if own != historyNS {
		if err := envCfg.CheckNamespace(own, "from "+ownFrom); err != nil {
			return fmt.Errorf("--environments: %w", err)
		}
	}
	envCfg.KeepOut(secrets...)
	return nil
}

// ownNamespace is deploy-web's own namespace as historyNamespace finds it
// without the flag ($POD_NAMESPACE, else the service account's file), and
// where it came from; "" outside a cluster.
func ownNamespace(getenv func(string) string, readFile func(string) ([]byte, error)) (ns, from string) {
	ns, err := historyNamespace("", getenv, readFile)
	if err != nil {
		return "", ""
	}
	if getenv("POD_NAMESPACE") != "" {
		return ns, "$POD_NAMESPACE"
	}
	return ns, inClusterNamespaceFile
}
