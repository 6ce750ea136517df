package deployplan

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/objrules"
)

// RestConfig resolves the environment's cluster: the in-cluster config, or
// its context in the kubeconfig named by the environment, else kubeconfig
// (the --kubeconfig flag), else $KUBECONFIG, else ~/.kube/config.
func RestConfig(env *envconfig.Environment, kubeconfig string) (*rest.Config, error) {
	if env.Cluster.InCluster {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("deployplan: in-cluster config: %w", err)
		}
		return cfg, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	switch {
	case env.Cluster.Kubeconfig != "":
		rules.ExplicitPath = env.Resolve(env.Cluster.Kubeconfig)
	case kubeconfig != "":
		rules.ExplicitPath = kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: env.Cluster.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("deployplan: kubeconfig context %q: %w", env.Cluster.Context, err)
	}
	return cfg, nil
}

// clients reaches one cluster.
type clients struct {
	host   string
	dyn    dynamic.Interface
	meta   metadata.Interface
	kube   kubernetes.Interface
	disc   discovery.DiscoveryInterface
	mapper meta.ResettableRESTMapper
	// env is the environment whose marker (EnvironmentAnnotation) every
	// apply and dry-run stamps on the objects it sends; "" stamps none.
	env string
	// force keeps the objects whose apply and dry-run take over the
	// fields other managers own (Options.Force); nil forces none.
	force *ObjectFilter
}

// ClientConfig is a copy of cfg as the engine's clients use it: a 30 s
// timeout when none is set, its user agent, and at least the request
// budget ClientQPS, ClientBurst (client-go's default, 5/s burst 10,
// throttles a plan of a few dozen objects by seconds). Every client that
// reads or writes an environment's objects for a run (the plan, the
// apply, the console's object diffs) is built from it.
func ClientConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	cfg.UserAgent = "deploy-web/plan"
	if cfg.QPS < ClientQPS {
		cfg.QPS = ClientQPS
	}
	if cfg.Burst < ClientBurst {
		cfg.Burst = ClientBurst
	}
	if cfg.RateLimiter != nil {
		cfg.RateLimiter = nil // a limiter set by the caller would override the budget
	}
	return cfg
}

func newClients(cfg *rest.Config) (*clients, error) {
	cfg = ClientConfig(cfg)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("deployplan: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("deployplan: %w", err)
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("deployplan: %w", err)
	}
	disc := memory.NewMemCacheClient(kube.Discovery())
	return &clients{host: cfg.Host, dyn: dyn, meta: md, kube: kube, disc: disc, mapper: restmapper.NewDeferredDiscoveryRESTMapper(disc)}, nil
}

func (c *clients) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.mapper.Reset()
		m, err = c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	return m, err
}

func (c *clients) scope(gvk schema.GroupVersionKind) (namespaced, known bool) {
	m, err := c.mapping(gvk)
	if err != nil {
		return false, false
	}
	return m.Scope.Name() == meta.RESTScopeNameNamespace, true
}

func (c *clients) resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, schema.GroupVersionResource, error) {
	m, err := c.mapping(u.GroupVersionKind())
	if err != nil {
		return nil, schema.GroupVersionResource{}, err
	}
	return c.dyn.Resource(m.Resource).Namespace(u.GetNamespace()), m.Resource, nil
}

// get returns the live object, nil when it does not exist. A Secret is read
// as metadata only: its values never reach this process.
func (c *clients) get(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ri, gvr, err := c.resource(u)
	if err != nil {
		return nil, err
	}
	if isSecret(u) {
		pom, err := c.meta.Resource(gvr).Namespace(u.GetNamespace()).Get(ctx, u.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return metadataOnly(pom, u)
	}
	live, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

// metadataOnly turns a Secret read through the metadata API into the only
// part of it deploy-web keeps: name, namespace, labels, uid and
// resourceVersion, and deploy-web's own SecretHashAnnotation. Other
// annotations go (kubectl's last-applied-configuration
// annotation of a Secret holds its data), and so do managedFields (their
// field sets name the keys) and everything else: nothing of a Secret beyond
// these fields can reach a capture, a report, the history or a log.
// It is the one guard: a live Secret is read (get) and applied (apply)
// only through the metadata client, whose answer comes here, so no path
// of this package holds a Secret's data to serialise.
func metadataOnly(pom *metav1.PartialObjectMetadata, like *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if pom == nil {
		return nil, fmt.Errorf("deployplan: empty metadata answer for %s", key(like))
	}
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(like.GetAPIVersion())
	out.SetKind(like.GetKind())
	out.SetName(pom.Name)
	out.SetNamespace(pom.Namespace)
	out.SetUID(pom.UID)
	out.SetResourceVersion(pom.ResourceVersion)
	if len(pom.Labels) > 0 {
		out.SetLabels(pom.Labels)
	}
	// deploy-web's own hash of the rendered values, kept in memory for the
	// plan's comparison while no other manager wrote a value since
	// deploy-web's last write, else who did: captures hold no Secret.
	ann := map[string]string{}
	at, by := secretWrites(pom.ManagedFields)
	if by != "" {
		ann[SecretWrittenByAnnotation] = by
	} else if h, ok := pom.Annotations[SecretHashAnnotation]; ok {
		ann[SecretHashAnnotation] = h
	}
	if at != nil {
		ann[SecretAppliedAtAnnotation] = at.UTC().Format(time.RFC3339)
	}
	if len(ann) > 0 {
		out.SetAnnotations(ann)
	}
	return out, nil
}

// apply is a server-side apply with field manager deploy-web, forced only
// for the objects c.force keeps (a self-heal's drifted objects), never
// for a Secret. A Secret goes through the metadata client, so the
// response (which merges live values) comes back as metadata only.
func (c *clients) apply(ctx context.Context, u *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	ri, gvr, err := c.resource(u)
	if err != nil {
		return nil, err
	}
	var dr []string
	if dryRun {
		dr = []string{metav1.DryRunAll}
	}
	if c.env != "" {
		u = withEnvironment(u, c.env)
	}
	if isSecret(u) {
		hashed, err := withSecretHash(u)
		if err != nil {
			return nil, err
		}
		body, err := json.Marshal(hashed.Object)
		if err != nil {
			return nil, err
		}
		force := false
		pom, err := c.meta.Resource(gvr).Namespace(u.GetNamespace()).Patch(ctx, u.GetName(), types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: FieldManager, DryRun: dr, Force: &force})
		if err != nil {
			return nil, err
		}
		return metadataOnly(pom, u)
	}
	force := c.force != nil && c.force.Keep(u)
	return ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: FieldManager, DryRun: dr, Force: force})
}

// namespaceHealth is the health of the namespace's workloads, per HEALTH.md,
// sorted by kind and name; kinds the cluster does not serve are skipped.
func (c *clients) namespaceHealth(ctx context.Context, ns string) NamespaceHealth {
	gvrs := []schema.GroupVersionResource{
		{Group: "apps", Version: "v1", Resource: "deployments"},
		{Group: "apps", Version: "v1", Resource: "statefulsets"},
		{Group: "apps", Version: "v1", Resource: "daemonsets"},
		{Group: "batch", Version: "v1", Resource: "jobs"},
		{Group: "batch", Version: "v1", Resource: "cronjobs"},
		appcr.Resource,
	}
	var items []objrules.HealthItem
	out := NamespaceHealth{}
	for _, gvr := range gvrs {
		list, err := c.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			out.Message = fmt.Sprintf("could not list %s: %v", gvr.Resource, err)
			out.Status = string(objrules.HealthUnknown)
			continue
		}
		for i := range list.Items {
			u := &list.Items[i]
			h, ok := objrules.HealthOf(u)
			if !ok {
				continue
			}
			items = append(items, objrules.HealthItem{Group: gvr.Group, Kind: u.GetKind(), Namespace: ns, Name: u.GetName(), Health: h})
			out.Workloads = append(out.Workloads, WorkloadHealth{Kind: u.GetKind(), Name: u.GetName(), Status: string(h.Status), Message: h.Message})
		}
	}
	sort.Slice(out.Workloads, func(i, j int) bool {
		a, b := out.Workloads[i], out.Workloads[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Name < b.Name
	})
	if out.Status == "" {
		agg := objrules.AggregateHealth(items, true, "")
		out.Status, out.Message = string(agg.Status), agg.Message
		if len(items) == 0 {
			out.Message = "no workloads in the namespace yet"
		}
	}
	return out
}

func key(u *unstructured.Unstructured) string {
	gvk := u.GroupVersionKind()
	return gvk.Group + "/" + gvk.Kind + "/" + u.GetNamespace() + "/" + u.GetName()
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
