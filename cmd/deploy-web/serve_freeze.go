package main

import (
	"log/slog"
	"os"

	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/handlers"
	"github.com/hanzoai/deploy-web/internal/sign"
)

// freezeGate is the deploy freezes of serve: the freezes ConfigMap in
// deploy-web's own namespace of the home cluster (the plan history's and
// the audit trail's, historyNamespace), read through one freeze.Gate by
// every write path (the handlers' release seam and envrun's runs). nil
// when there is no such namespace (outside a cluster without
// --history-namespace or $POD_NAMESPACE): nothing can be frozen then, said
// once in the log. keys sign the freezes (the audit store's key).
func freezeGate(cfg serveConfig, cms typedcorev1.ConfigMapsGetter, keys sign.Keys, log *slog.Logger) *freeze.Gate {
	ns, err := historyNamespace(cfg.HistoryNamespace, os.Getenv, os.ReadFile)
	if err != nil {
		log.Warn("no deploy freezes: deploy-web has no namespace of its own to keep them in", "err", err)
		return nil
	}
	log.Info("deploy freezes", "namespace", ns, "configmap", freeze.ConfigMapName)
	if keys == nil {
		log.Warn("no deploy freezes: no audit trail holds the key that signs them")
		return nil
	}
	return freeze.NewGate(freeze.NewStore(cms, ns, keys))
}

// stateKeys is the key that signs the freezes, pauses and promotion
// requests: the audit store's (nil without one: then there are none).
func stateKeys(store *audit.Store) sign.Keys {
	if store == nil {
		return nil
	}
	return store
}

// handlerFreezes is g for handlers.Options (a nil interface without one).
func handlerFreezes(g *freeze.Gate) handlers.Freezes {
	if g == nil {
		return nil
	}
	return g
}

// envrunFreezes is g for envrun.Options (a nil interface without one).
func envrunFreezes(g *freeze.Gate) envrun.Freezes {
	if g == nil {
		return nil
	}
	return g
}
