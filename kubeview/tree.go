package kubeview

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/hanzoai/deploy-web/objrules"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// NodeInfo is what a tree node shows beyond its health.
type NodeInfo struct {
	Images   []string `json:"images,omitempty"`
	Revision string   `json:"revision,omitempty"`
	// Ready is "ready/total": containers of a Pod, pods of a workload.
	Ready    string `json:"ready,omitempty"`
	Restarts int32  `json:"restarts,omitempty"`
	Phase    string `json:"phase,omitempty"`
	// Replicas is the desired count of a Deployment or ReplicaSet.
	Replicas *int32 `json:"replicas,omitempty"`
}

// TreeNode is one object of an app's tree (ArgoCD's ResourceNode shape).
type TreeNode struct {
	Ref        string           `json:"ref"`
	Group      string           `json:"group"`
	Version    string           `json:"version"`
	Kind       string           `json:"kind"`
	Namespace  string           `json:"namespace"`
	Name       string           `json:"name"`
	UID        string           `json:"uid"`
	ParentRefs []string         `json:"parentRefs,omitempty"`
	Health     *objrules.Health `json:"health,omitempty"`
	Info       NodeInfo         `json:"info"`
	CreatedAt  time.Time        `json:"createdAt"`
	// Drift is the number of the object's fields changed outside the
	// App's operator (see Drift); the resource lists them.
	Drift int `json:"drift"`
	// Depth is 0 for the App, 1 for its children, and so on.
	Depth int `json:"-"`
}

// Tree is an app's owned-resource tree: a flat node list, parents first
// (ArgoCD's ApplicationTree shape).
type Tree struct {
	Nodes []TreeNode `json:"nodes"`
}

// Lookup errors.
var (
	ErrAppNotFound = errors.New("kubeview: app not found")
	ErrNotInTree   = errors.New("kubeview: object not in the app's tree")
)

// AmbiguousAppError is returned when an App name exists in more than one
// platform namespace and none was chosen.
type AmbiguousAppError struct {
	Name       string
	Namespaces []string
}

func (e *AmbiguousAppError) Error() string {
	return fmt.Sprintf("kubeview: app %q exists in namespaces %v", e.Name, e.Namespaces)
}

// LookupApp finds an App by name in namespace, or in every platform
// namespace when namespace is "" (then the name may be ambiguous).
func (c *Cache) LookupApp(namespace, name string) (*unstructured.Unstructured, error) {
	var found []*unstructured.Unstructured
	for _, ns := range c.Namespaces() {
		if namespace != "" && ns != namespace {
			continue
		}
		obj, ok, err := c.ns[ns].apps.GetStore().GetByKey(ns + "/" + name)
		if err != nil || !ok {
			continue
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			found = append(found, u)
		}
	}
	switch len(found) {
	case 0:
		return nil, ErrAppNotFound
	case 1:
		return found[0], nil
	}
	e := &AmbiguousAppError{Name: name}
	for _, u := range found {
		e.Namespaces = append(e.Namespaces, u.GetNamespace())
	}
	return nil, e
}

// Row returns the list row of one App.
func (c *Cache) Row(namespace, name string) (AppRow, bool) {
	c.fleet.mu.RLock()
	defer c.fleet.mu.RUnlock()
	r, ok := c.fleet.rows[namespace+"/"+name]
	if !ok {
		return AppRow{}, false
	}
	return r.AppRow, true
}

// maxTreeDepth bounds the owner walk (App -> Deployment -> ReplicaSet -> Pod
// is 3; CronJob -> Job -> Pod under an App is 3 too).
const maxTreeDepth = 5

// Tree builds the owned-resource tree of an App from the caches. Secrets are
// never in it: they are not in the kind registry and never cached.
func (c *Cache) Tree(namespace, name string) (Tree, error) {
	app, err := c.LookupApp(namespace, name)
	if err != nil {
		return Tree{}, err
	}
	return buildTree(app, c, c.opts.AppResource.GroupVersion()), nil
}

// buildTree builds the tree of app, an App of version appGV (the configured
// App resource's), from src.
func buildTree(app *unstructured.Unstructured, src objectSource, appGV schema.GroupVersion) Tree {
	gvk := app.GroupVersionKind()
	root := TreeNode{
		Ref:   Ref{Group: gvk.Group, Kind: gvk.Kind, Namespace: app.GetNamespace(), Name: app.GetName()}.String(),
		Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: app.GetNamespace(), Name: app.GetName(),
		UID: string(app.GetUID()), CreatedAt: app.GetCreationTimestamp().Time,
	}
	h := objrules.AppCRHealth(app, appGV)
	root.Health = &h
	if img, _, _ := unstructured.NestedString(app.Object, "spec", "image"); img != "" {
		root.Info.Images = []string{img}
	}
	t := Tree{Nodes: []TreeNode{root}}
	seen := map[string]bool{root.UID: true}
	var walk func(parent TreeNode, owned []child, depth int)
	walk = func(parent TreeNode, owned []child, depth int) {
		for _, ch := range owned {
			uid := string(ch.obj.GetUID())
			if seen[uid] {
				continue
			}
			seen[uid] = true
			n := nodeOf(ch.kind, ch.obj, parent.Ref, depth)
			n.Drift = len(src.driftOf(ch.obj.GetUID()))
			t.Nodes = append(t.Nodes, n)
			if depth < maxTreeDepth {
				walk(n, ownedBy(ch.obj, src), depth+1)
			}
		}
	}
	walk(root, children(app, src), 1)
	return t
}

// ownedBy returns the registry objects that obj owns, in registry order
// then by name.
func ownedBy(obj metav1.Object, src objectSource) []child {
	var out []child
	for _, k := range Kinds() {
		objs := src.byIndex(obj.GetNamespace(), k.GroupKind(), IndexOwner, string(obj.GetUID()))
		slices.SortFunc(objs, func(a, b any) int { return cmp.Compare(nameOf(a), nameOf(b)) })
		for _, o := range objs {
			if m, err := meta.Accessor(o); err == nil {
				out = append(out, child{k, m})
			}
		}
	}
	return out
}

func nodeOf(k Kind, obj metav1.Object, parentRef string, depth int) TreeNode {
	n := TreeNode{
		Ref:   Ref{Group: k.Group, Kind: k.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}.String(),
		Group: k.Group, Version: k.Version, Kind: k.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName(),
		UID: string(obj.GetUID()), ParentRefs: []string{parentRef}, CreatedAt: obj.GetCreationTimestamp().Time,
		Depth: depth,
	}
	if ro, ok := obj.(runtime.Object); ok {
		if h, ok := objrules.HealthOf(ro); ok {
			n.Health = &h
		}
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		n.Info.Images = images(o.Spec.Template.Spec)
		n.Info.Replicas = o.Spec.Replicas
		n.Info.Ready = fmt.Sprintf("%d/%d", o.Status.ReadyReplicas, desiredReplicas(o))
		n.Info.Revision = o.Annotations["deployment.kubernetes.io/revision"]
	case *appsv1.ReplicaSet:
		n.Info.Images = images(o.Spec.Template.Spec)
		n.Info.Revision = o.Annotations["deployment.kubernetes.io/revision"]
		n.Info.Replicas = o.Spec.Replicas
		want := int32(1)
		if o.Spec.Replicas != nil {
			want = *o.Spec.Replicas
		}
		n.Info.Ready = fmt.Sprintf("%d/%d", o.Status.ReadyReplicas, want)
	case *appsv1.StatefulSet:
		n.Info.Images = images(o.Spec.Template.Spec)
		n.Info.Replicas = o.Spec.Replicas
	case *appsv1.DaemonSet:
		n.Info.Images = images(o.Spec.Template.Spec)
	case *batchv1.Job:
		n.Info.Images = images(o.Spec.Template.Spec)
	case *corev1.Pod:
		n.Info.Images = images(o.Spec)
		n.Info.Phase = string(o.Status.Phase)
		ready := 0
		for _, cs := range o.Status.ContainerStatuses {
			if cs.Ready {
				ready++
			}
			n.Info.Restarts += cs.RestartCount
		}
		n.Info.Ready = strconv.Itoa(ready) + "/" + strconv.Itoa(len(o.Spec.Containers))
	}
	return n
}

func images(spec corev1.PodSpec) []string {
	out := make([]string, 0, len(spec.Containers))
	for _, c := range spec.Containers {
		out = append(out, c.Image)
	}
	return out
}

// liveReadTimeout bounds one read of a live object from the apiserver.
const liveReadTimeout = 5 * time.Second

// member finds ref among the nodes of an App's tree, from the cache (so
// user input never selects an arbitrary object), and returns the node.
func (c *Cache) member(namespace, app string, ref Ref) (TreeNode, error) {
	a, err := c.LookupApp(namespace, app)
	if err != nil {
		return TreeNode{}, err
	}
	want := ref.String()
	for _, n := range buildTree(a, c, c.opts.AppResource.GroupVersion()).Nodes {
		if n.Ref == want {
			return n, nil
		}
	}
	return TreeNode{}, ErrNotInTree
}

// Object returns one object of an App's tree as it is now, read from the
// apiserver (the cache keeps only what the pages need, not the manifest),
// without its managedFields, and the object's tree node. The ref must name
// a node of that App's tree in the cache; an object that is gone, or was
// replaced by another of the same name, is ErrNotInTree. The read has a
// deadline of its own (liveReadTimeout) within ctx's.
func (c *Cache) Object(ctx context.Context, namespace, app string, ref Ref) (*unstructured.Unstructured, TreeNode, error) {
	n, err := c.member(namespace, app, ref)
	if err != nil {
		return nil, TreeNode{}, err
	}
	u, err := c.readLive(ctx, n)
	if err != nil {
		return nil, TreeNode{}, err
	}
	u.SetManagedFields(nil)
	return u, n, nil
}

// FetchLive reads one object of an App's tree from the apiserver with its
// managedFields (Object drops them). It is for an explicit user request
// ("show managed fields"); membership is checked against the cache first.
func (c *Cache) FetchLive(ctx context.Context, namespace, app string, ref Ref) (*unstructured.Unstructured, error) {
	n, err := c.member(namespace, app, ref)
	if err != nil {
		return nil, err
	}
	return c.readLive(ctx, n)
}

// readLive reads the object of a tree node from the apiserver: a registry
// kind through the typed client, the App through the dynamic one.
func (c *Cache) readLive(ctx context.Context, n TreeNode) (*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(ctx, liveReadTimeout)
	defer cancel()
	var u *unstructured.Unstructured
	if n.Depth == 0 {
		got, err := c.dyn.Resource(c.opts.AppResource).Namespace(n.Namespace).Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			return nil, liveReadError(n.Ref, err)
		}
		u = got
	} else {
		k, ok := LookupKind(n.Group, n.Kind)
		if !ok {
			return nil, ErrNotInTree
		}
		obj, err := k.get(ctx, c.cs, n.Namespace, n.Name)
		if err != nil {
			return nil, liveReadError(n.Ref, err)
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("kubeview: convert %s: %w", n.Ref, err)
		}
		u = &unstructured.Unstructured{Object: m}
		u.SetAPIVersion(k.GVR().GroupVersion().String())
		u.SetKind(k.Kind)
	}
	if string(u.GetUID()) != n.UID {
		return nil, ErrNotInTree // replaced since the cache saw it
	}
	return u, nil
}

// liveReadError maps an apiserver error of a live read: an object that is
// gone is not in the tree (any more).
func liveReadError(ref string, err error) error {
	if apierrors.IsNotFound(err) {
		return ErrNotInTree
	}
	return fmt.Errorf("kubeview: get %s: %w", ref, err)
}

// Culprits returns the nodes of an App's tree that cause its health st,
// as AggregateHealth names them: the App's children (depth 1), then the
// App itself (depth 0), whose status is st; at most max of them, and how
// many more there are. None for a healthy App.
func (t Tree) Culprits(st objrules.HealthStatus, max int) ([]*TreeNode, int) {
	var items []*TreeNode
	for _, depth := range []int{1, 0} {
		for i := range t.Nodes {
			if t.Nodes[i].Depth == depth {
				items = append(items, &t.Nodes[i])
			}
		}
	}
	return objrules.HealthCulprits(st, items, func(n *TreeNode) objrules.HealthStatus {
		if n.Health == nil {
			return ""
		}
		return n.Health.Status
	}, max)
}
