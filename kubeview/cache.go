package kubeview

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/search"
)

// Index names of every cached kind.
const (
	// IndexOwner maps an owner's UID to the objects it owns.
	IndexOwner = "owner"
)

// Options configures a Cache.
type Options struct {
	// Namespaces are the platform namespaces: the only ones read.
	Namespaces []string
	// AppResource is the App custom resource (default hanzo.ai/v1 apps).
	AppResource schema.GroupVersionResource
	// Resync is the informers' resync period (default 10 minutes).
	Resync time.Duration
	// ProbeInterval is how often the apiserver's reachability is checked
	// (default 5s).
	ProbeInterval time.Duration
	// OperatorManagers are the App operator's field managers (default
	// DefaultOperatorManager): fields they own are the desired state, any
	// other manager's fields are drift (see Drift).
	OperatorManagers []string
}

// Cache holds informer caches of the registry kinds and the App CRs in the
// platform namespaces, and the application list computed from them.
type Cache struct {
	opts Options
	log  *slog.Logger
	cs   kubernetes.Interface
	dyn  dynamic.Interface

	ns map[string]*nsCache

	fleet *fleet

	mu        sync.Mutex
	forbidden map[string]string // "ns/Kind" -> message
	probe     probeState

	// drift holds the drift summary of each cached registry object.
	drift *driftStore

	// intern shares the repeated strings of the cached objects.
	intern *interner

	// labels and search are the fleet-wide search's index (search.go).
	labels *labelStore
	search *search.Index

	// lastEvent is when each informer ("ns/Kind") last delivered an
	// event, in Unix nanoseconds; filled by New, read by InformerStates.
	lastEvent map[string]*atomic.Int64
}

type nsCache struct {
	apps  cache.SharedIndexInformer
	kinds map[string]cache.SharedIndexInformer // by Kind.GroupKind()
	start []func(<-chan struct{})
}

type probeState struct {
	reachable bool
	lastOK    time.Time
	lastErr   string
	checked   bool
}

// New builds the caches; Start fills them.
func New(cs kubernetes.Interface, dyn dynamic.Interface, log *slog.Logger, opts Options) (*Cache, error) {
	if len(opts.Namespaces) == 0 {
		return nil, errors.New("kubeview: no platform namespaces")
	}
	if opts.AppResource.Resource == "" {
		opts.AppResource = appcr.Resource
	}
	if opts.Resync == 0 {
		opts.Resync = 10 * time.Minute
	}
	if opts.ProbeInterval == 0 {
		opts.ProbeInterval = 5 * time.Second
	}
	if len(opts.OperatorManagers) == 0 {
		opts.OperatorManagers = []string{objrules.DefaultOperatorManager}
	}
	c := &Cache{
		opts: opts, log: log.With("component", "kubeview"), cs: cs, dyn: dyn,
		ns: map[string]*nsCache{}, forbidden: map[string]string{},
		lastEvent: map[string]*atomic.Int64{},
		drift:     &driftStore{byUID: map[types.UID][]objrules.DriftField{}},
		intern:    newInterner(),
		labels:    newLabelStore(),
		search:    &search.Index{},
	}
	c.fleet = newFleet(c)
	indexers := cache.Indexers{IndexOwner: indexByOwner}
	for _, ns := range opts.Namespaces {
		if _, dup := c.ns[ns]; dup {
			return nil, fmt.Errorf("kubeview: namespace %q given twice", ns)
		}
		nc := &nsCache{kinds: map[string]cache.SharedIndexInformer{}}
		tf := informers.NewSharedInformerFactoryWithOptions(cs, opts.Resync, informers.WithNamespace(ns), informers.WithTransform(c.transform))
		for _, k := range Kinds() {
			inf := k.informer(tf)
			if err := inf.AddIndexers(indexers); err != nil {
				return nil, fmt.Errorf("kubeview: %w", err)
			}
			c.watchErrors(inf, ns, k.Kind)
			if _, err := inf.AddEventHandler(c.eventHandler(ns, k.Kind)); err != nil {
				return nil, fmt.Errorf("kubeview: %w", err)
			}
			nc.kinds[k.GroupKind()] = inf
		}
		df := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, opts.Resync, ns, nil)
		nc.apps = df.ForResource(opts.AppResource).Informer()
		if err := nc.apps.SetTransform(c.appTransform); err != nil {
			return nil, fmt.Errorf("kubeview: %w", err)
		}
		c.watchErrors(nc.apps, ns, "App")
		if _, err := nc.apps.AddEventHandler(c.eventHandler(ns, "App")); err != nil {
			return nil, fmt.Errorf("kubeview: %w", err)
		}
		nc.start = []func(<-chan struct{}){tf.Start, df.Start}
		c.ns[ns] = nc
	}
	return c, nil
}

// watchErrors records a kind the service account may not read as a visible
// warning instead of retrying silently.
func (c *Cache) watchErrors(inf cache.SharedIndexInformer, ns, kind string) {
	key := ns + "/" + kind
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if apierrors.IsForbidden(err) {
			if _, seen := c.forbidden[key]; !seen {
				c.log.Warn("kind not readable", "namespace", ns, "kind", kind, "err", err)
			}
			c.forbidden[key] = fmt.Sprintf("cannot read %s in namespace %s: forbidden", kind, ns)
			return
		}
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
}

// Start starts the informers and the reachability probe. It returns at once;
// Synced reports when the caches are filled.
func (c *Cache) Start(ctx context.Context) {
	for _, nc := range c.ns {
		for _, start := range nc.start {
			start(ctx.Done())
		}
	}
	go c.fleet.run(ctx)
	go c.runProbe(ctx)
}

// Synced reports whether every cache has synced (a forbidden kind counts as
// synced: it is shown as a warning instead) and the list has been computed.
func (c *Cache) Synced() bool {
	return c.informersSynced() && c.fleet.primed()
}

func (c *Cache) informersSynced() bool {
	c.mu.Lock()
	forbidden := maps2keys(c.forbidden)
	c.mu.Unlock()
	for ns, nc := range c.ns {
		if !nc.apps.HasSynced() && !slices.Contains(forbidden, ns+"/App") {
			return false
		}
		for gk, inf := range nc.kinds {
			kind := kindOf(gk)
			if !inf.HasSynced() && !slices.Contains(forbidden, ns+"/"+kind) {
				return false
			}
		}
	}
	return true
}

// WaitForSync blocks until Synced or ctx ends.
func (c *Cache) WaitForSync(ctx context.Context) error {
	for !c.Synced() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubeview: caches not synced: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// Status is the cache's view of its own freshness, shown to users.
type Status struct {
	Synced bool
	// Reachable is false when the last probe of the apiserver failed.
	Reachable bool
	// LastContact is when the apiserver last answered.
	LastContact time.Time
	// Error is the last probe's failure, already safe to show.
	Error string
	// Warnings name kinds the service account may not read.
	Warnings []string
}

// Status returns the cache's freshness and warnings.
func (c *Cache) Status() Status {
	synced := c.Synced()
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Status{Synced: synced, Reachable: !c.probe.checked || c.probe.reachable, LastContact: c.probe.lastOK, Error: c.probe.lastErr}
	for _, w := range c.forbidden {
		st.Warnings = append(st.Warnings, w)
	}
	slices.Sort(st.Warnings)
	return st
}

func (c *Cache) runProbe(ctx context.Context) {
	t := time.NewTicker(c.opts.ProbeInterval)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		var err error
		if rc := c.cs.Discovery().RESTClient(); rc != nil && !isNilInterface(rc) {
			err = rc.Get().AbsPath("/readyz").Do(pctx).Error()
		} else {
			_, err = c.cs.Discovery().ServerVersion() // a client without a REST client (fakes)
		}
		cancel()
		if ctx.Err() != nil {
			return
		}
		c.mu.Lock()
		c.probe.checked = true
		if err == nil {
			c.probe.reachable, c.probe.lastOK, c.probe.lastErr = true, time.Now(), ""
		} else {
			if c.probe.reachable || c.probe.lastErr == "" {
				c.log.Warn("apiserver unreachable", "err", err)
			}
			c.probe.reachable, c.probe.lastErr = false, "the Kubernetes API server is not answering"
		}
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Namespaces returns the platform namespaces, sorted.
func (c *Cache) Namespaces() []string {
	ns := slices.Clone(c.opts.Namespaces)
	slices.Sort(ns)
	return ns
}

// store returns the informer of a registry kind in a platform namespace.
func (c *Cache) informer(ns, groupKind string) cache.SharedIndexInformer {
	nc, ok := c.ns[ns]
	if !ok {
		return nil
	}
	return nc.kinds[groupKind]
}

// byIndex lists a kind's objects in ns under an index value.
func (c *Cache) byIndex(ns, groupKind, index, value string) []any {
	inf := c.informer(ns, groupKind)
	if inf == nil {
		return nil
	}
	objs, err := inf.GetIndexer().ByIndex(index, value)
	if err != nil {
		return nil
	}
	return objs
}

// get returns one cached object of a kind, or nil.
func (c *Cache) get(ns, groupKind, name string) any {
	inf := c.informer(ns, groupKind)
	if inf == nil {
		return nil
	}
	obj, ok, err := inf.GetStore().GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return nil
	}
	return obj
}

func indexByOwner(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil
	}
	refs := m.GetOwnerReferences()
	if len(refs) == 0 {
		return nil, nil
	}
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = string(r.UID)
	}
	return out, nil
}

// transform is the registry informers' transform: it keeps the object's
// drift summary (from managedFields, see Drift) and then strips it like
// stripObject. Only the summary is kept, so memory barely moves.
func (c *Cache) transform(obj any) (any, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj, nil
	}
	if ro, ok := obj.(runtime.Object); ok && driftKind(obj) {
		content := func() map[string]any {
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ro)
			if err != nil {
				return nil
			}
			return u
		}
		c.drift.set(m.GetUID(), objrules.Drift(kindName(obj), m.GetManagedFields(), content, objrules.DriftRules{OperatorManagers: c.opts.OperatorManagers}))
	}
	return c.strip(obj)
}

// strip is stripObject, then the object's repeated strings shared
// through the cache's interner.
func (c *Cache) strip(obj any) (any, error) {
	c.labels.set(obj) // before the strip drops them (search.go)
	obj, err := stripObject(obj)
	if err == nil {
		c.intern.object(obj)
	}
	return obj, err
}

// appTransform is the App informer's transform. An App the deploy engine
// applied (an Apply entry of appcr.FieldManager) is desired state that
// deploy-web owns, so fields another manager set on it are drift (`kubectl
// patch app ...` by hand); other Apps are the desired state themselves and
// have none.
func (c *Cache) appTransform(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		var d []objrules.DriftField
		entries := u.GetManagedFields()
		if engineApplied(entries) {
			d = objrules.Drift("App", entries, func() map[string]any { return u.Object }, objrules.DriftRules{OperatorManagers: []string{appcr.FieldManager}})
		}
		c.drift.set(u.GetUID(), d)
	}
	return c.strip(obj)
}

// engineApplied reports whether the deploy engine server-side applied the
// object.
func engineApplied(entries []metav1.ManagedFieldsEntry) bool {
	for _, e := range entries {
		if e.Manager == appcr.FieldManager && e.Operation == metav1.ManagedFieldsOperationApply {
			return true
		}
	}
	return false
}

// driftKind reports whether obj is of a registry kind that can drift (not
// a derived Pod or ReplicaSet).
func driftKind(obj any) bool {
	return !objrules.DerivedKind(kindName(obj))
}

// kindName is the Go type name of a typed object: its kind.
func kindName(obj any) string {
	t := reflect.TypeOf(obj)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// driftStore holds the drift summary of each cached object by UID; an
// object without drift has no entry.
type driftStore struct {
	mu    sync.RWMutex
	byUID map[types.UID][]objrules.DriftField
}

func (s *driftStore) set(uid types.UID, d []objrules.DriftField) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(d) == 0 {
		delete(s.byUID, uid)
		return
	}
	s.byUID[uid] = d
}

func (s *driftStore) get(uid types.UID) []objrules.DriftField {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.byUID[uid]
}

func (s *driftStore) forget(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if m, err := meta.Accessor(obj); err == nil {
		s.set(m.GetUID(), nil)
	}
}

// driftOf returns the drift summary of a cached object (nil when none).
func (c *Cache) driftOf(uid types.UID) []objrules.DriftField { return c.drift.get(uid) }

func kindOf(groupKind string) string {
	for i := len(groupKind) - 1; i >= 0; i-- {
		if groupKind[i] == '/' {
			return groupKind[i+1:]
		}
	}
	return groupKind
}

func maps2keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func isNilInterface(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// DriftOf returns the drift summary of a cached object of the kind
// registry by UID, sorted by path (nil when none). The App CR itself has
// none: it is the desired state.
func (c *Cache) DriftOf(uid string) []objrules.DriftField { return c.drift.get(types.UID(uid)) }
