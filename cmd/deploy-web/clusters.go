package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/fleetset"
	"github.com/hanzoai/deploy-web/kubeview"
)

// clusterTarget is a configured cluster and its client configuration.
type clusterTarget struct {
	cfg fleetset.Cluster
	rc  *rest.Config
}

// clusterTargets are the clusters serve reads: the clusters file's, or the
// one cluster of the flags.
func clusterTargets(cfg serveConfig, rc *rest.Config) ([]clusterTarget, error) {
	if cfg.Clusters == "" {
		namespaces := splitList(cfg.Namespaces)
		if len(namespaces) == 0 {
			return nil, errors.New("--namespaces: give at least one platform namespace")
		}
		if _, err := fleetset.ParseAppResource(cfg.AppResource); err != nil {
			return nil, fmt.Errorf("--app-resource: %w", err)
		}
		name := cfg.ClusterName
		if name == "" {
			name = fleetset.DefaultName(true, "")
		}
		if !fleetset.ValidName(name) {
			return nil, fmt.Errorf("--cluster-name: %q is not a DNS label (lower-case letters, digits and '-', at most 63)", name)
		}
		c := fleetset.Cluster{Name: name, Context: cfg.Context, Kubeconfig: cfg.Kubeconfig, InCluster: cfg.Kubeconfig == "" && cfg.Context == "",
			Namespaces: namespaces, AppResource: cfg.AppResource}
		return []clusterTarget{{cfg: c, rc: rc}}, nil
	}
	for _, f := range []struct{ name, value, def string }{
		{"--namespaces", cfg.Namespaces, ""}, {"--kubeconfig", cfg.Kubeconfig, ""}, {"--context", cfg.Context, ""},
		{"--cluster-name", cfg.ClusterName, ""}, {"--app-resource", cfg.AppResource, fleetset.DefaultAppResource},
	} {
		if f.value != f.def {
			return nil, fmt.Errorf("%s: not with --clusters (each cluster of the file sets its own)", f.name)
		}
	}
	cs, err := fleetset.LoadFile(cfg.Clusters)
	if err != nil {
		return nil, fmt.Errorf("--clusters: %w", err)
	}
	out := make([]clusterTarget, len(cs))
	for i, c := range cs {
		rc, err := c.RESTConfig()
		if err != nil {
			return nil, fmt.Errorf("--clusters: %w", err)
		}
		out[i] = clusterTarget{cfg: c, rc: rc}
	}
	return out, nil
}

// member is a started cluster: its clients and cache.
type member struct {
	cfg  fleetset.Cluster
	rc   *rest.Config
	cs   *kubernetes.Clientset
	dyn  dynamic.Interface
	view *kubeview.Cache
	// appKind is the kind of the cluster's App resource, from discovery
	// ("" when the cluster did not answer at start-up).
	appKind string
}

// startClusters builds each cluster's clients and cache and starts the
// informers (on runCtx). With one cluster a namespace that cannot be
// checked fails start-up, as always; with several, a cluster that does not
// answer is started anyway (its rows appear, or go stale, as it comes and
// goes) while a namespace it says does not exist, or may not be read,
// still fails start-up.
func startClusters(ctx, runCtx context.Context, targets []clusterTarget, operatorManagers []string, log *slog.Logger) ([]*member, error) {
	members := make([]*member, len(targets))
	for i, t := range targets {
		rc := dashboardClientConfig(t.rc)
		// The typed clients speak protobuf: the informers decode every pod
		// and ReplicaSet of the fleet at start, and protobuf decodes in a
		// fraction of JSON's time and garbage. The dynamic client (the App
		// CRD) stays on JSON: custom resources have no protobuf encoding.
		tc := rest.CopyConfig(rc)
		tc.ContentType = runtime.ContentTypeProtobuf
		tc.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
		cs, err := kubernetes.NewForConfig(tc)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", t.cfg.Name, err)
		}
		dyn, err := dynamic.NewForConfig(rc)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", t.cfg.Name, err)
		}
		members[i] = &member{cfg: t.cfg, rc: rc, cs: cs, dyn: dyn}
	}
	if len(members) == 1 {
		m := members[0]
		if err := checkNamespaces(ctx, m.cs.CoreV1().Namespaces(), m.cfg.Namespaces); err != nil {
			return nil, err
		}
		kind, err := appResourceKind(m.cs.Discovery(), m.cfg.GVR())
		if err != nil {
			return nil, err
		}
		m.appKind = kind
	} else {
		errs := make([]error, len(members))
		var wg sync.WaitGroup
		for i, m := range members {
			wg.Go(func() {
				reachable, err := checkClusterNamespaces(ctx, m, log)
				if err != nil || !reachable {
					errs[i] = err
					return
				}
				kind, err := appResourceKind(m.cs.Discovery(), m.cfg.GVR())
				if err != nil {
					errs[i] = fmt.Errorf("--clusters: cluster %s: %w", m.cfg.Name, err)
					return
				}
				m.appKind = kind
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
	}
	for _, m := range members {
		view, err := kubeview.New(m.cs, m.dyn, log.With("cluster", m.cfg.Name), kubeview.Options{
			Namespaces: m.cfg.Namespaces, AppResource: m.cfg.GVR(), OperatorManagers: operatorManagers})
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", m.cfg.Name, err)
		}
		m.view = view
		view.Start(runCtx)
	}
	return members, nil
}

// checkClusterNamespaces checks one cluster's namespaces at start-up when
// there are several: an answer that a namespace is missing or forbidden is
// an error; no answer is only logged (reachable false).
func checkClusterNamespaces(ctx context.Context, m *member, log *slog.Logger) (reachable bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, n := range m.cfg.Namespaces {
		_, err := m.cs.CoreV1().Namespaces().Get(ctx, n, metav1.GetOptions{})
		switch {
		case err == nil:
		case apierrors.IsNotFound(err):
			return true, fmt.Errorf("--clusters: cluster %s: namespace %q does not exist", m.cfg.Name, n)
		case apierrors.IsForbidden(err):
			return true, fmt.Errorf("--clusters: cluster %s: may not read namespace %q to check it exists (grant get on it)", m.cfg.Name, n)
		default:
			log.Warn("cluster does not answer at start-up: its rows appear when it does; the panel of its App nodes needs a restart if its App resource is not hanzo.ai's", "cluster", m.cfg.Name, "err", err)
			return false, nil
		}
	}
	return true, nil
}

// appResourceKind asks the API server for the kind of the App resource
// (--app-resource names a resource, the tree's refs a kind): the App node's
// panel accepts refs of that group and kind. A resource the cluster does
// not serve fails start-up, as the App informer could never sync.
func appResourceKind(disc discovery.ServerResourcesInterface, gvr schema.GroupVersionResource) (string, error) {
	list, err := disc.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		return "", fmt.Errorf("--app-resource: the cluster does not serve %s: %w", gvr.GroupVersion(), err)
	}
	for _, r := range list.APIResources {
		if r.Name == gvr.Resource && r.Kind != "" && !strings.Contains(r.Name, "/") {
			return r.Kind, nil
		}
	}
	return "", fmt.Errorf("--app-resource: %s serves no resource %q", gvr.GroupVersion(), gvr.Resource)
}

// homeCluster is the cluster that keeps the plan history and whose client
// the plan engine uses: the in-cluster one, else the first.
func homeCluster(targets []clusterTarget) int {
	for i, t := range targets {
		if t.cfg.InCluster {
			return i
		}
	}
	return 0
}

// envClusters maps each environment of the plan engine to the configured
// cluster it deploys to, when one matches: the in-cluster one for an
// inCluster environment, else the cluster whose name or context is the
// environment's context.
func envClusters(cfg *envconfig.Config, targets []clusterTarget) map[string]string {
	out := map[string]string{}
	for _, e := range cfg.Environments {
		for _, t := range targets {
			c := t.cfg
			if e.Cluster.InCluster && c.InCluster || e.Cluster.Context != "" && (e.Cluster.Context == c.Name || e.Cluster.Context == c.Context) {
				out[e.Name] = c.Name
				break
			}
		}
	}
	return out
}

// envRestConfigs returns the rest config of each environment's own
// cluster for the plan engine, so that the cluster the environments page
// names (envClusters) is the one planned and applied: a configured cluster
// the environment maps to gives that cluster's config; any other
// environment is resolved from its own cluster fields (in-cluster, or its
// kubeconfig and context; without a kubeconfig, serve's --kubeconfig,
// then $KUBECONFIG, then ~/.kube/config) by deployplan.RestConfig. An environment that
// cannot be resolved gets an error, never another cluster's config.
func envRestConfigs(cfg *envconfig.Config, targets []clusterTarget, kubeconfig string) func(env *envconfig.Environment) (*rest.Config, error) {
	mapped := envClusters(cfg, targets)
	byName := map[string]*rest.Config{}
	for _, t := range targets {
		byName[t.cfg.Name] = t.rc
	}
	return func(env *envconfig.Environment) (*rest.Config, error) {
		if name, ok := mapped[env.Name]; ok {
			if rc := byName[name]; rc != nil {
				return rest.CopyConfig(rc), nil
			}
			return nil, fmt.Errorf("environment %s: cluster %s has no client configuration", env.Name, name)
		}
		rc, err := deployplan.RestConfig(env, kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("environment %s: %w", env.Name, err)
		}
		return rc, nil
	}
}
