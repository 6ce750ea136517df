package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
)

// startAudit builds the audit store in namespace ns of the cluster of rc
// and cs (serve: the home cluster, deploy-web's own namespace), starts its
// index in the background on ctx (until it syncs, List reads the records
// with paged List calls) and runs its retention under the Lease, with
// identity naming this replica. The index and the retention log their
// errors: a replica without the rights still serves, and says why its
// audit pages are empty.
func startAudit(ctx context.Context, rc *rest.Config, cs kubernetes.Interface, ns, identity string, keep audit.Policy, log *slog.Logger) (*audit.Store, error) {
	meta, err := metadata.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("audit store: %w", err)
	}
	store, err := audit.New(cs.CoreV1(), meta, audit.Options{Namespace: ns, Log: log.With("component", "audit")})
	if err != nil {
		return nil, err
	}
	ret, err := audit.NewRetainer(store, cs.CoordinationV1(), audit.RetainerOptions{Identity: identity,
		Retention: audit.Retention{Default: keep}})
	if err != nil {
		return nil, err
	}
	go func() {
		if err := store.Start(ctx); err != nil && ctx.Err() == nil {
			log.Warn("audit index not started: the audit pages read the records directly", "namespace", ns, "err", err)
		}
	}()
	go func() {
		if err := ret.Run(ctx); err != nil {
			log.Error("audit retention stopped", "namespace", ns, "err", err)
		}
	}()
	log.Info("audit trail", "namespace", ns, "identity", identity)
	return store, nil
}

// replicaIdentity names this replica in the retention Lease: $POD_NAME
// (the deployment sets it from the pod's name), else the host name and
// the process id.
func replicaIdentity(getenv func(string) string, hostname func() (string, error), pid int) string {
	if p := getenv("POD_NAME"); p != "" {
		return p
	}
	h, err := hostname()
	if err != nil || h == "" {
		h = "deploy-web"
	}
	return h + "-" + strconv.Itoa(pid)
}

// envCluster is the cluster an environment's records name: the configured
// cluster it maps to (mapped, see envClusters), else its kubeconfig
// context, else "in-cluster" or "kubeconfig" (the default context of the
// kubeconfig it resolves to).
func envCluster(env *deployplan.Environment, mapped map[string]string) string {
	if n := mapped[env.Name]; n != "" {
		return n
	}
	if env.Cluster.InCluster {
		return "in-cluster"
	}
	return cmp.Or(env.Cluster.Context, "kubeconfig")
}
