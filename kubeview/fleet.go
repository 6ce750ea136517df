package kubeview

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/objrules"
)

// SyncStatus is the sync verdict of an App.
type SyncStatus string

// Sync verdicts.
const (
	SyncSynced    SyncStatus = "Synced"
	SyncOutOfSync SyncStatus = "OutOfSync"
	SyncUnknown   SyncStatus = "Unknown"
)

// Sync is a verdict with the reason for it.
type Sync struct {
	Status  SyncStatus `json:"status"`
	Message string     `json:"message,omitempty"`
	// Drifted is true when some object of the App has fields changed
	// outside its operator: the declared version may be running, but not
	// as declared. It does not change Status.
	Drifted bool `json:"drifted"`
}

// VersionCount is one version running in an App: the ready pods of one
// ReplicaSet.
type VersionCount struct {
	Version  string `json:"version"`
	Image    string `json:"image"`
	Ready    int32  `json:"ready"`
	Revision int64  `json:"revision,omitempty"`
}

// Replicas are the Deployment's counts.
type Replicas struct {
	Desired   int32 `json:"desired"`
	Ready     int32 `json:"ready"`
	Updated   int32 `json:"updated"`
	Available int32 `json:"available"`
}

// AppRow is one App of the application list.
type AppRow struct {
	// Cluster names the cluster the App lives in; kubeview reads one
	// cluster and leaves it empty, the layer over several clusters
	// (package fleetset) sets it.
	Cluster      string          `json:"cluster"`
	Name         string          `json:"name"`
	Namespace    string          `json:"namespace"`
	Image        string          `json:"image"`
	Version      string          `json:"version"`
	Running      []VersionCount  `json:"running"`
	Health       objrules.Health `json:"health"`
	Sync         Sync            `json:"sync"`
	Replicas     Replicas        `json:"replicas"`
	LastDeployed time.Time       `json:"lastDeployedAt,omitzero"`
	Created      time.Time       `json:"createdAt"`
	// Drift is the number of the App's objects with fields changed outside
	// its operator (see Drift); Sync.Drifted says the same as a flag.
	Drift         int  `json:"drift"`
	HasDeployment bool `json:"-"`
}

// Key returns "namespace/name".
func (r *AppRow) Key() string { return r.Namespace + "/" + r.Name }

// RunningSummary formats the running versions, oldest first:
// "1.1.0 (2) -> 1.2.0 (1)".
func (r *AppRow) RunningSummary() string {
	parts := make([]string, len(r.Running))
	for i, v := range r.Running {
		parts[i] = v.Version + " (" + strconv.Itoa(int(v.Ready)) + ")"
	}
	return strings.Join(parts, " -> ")
}

// Counts are the application list's facet counts: per health, per sync and
// drifted, each counting the Apps that match every other active filter of
// the query (namespace, search and the other facets), as search UIs count
// their facets. Without filters they are the fleet's totals.
type Counts struct {
	// Fleet is the number of Apps in the platform namespaces, whatever the
	// query.
	Fleet int `json:"fleet"`
	// Total is the number of Apps in the query's scope (namespace and
	// search), before the health, sync and drift facets.
	Total int `json:"total"`
	// Health counts per health status the Apps in scope that match the sync
	// and drift filters.
	Health map[objrules.HealthStatus]int `json:"health"`
	// Sync counts per sync status the Apps in scope that match the health
	// and drift filters.
	Sync map[SyncStatus]int `json:"sync"`
	// Drift counts the Apps with at least one drifted object among those in
	// scope that match the health and sync filters.
	Drift int `json:"drift"`
	// Cluster counts per cluster the Apps that match every other filter
	// (set by package fleetset; kubeview leaves it nil).
	Cluster map[string]int `json:"cluster,omitempty"`
}

func (c Counts) clone() Counts {
	out := Counts{Fleet: c.Fleet, Total: c.Total, Drift: c.Drift, Health: make(map[objrules.HealthStatus]int, len(c.Health)), Sync: make(map[SyncStatus]int, len(c.Sync))}
	for k, v := range c.Health {
		out.Health[k] = v
	}
	for k, v := range c.Sync {
		out.Sync[k] = v
	}
	return out
}

func (c *Counts) add(r *AppRow, d int) {
	c.Fleet += d
	c.Total += d
	c.Health[r.Health.Status] += d
	c.Sync[r.Sync.Status] += d
	if r.Drift > 0 {
		c.Drift += d
	}
}

// fleet keeps one row per App, recomputed when an event touches the App or
// one of its objects, and the counts, updated with each changed row. Each
// row carries its JSON, encoded when the row is computed, and the rows are
// kept sorted by namespace/name: a batch of changes is merged into the
// sorted list (a new slice; snapshots handed out are never modified), not
// sorted again.
type fleet struct {
	c *Cache

	dmu    sync.Mutex
	dirty  map[string]struct{}
	notify chan struct{}

	mu       sync.RWMutex
	rows     map[string]*fleetRow
	sorted   []*fleetRow // by namespace/name; replaced, never modified
	counts   Counts
	version  uint64
	isPrimed bool
	changed  chan struct{} // closed and replaced on each change

	// touched are the Apps recomputed since the last TakeTouched (dmu).
	touched touchedApps
}

// fleetRow is a row of the fleet with its JSON (see encodeRow), both
// immutable once the row is in the fleet.
type fleetRow struct {
	AppRow
	json RowJSON
}

func newFleet(c *Cache) *fleet {
	return &fleet{
		c: c, dirty: map[string]struct{}{}, notify: make(chan struct{}, 1),
		rows:    map[string]*fleetRow{},
		counts:  Counts{Health: map[objrules.HealthStatus]int{}, Sync: map[SyncStatus]int{}},
		changed: make(chan struct{}),
		touched: touchedApps{c: make(chan struct{}, 1), keys: map[string]struct{}{}},
	}
}

// handler marks the Apps an event touches as dirty.
func (f *fleet) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { f.touch(obj) },
		UpdateFunc: func(old, obj any) {
			// Both: a child that lost its label or owner leaves its old App.
			f.touch(old)
			f.touch(obj)
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			f.touch(obj)
		},
	}
}

// touch maps an object to the App keys it may affect: itself if it is an
// App, its instance label, its owners in the App resource's group (the
// configured resource's kind is not known here, so any kind of that group
// counts), and its own name (a child named after its App).
func (f *fleet) touch(obj any) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	ns := m.GetNamespace()
	keys := []string{ns + "/" + m.GetName()}
	if v, ok := m.GetLabels()[appcr.InstanceLabel]; ok && v != m.GetName() {
		keys = append(keys, ns+"/"+v)
	}
	for _, r := range m.GetOwnerReferences() {
		if gv, err := schema.ParseGroupVersion(r.APIVersion); err == nil && gv.Group == f.c.opts.AppResource.Group {
			keys = append(keys, ns+"/"+r.Name)
		}
	}
	f.dmu.Lock()
	for _, k := range keys {
		f.dirty[k] = struct{}{}
	}
	f.dmu.Unlock()
	select {
	case f.notify <- struct{}{}:
	default:
	}
}

// run recomputes dirty rows until ctx ends. Before the caches have synced it
// only waits; then it computes every row once and marks the list primed.
func (f *fleet) run(ctx context.Context) {
	for !f.c.informersSynced() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	f.recomputeAll()
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.notify:
		}
		f.dmu.Lock()
		keys := f.dirty
		f.dirty = make(map[string]struct{}, len(keys))
		f.dmu.Unlock()
		batch := make([]string, 0, len(keys))
		for k := range keys {
			batch = append(batch, k)
		}
		f.recompute(batch)
	}
}

func (f *fleet) recomputeAll() {
	f.dmu.Lock()
	f.dirty = map[string]struct{}{}
	f.dmu.Unlock()
	var keys []string
	for _, ns := range f.c.opts.Namespaces {
		for _, obj := range f.c.ns[ns].apps.GetStore().List() {
			if m, err := meta.Accessor(obj); err == nil {
				keys = append(keys, ns+"/"+m.GetName())
			}
		}
	}
	f.recompute(keys)
	f.mu.Lock()
	f.isPrimed = true
	f.bump()
	f.mu.Unlock()
}

func (f *fleet) primed() bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.isPrimed
}

// rowChange is the new row of an App, nil when the App is gone.
type rowChange struct {
	key string
	row *fleetRow
}

// recompute rebuilds the rows of keys from the caches and applies the
// ones that changed in one step. Only run (one goroutine) writes the
// fleet, so the rows read before the lock is taken are still current.
func (f *fleet) recompute(keys []string) {
	f.c.indexApps(keys)
	changes := make([]rowChange, 0, len(keys))
	var apps []string
	f.mu.RLock()
	for _, key := range keys {
		row := f.build(key)
		old, had := f.rows[key]
		if row != nil || had {
			apps = append(apps, key)
		}
		switch {
		case row == nil && !had:
		case row == nil:
			changes = append(changes, rowChange{key: key})
		case !had || !rowEqual(&old.AppRow, row):
			changes = append(changes, rowChange{key: key, row: &fleetRow{AppRow: *row}})
		}
	}
	f.mu.RUnlock()
	// After the rows are applied (deferred before the Unlock below, so it
	// runs after it): a reader of the touched Apps reads their new rows.
	defer f.markTouched(apps)
	if len(changes) == 0 {
		return
	}
	for _, ch := range changes {
		if ch.row != nil {
			ch.row.json = encodeRow(&ch.row.AppRow)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.apply(changes)
	f.bump()
}

// build computes the row of one App from the caches, nil when there is no
// such App.
func (f *fleet) build(key string) *AppRow {
	ns, _, _ := strings.Cut(key, "/")
	nc, ok := f.c.ns[ns]
	if !ok {
		return nil
	}
	obj, ok, err := nc.apps.GetStore().GetByKey(key)
	if err != nil || !ok {
		return nil
	}
	app, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	r := buildRow(app, f.c, f.c.opts.AppResource.GroupVersion())
	return &r
}

// apply puts changed rows into the fleet: the rows, the counts and the
// sorted list (merged, see mergeRows); f.mu must be held.
func (f *fleet) apply(changes []rowChange) {
	var drop []int
	adds := make([]*fleetRow, 0, len(changes))
	for _, ch := range changes {
		if old, had := f.rows[ch.key]; had {
			f.counts.add(&old.AppRow, -1)
			if i, found := slices.BinarySearchFunc(f.sorted, old, compareRows); found {
				drop = append(drop, i)
			}
			delete(f.rows, ch.key)
		}
		if ch.row != nil {
			f.rows[ch.key] = ch.row
			f.counts.add(&ch.row.AppRow, 1)
			adds = append(adds, ch.row)
		}
	}
	slices.Sort(drop)
	slices.SortFunc(adds, compareRows)
	f.sorted = mergeRows(f.sorted, drop, adds)
}

// compareRows orders rows by namespace, then name.
func compareRows(a, b *fleetRow) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// mergeRows returns a new slice: sorted without the rows at the indices
// drop (ascending) and with adds (sorted by compareRows, keys not in
// sorted once drop is removed) merged in order. sorted is not modified:
// snapshots taken before share it. O(len(sorted) + len(adds) log
// len(sorted)).
func mergeRows(sorted []*fleetRow, drop []int, adds []*fleetRow) []*fleetRow {
	out := make([]*fleetRow, 0, len(sorted)-len(drop)+len(adds))
	start := 0 // the next row of sorted to copy
	for len(drop) > 0 || len(adds) > 0 {
		at := len(sorted) + 1 // where the next add goes: before sorted[at]
		if len(adds) > 0 {
			at, _ = slices.BinarySearchFunc(sorted[start:], adds[0], compareRows)
			at += start
		}
		if len(drop) > 0 && drop[0] < at {
			out = append(out, sorted[start:drop[0]]...)
			start = drop[0] + 1
			drop = drop[1:]
			continue
		}
		out = append(out, sorted[start:at]...)
		out = append(out, adds[0])
		start = at
		adds = adds[1:]
	}
	return append(out, sorted[start:]...)
}

// bump records a change; f.mu must be held.
func (f *fleet) bump() {
	f.version++
	close(f.changed)
	f.changed = make(chan struct{})
}

// snapshot returns the rows sorted by namespace/name, the counts and the
// version. The rows and the slice are shared and must not be modified.
func (f *fleet) snapshot() ([]*fleetRow, Counts, uint64) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.sorted, f.counts.clone(), f.version
}

func rowEqual(a, b *AppRow) bool {
	return a.Image == b.Image && a.Health == b.Health && a.Sync == b.Sync && a.Replicas == b.Replicas &&
		a.LastDeployed.Equal(b.LastDeployed) && slices.Equal(a.Running, b.Running) && a.HasDeployment == b.HasDeployment &&
		a.Created.Equal(b.Created) && a.Drift == b.Drift
}

// objectSource is what buildRow reads: a cache of the registry kinds.
type objectSource interface {
	byIndex(ns, groupKind, index, value string) []any
	get(ns, groupKind, name string) any
	driftOf(uid types.UID) []objrules.DriftField
}

// child is a depth-1 child of an App with its registry kind.
type child struct {
	kind Kind
	obj  metav1.Object
}

// children returns the depth-1 children of an App: objects of registry kinds
// (not ReplicaSets or Pods) that the App owns, or, as a fallback, that are
// named after it and have no controller. Sorted by kind order then name.
func children(app metav1.Object, src objectSource) []child {
	var out []child
	ns, name, uid := app.GetNamespace(), app.GetName(), string(app.GetUID())
	for _, k := range Kinds() {
		if k.Kind == "ReplicaSet" || k.Kind == "Pod" {
			continue
		}
		seen := map[string]bool{}
		owned := src.byIndex(ns, k.GroupKind(), IndexOwner, uid)
		slices.SortFunc(owned, func(a, b any) int { return cmp.Compare(nameOf(a), nameOf(b)) })
		for _, o := range owned {
			if m, err := meta.Accessor(o); err == nil {
				out = append(out, child{k, m})
				seen[m.GetName()] = true
			}
		}
		if seen[name] {
			continue
		}
		if o := src.get(ns, k.GroupKind(), name); o != nil {
			if m, err := meta.Accessor(o); err == nil && metav1.GetControllerOf(m) == nil {
				out = append(out, child{k, m})
			}
		}
	}
	return out
}

func nameOf(o any) string {
	if m, err := meta.Accessor(o); err == nil {
		return m.GetName()
	}
	return ""
}

// buildRow computes the row of app, an App of version appGV (the configured
// App resource's), from the cached objects.
func buildRow(app *unstructured.Unstructured, src objectSource, appGV schema.GroupVersion) AppRow {
	image, _, _ := unstructured.NestedString(app.Object, "spec", "image")
	row := AppRow{
		Name: app.GetName(), Namespace: app.GetNamespace(),
		Image: image, Version: appcr.ImageTag(image),
		Created: app.GetCreationTimestamp().Time,
	}
	// The App CR goes last, so that the message names the workload first
	// (its reason is the more useful one; the CR usually echoes it).
	var items []objrules.HealthItem
	kids := children(app, src)
	dep := appDeployment(kids, row.Name)
	if len(src.driftOf(app.GetUID())) > 0 {
		row.Drift++
	}
	for _, ch := range kids {
		if len(src.driftOf(ch.obj.GetUID())) > 0 {
			row.Drift++
		}
		obj, ok := ch.obj.(runtime.Object)
		if !ok {
			continue
		}
		h, ok := objrules.HealthOf(obj)
		if !ok {
			continue
		}
		items = append(items, objrules.HealthItem{Group: ch.kind.Group, Kind: ch.kind.Kind, Namespace: ch.obj.GetNamespace(), Name: ch.obj.GetName(), Health: h})
	}
	items = append(items, objrules.HealthItem{Group: app.GroupVersionKind().Group, Kind: app.GetKind(), Namespace: row.Namespace, Name: row.Name, Health: objrules.AppCRHealth(app, appGV)})
	row.HasDeployment = dep != nil
	row.Health = objrules.AggregateHealth(items, dep != nil, "apps/Deployment:"+row.Namespace+"/"+row.Name)
	if dep == nil {
		row.Sync = Sync{Status: SyncUnknown, Message: "the App has no Deployment", Drifted: row.Drift > 0}
		row.Running = []VersionCount{}
		return row
	}
	row.Replicas = Replicas{Desired: desiredReplicas(dep), Ready: dep.Status.ReadyReplicas, Updated: dep.Status.UpdatedReplicas, Available: dep.Status.AvailableReplicas}
	row.Running, row.LastDeployed = runningVersions(dep, src)
	if row.LastDeployed.IsZero() {
		row.LastDeployed = dep.CreationTimestamp.Time
	}
	row.Sync = syncVerdict(image, dep)
	row.Sync.Drifted = row.Drift > 0
	return row
}

func desiredReplicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas != nil {
		return *d.Spec.Replicas
	}
	return 1
}

// templateImage returns the image of the Deployment's container named after
// the App, else of its first container.
func templateImage(d *appsv1.Deployment, app string) string {
	return containerImage(d.Spec.Template.Spec, app)
}

// containerImage returns the image of the container named after the App,
// else of the first container ("" without containers): the App's version
// in a pod template.
func containerImage(spec corev1.PodSpec, app string) string {
	for _, c := range spec.Containers {
		if c.Name == app {
			return c.Image
		}
	}
	if len(spec.Containers) > 0 {
		return spec.Containers[0].Image
	}
	return ""
}

// syncVerdict: Synced only when the Deployment's template runs the declared
// image and its rollout is complete.
func syncVerdict(declared string, d *appsv1.Deployment) Sync {
	tmpl := templateImage(d, d.Name)
	if tmpl != declared {
		return Sync{Status: SyncOutOfSync, Message: "Deployment template runs " + tmpl + ", the App declares " + declared}
	}
	want := desiredReplicas(d)
	st := d.Status
	switch {
	case st.ObservedGeneration < d.Generation:
		return Sync{Status: SyncOutOfSync, Message: "the Deployment controller has not observed the latest change"}
	case st.UpdatedReplicas < want:
		return Sync{Status: SyncOutOfSync, Message: "rollout in progress: " + itoa(st.UpdatedReplicas) + " of " + itoa(want) + " replicas updated"}
	case st.Replicas > st.UpdatedReplicas:
		return Sync{Status: SyncOutOfSync, Message: "rollout in progress: " + itoa(st.Replicas-st.UpdatedReplicas) + " old replicas pending termination"}
	case st.AvailableReplicas < st.UpdatedReplicas:
		return Sync{Status: SyncOutOfSync, Message: "rollout in progress: " + itoa(st.AvailableReplicas) + " of " + itoa(st.UpdatedReplicas) + " updated replicas available"}
	}
	return Sync{Status: SyncSynced}
}

// runningVersions returns the versions the Deployment's ReplicaSets run,
// oldest revision first: every ReplicaSet with ready pods, plus the newest
// one while it is meant to have pods, and the newest ReplicaSet's creation
// time (the last deploy).
func runningVersions(d *appsv1.Deployment, src objectSource) ([]VersionCount, time.Time) {
	rss := replicaSetsOf(d, src)
	out := []VersionCount{}
	var last time.Time
	for i, ri := range rss {
		ready := int32(0)
		for _, o := range src.byIndex(d.Namespace, "Pod", IndexOwner, string(ri.rs.UID)) {
			if p, ok := o.(*corev1.Pod); ok && podReady(p) {
				ready++
			}
		}
		newest := i == len(rss)-1
		if newest {
			last = ri.rs.CreationTimestamp.Time
		}
		if ready == 0 && !(newest && ri.rs.Spec.Replicas != nil && *ri.rs.Spec.Replicas > 0) {
			continue
		}
		img := containerImage(ri.rs.Spec.Template.Spec, d.Name)
		version := appcr.ImageTag(img)
		if version == "" {
			version = img
		}
		out = append(out, VersionCount{Version: version, Image: img, Ready: ready, Revision: ri.revision})
	}
	return out, last
}

func podReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
