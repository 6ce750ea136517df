// Package operator is deploy-web's reference operator: it reconciles App
// custom resources (hanzo.ai/v1) into a Deployment and a Service, plus an
// Ingress, a HorizontalPodAutoscaler, a PodDisruptionBudget and a ConfigMap
// when the App asks for them, and reports the rollout in the App's status.
// It honours the App CR contract of DESIGN.md so that the demo and the tests
// run the whole loop (rollback -> CR patch -> rollout -> Synced) for real.
// The dashboard does not depend on it: any operator keeping the contract works.
package operator

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/hanzoai/deploy-web/appcr"
)

// The operator's request budget, chosen on purpose rather than left to
// client-go's defaults (5/s, burst 10, far too slow to render a fleet) or to
// the caller's config (the demo's admin config allows 200/s, which let a
// fleet of failing Apps hold kube-apiserver at a full core). At rest the
// operator sends nothing (see reconcile); these bound how hard it can push
// while a fleet is created or changed: 10,000 new Apps are about 30,000
// writes, some ten minutes at 50/s, leaving the apiserver room for the
// controller-manager, the scheduler, KWOK and the dashboard.
const (
	// ClientQPS is the sustained request rate of ClientConfig.
	ClientQPS = 50
	// ClientBurst is the burst of ClientConfig.
	ClientBurst = 100
)

// Retry defaults: a failing App is retried after RetryBase, doubling with
// each consecutive failure up to RetryMax. The backoff is per App: one
// failing App does not slow the others, and a thousand failing Apps cost at
// most a thousand retries per RetryMax instead of the queue's whole rate.
const (
	DefaultRetryBase = time.Second
	DefaultRetryMax  = 5 * time.Minute
	// DefaultResync is how often every App is reconciled again even when no
	// event arrived. A resync of unchanged Apps reads caches only.
	DefaultResync = 10 * time.Minute
	// DefaultChildDelay is how long a change of an App's Deployment waits
	// before the App is reconciled: a rollout changes the Deployment's
	// status several times within a second (replicas created, updated,
	// ready), and one reconcile after the burst writes the App's status
	// once instead of once per step.
	DefaultChildDelay = time.Second
)

// ClientConfig returns a copy of cfg with the operator's own rate limits
// (ClientQPS, ClientBurst) and user agent; build the clients passed to New
// from it.
func ClientConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst = ClientQPS, ClientBurst
	c.RateLimiter = nil
	c.UserAgent = appcr.OperatorManager
	return c
}

// Options configures the operator.
type Options struct {
	// Namespaces to watch. Required: the operator, like the dashboard, works
	// only in the platform namespaces it is given.
	Namespaces []string
	// Workers is the number of concurrent reconciles (default 4).
	Workers int
	// Resync is the informers' resync period (DefaultResync when zero).
	Resync time.Duration
	// RetryBase and RetryMax bound the per-App exponential backoff of a
	// failing reconcile (DefaultRetryBase, DefaultRetryMax when zero).
	RetryBase, RetryMax time.Duration
	// ChildDelay is how long a Deployment's change waits before its App is
	// reconciled, so that a burst of changes costs one reconcile
	// (DefaultChildDelay when zero). A deleted child is put back at once.
	ChildDelay time.Duration
}

// Stats counts what the operator did since it started.
type Stats struct {
	// Reconciles is the number of reconciles run (events and resyncs).
	Reconciles int64
	// Applies and Deletes count child writes sent to the apiserver.
	Applies, Deletes int64
	// Unchanged counts child applies skipped because the live child already
	// carries exactly what would be applied.
	Unchanged int64
	// StatusWrites counts App status updates.
	StatusWrites int64
	// StatusDeferred counts status writes left to the reconcile that the
	// event of a Deployment just created brings.
	StatusDeferred int64
}

// Operator reconciles Apps.
type Operator struct {
	cs   kubernetes.Interface
	dyn  dynamic.Interface
	log  *slog.Logger
	opts Options

	queue workqueue.TypedRateLimitingInterface[types.NamespacedName]

	appListers map[string]cache.GenericNamespaceLister
	depListers map[string]appslisters.DeploymentNamespaceLister
	// children holds, per namespace and child kind, the informer store of
	// the rendered children (metadata only, see leanChild).
	children map[string]map[string]cache.Store
	synced   []cache.InformerSynced

	reconciles, applies, deletes, unchanged, statusWrites, statusDeferred atomic.Int64

	mu      sync.Mutex // guards started
	started bool
}

// New returns an operator; Run starts it. Build cs and dyn from
// ClientConfig so that the operator keeps its documented rate limits.
func New(cs kubernetes.Interface, dyn dynamic.Interface, log *slog.Logger, opts Options) (*Operator, error) {
	if len(opts.Namespaces) == 0 {
		return nil, fmt.Errorf("operator: no namespaces to watch")
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.Resync <= 0 {
		opts.Resync = DefaultResync
	}
	if opts.RetryBase <= 0 {
		opts.RetryBase = DefaultRetryBase
	}
	if opts.RetryMax <= 0 {
		opts.RetryMax = DefaultRetryMax
	}
	if opts.ChildDelay <= 0 {
		opts.ChildDelay = DefaultChildDelay
	}
	if opts.RetryMax < opts.RetryBase {
		return nil, fmt.Errorf("operator: RetryMax %s < RetryBase %s", opts.RetryMax, opts.RetryBase)
	}
	return &Operator{
		cs: cs, dyn: dyn, log: log.With("component", "operator"), opts: opts,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			newRateLimiter(opts.RetryBase, opts.RetryMax),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "apps"}),
		appListers: map[string]cache.GenericNamespaceLister{},
		depListers: map[string]appslisters.DeploymentNamespaceLister{},
		children:   map[string]map[string]cache.Store{},
	}, nil
}

// newRateLimiter is the queue's retry policy: exponential per App, capped,
// and no queue-wide token bucket (client-go's default controller limiter
// adds one at 10/s, which a fleet of failing Apps holds forever).
func newRateLimiter(base, max time.Duration) workqueue.TypedRateLimiter[types.NamespacedName] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](base, max)
}

// Stats returns the operator's counters.
func (o *Operator) Stats() Stats {
	return Stats{
		Reconciles: o.reconciles.Load(), Applies: o.applies.Load(), Deletes: o.deletes.Load(),
		Unchanged: o.unchanged.Load(), StatusWrites: o.statusWrites.Load(), StatusDeferred: o.statusDeferred.Load(),
	}
}

// Run watches Apps and their children and reconciles until ctx ends.
func (o *Operator) Run(ctx context.Context) error {
	o.mu.Lock()
	if o.started {
		o.mu.Unlock()
		return fmt.Errorf("operator: already running")
	}
	o.started = true
	o.mu.Unlock()
	defer o.queue.ShutDown()

	managed := func(lo *metav1.ListOptions) { lo.LabelSelector = appcr.ManagedByLabel + "=" + appcr.OperatorManager }
	for _, ns := range o.opts.Namespaces {
		dynf := dynamicinformer.NewFilteredDynamicSharedInformerFactory(o.dyn, o.opts.Resync, ns, nil)
		appInf := dynf.ForResource(appcr.Resource)
		if _, err := appInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    o.enqueueObject,
			UpdateFunc: func(_, n any) { o.enqueueObject(n) },
		}); err != nil {
			return fmt.Errorf("operator: %w", err)
		}
		o.appListers[ns] = appInf.Lister().ByNamespace(ns)

		// Children: no resync of their own (the Apps' resync covers them),
		// and a lean cache (leanChild).
		tf := informers.NewSharedInformerFactoryWithOptions(o.cs, 0, informers.WithNamespace(ns),
			informers.WithTweakListOptions(managed), informers.WithTransform(leanChild))
		depInf := tf.Apps().V1().Deployments()
		if _, err := depInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    o.enqueueOwnerLater,
			UpdateFunc: func(_, n any) { o.enqueueOwnerLater(n) },
			DeleteFunc: o.enqueueOwner,
		}); err != nil {
			return fmt.Errorf("operator: %w", err)
		}
		o.depListers[ns] = depInf.Lister().Deployments(ns)
		o.synced = append(o.synced, appInf.Informer().HasSynced, depInf.Informer().HasSynced)
		stores := map[string]cache.Store{kindDeployment: depInf.Informer().GetStore()}
		for kind, inf := range map[string]cache.SharedIndexInformer{
			kindService:   tf.Core().V1().Services().Informer(),
			kindConfigMap: tf.Core().V1().ConfigMaps().Informer(),
			kindIngress:   tf.Networking().V1().Ingresses().Informer(),
			kindHPA:       tf.Autoscaling().V2().HorizontalPodAutoscalers().Informer(),
			kindPDB:       tf.Policy().V1().PodDisruptionBudgets().Informer(),
		} {
			// A deleted child is put back.
			if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: o.enqueueOwner}); err != nil {
				return fmt.Errorf("operator: %w", err)
			}
			stores[kind] = inf.GetStore()
			o.synced = append(o.synced, inf.HasSynced)
		}
		o.children[ns] = stores
		dynf.Start(ctx.Done())
		tf.Start(ctx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), o.synced...) {
		return fmt.Errorf("operator: caches did not sync: %w", ctx.Err())
	}
	o.log.Info("operator started", "namespaces", o.opts.Namespaces)

	var wg sync.WaitGroup
	for range o.opts.Workers {
		wg.Go(func() {
			for o.processNext(ctx) {
			}
		})
	}
	<-ctx.Done()
	o.queue.ShutDown()
	wg.Wait()
	return nil
}

func (o *Operator) enqueueObject(obj any) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	o.queue.Add(types.NamespacedName{Namespace: ns, Name: name})
}

// enqueueOwner reconciles the App controlling obj now.
func (o *Operator) enqueueOwner(obj any) {
	if key, ok := ownerKey(obj); ok {
		o.queue.Add(key)
	}
}

// enqueueOwnerLater reconciles the App controlling obj after ChildDelay.
// Changes within that time share one reconcile: the delaying queue keeps
// the earliest time of a key it already holds, and the work queue holds a
// key once.
func (o *Operator) enqueueOwnerLater(obj any) {
	if key, ok := ownerKey(obj); ok {
		o.queue.AddAfter(key, o.opts.ChildDelay)
	}
}

// ownerKey names the App that controls obj.
func ownerKey(obj any) (types.NamespacedName, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return types.NamespacedName{}, false
	}
	for _, ref := range m.GetOwnerReferences() {
		if ref.Kind == appcr.Kind.Kind && ref.Controller != nil && *ref.Controller {
			return types.NamespacedName{Namespace: m.GetNamespace(), Name: ref.Name}, true
		}
	}
	return types.NamespacedName{}, false
}

func (o *Operator) processNext(ctx context.Context) bool {
	key, quit := o.queue.Get()
	if quit {
		return false
	}
	defer o.queue.Done(key)
	o.reconciles.Add(1)
	if err := o.reconcile(ctx, key); err != nil {
		if ctx.Err() == nil {
			o.log.Warn("reconcile failed, will retry", "app", key.String(), "err", err, "retries", o.queue.NumRequeues(key))
		}
		o.queue.AddRateLimited(key)
		return true
	}
	o.queue.Forget(key)
	return true
}

var applyOpts = metav1.ApplyOptions{FieldManager: appcr.OperatorManager, Force: true}

// reconcile brings one App's children to what it declares and writes its
// status. It is quiet: a child whose live copy carries exactly the
// last-applied configuration it would apply now is not applied again, a
// child that is absent is not deleted, and an unchanged status is not
// written, so reconciling an unchanged App (a resync) sends no request at
// all. A pending sync request (the App's sync annotation differs from
// status.syncRequestedAt) applies every child regardless.
func (o *Operator) reconcile(ctx context.Context, key types.NamespacedName) error {
	lister, ok := o.appListers[key.Namespace]
	if !ok {
		return nil
	}
	obj, err := lister.Get(key.Name)
	if apierrors.IsNotFound(err) {
		return nil // deleted: garbage collection removes the children
	}
	if err != nil {
		return err
	}
	app, ok := obj.(*unstructured.Unstructured)
	if !ok || app.GetDeletionTimestamp() != nil {
		return nil
	}
	spec, err := ParseSpec(app)
	if err != nil {
		return o.writeStatus(ctx, app, nil, readyCondition{status: metav1.ConditionFalse, reason: "InvalidSpec", message: err.Error()})
	}
	r, err := Render(app, spec)
	if err != nil {
		return err
	}
	depCached := o.cached(key.Namespace, kindDeployment, key.Name) != nil
	if err := o.apply(ctx, app, r, syncPending(app)); err != nil {
		if serr := o.writeStatus(ctx, app, nil, readyCondition{status: metav1.ConditionFalse, reason: "ApplyFailed", message: err.Error()}); serr != nil && ctx.Err() == nil {
			o.log.Warn("write status", "app", key.String(), "err", serr)
		}
		return err
	}
	dep, err := o.depListers[key.Namespace].Get(key.Name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if !depCached && r.Deployment != nil && (dep == nil || metav1.IsControlledBy(dep, app)) {
		// This reconcile created the Deployment: its add event (which may
		// have arrived already) reconciles the App again after ChildDelay,
		// and that reconcile writes the status from the rollout under way,
		// one write where "Reconciling" and then "RolloutPending" were two.
		o.statusDeferred.Add(1)
		return nil
	}
	if dep != nil && !metav1.IsControlledBy(dep, app) {
		dep = nil
	}
	return o.writeStatus(ctx, app, dep, rolloutCondition(dep))
}

// syncPending reports whether the App carries a sync request its status has
// not answered yet.
func syncPending(app *unstructured.Unstructured) bool {
	req, ok := app.GetAnnotations()[appcr.SyncRequestedAnnotation]
	if !ok {
		return false
	}
	done, _, _ := unstructured.NestedString(app.Object, "status", "syncRequestedAt")
	return req != done
}

func (o *Operator) apply(ctx context.Context, app *unstructured.Unstructured, r Rendered, force bool) error {
	ns, name := app.GetNamespace(), app.GetName()
	del := metav1.DeleteOptions{}
	for _, c := range []child{
		{kindDeployment, r.Deployment != nil, lastAppliedOf(r.Deployment),
			func() error { _, err := o.cs.AppsV1().Deployments(ns).Apply(ctx, r.Deployment, applyOpts); return err },
			nil},
		{kindService, r.Service != nil, lastAppliedOf(r.Service),
			func() error { _, err := o.cs.CoreV1().Services(ns).Apply(ctx, r.Service, applyOpts); return err },
			nil},
		{kindConfigMap, r.ConfigMap != nil, lastAppliedOf(r.ConfigMap),
			func() error { _, err := o.cs.CoreV1().ConfigMaps(ns).Apply(ctx, r.ConfigMap, applyOpts); return err },
			func() error { return o.cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, del) }},
		{kindIngress, r.Ingress != nil, lastAppliedOf(r.Ingress),
			func() error { _, err := o.cs.NetworkingV1().Ingresses(ns).Apply(ctx, r.Ingress, applyOpts); return err },
			func() error { return o.cs.NetworkingV1().Ingresses(ns).Delete(ctx, name, del) }},
		{kindHPA, r.HPA != nil, lastAppliedOf(r.HPA),
			func() error {
				_, err := o.cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Apply(ctx, r.HPA, applyOpts)
				return err
			},
			func() error { return o.cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Delete(ctx, name, del) }},
		{kindPDB, r.PDB != nil, lastAppliedOf(r.PDB),
			func() error {
				_, err := o.cs.PolicyV1().PodDisruptionBudgets(ns).Apply(ctx, r.PDB, applyOpts)
				return err
			},
			func() error { return o.cs.PolicyV1().PodDisruptionBudgets(ns).Delete(ctx, name, del) }},
	} {
		live := o.cached(ns, c.kind, name)
		switch childAction(live, app.GetUID(), c.present, c.lastApplied, force) {
		case actionNone:
			if c.present {
				o.unchanged.Add(1)
			}
		case actionApply:
			o.applies.Add(1)
			if err := c.apply(); err != nil {
				return fmt.Errorf("operator: apply %s: %w", c.kind, err)
			}
		case actionDelete:
			// No longer asked for: remove what an earlier spec rendered.
			o.deletes.Add(1)
			if err := c.destroy(); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("operator: delete %s: %w", c.kind, err)
			}
		}
	}
	return nil
}

// cached returns the informer's lean copy of a child, or nil.
func (o *Operator) cached(ns, kind, name string) metav1.Object {
	st := o.children[ns][kind]
	if st == nil {
		return nil
	}
	obj, ok, err := st.GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return nil
	}
	m, _ := obj.(metav1.Object)
	return m
}

type readyCondition struct {
	status          metav1.ConditionStatus
	reason, message string
}

// rolloutCondition derives the App's Ready condition from its Deployment.
func rolloutCondition(dep *appsv1.Deployment) readyCondition {
	if dep == nil {
		return readyCondition{metav1.ConditionFalse, "Reconciling", "the Deployment has not been created yet"}
	}
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return readyCondition{metav1.ConditionFalse, "ProgressDeadlineExceeded", c.Message}
		}
	}
	want := int32(1)
	if dep.Spec.Replicas != nil {
		want = *dep.Spec.Replicas
	}
	st := dep.Status
	switch {
	case dep.Generation > st.ObservedGeneration:
		return readyCondition{metav1.ConditionFalse, "RolloutPending", "waiting for the Deployment controller to observe the change"}
	case dep.Spec.Paused && st.AvailableReplicas >= want:
		return readyCondition{metav1.ConditionTrue, "RolloutPaused", fmt.Sprintf("rollouts are paused; %d of %d replicas available", st.AvailableReplicas, want)}
	case dep.Spec.Paused:
		return readyCondition{metav1.ConditionFalse, "RolloutPaused", fmt.Sprintf("rollouts are paused; %d of %d replicas available", st.AvailableReplicas, want)}
	case st.UpdatedReplicas < want:
		return readyCondition{metav1.ConditionFalse, "RollingOut", fmt.Sprintf("%d of %d replicas updated", st.UpdatedReplicas, want)}
	case st.Replicas > st.UpdatedReplicas:
		return readyCondition{metav1.ConditionFalse, "RollingOut", fmt.Sprintf("%d old replicas pending termination", st.Replicas-st.UpdatedReplicas)}
	case st.AvailableReplicas < st.UpdatedReplicas:
		return readyCondition{metav1.ConditionFalse, "RollingOut", fmt.Sprintf("%d of %d updated replicas available", st.AvailableReplicas, st.UpdatedReplicas)}
	}
	return readyCondition{metav1.ConditionTrue, "RolloutComplete", fmt.Sprintf("%d of %d replicas available", st.AvailableReplicas, want)}
}

// writeStatus updates the App's status subresource when it changed.
func (o *Operator) writeStatus(ctx context.Context, app *unstructured.Unstructured, dep *appsv1.Deployment, ready readyCondition) error {
	old, _, _ := unstructured.NestedMap(app.Object, "status")
	status := map[string]any{"observedGeneration": app.GetGeneration()}
	if v, ok := app.GetAnnotations()[appcr.SyncRequestedAnnotation]; ok {
		status["syncRequestedAt"] = v
	}
	if dep != nil {
		if cs := dep.Spec.Template.Spec.Containers; len(cs) > 0 {
			status["image"] = cs[0].Image
		}
		status["replicas"] = int64(dep.Status.Replicas)
		status["readyReplicas"] = int64(dep.Status.ReadyReplicas)
		status["updatedReplicas"] = int64(dep.Status.UpdatedReplicas)
	}
	cond := map[string]any{
		"type": "Ready", "status": string(ready.status), "reason": ready.reason, "message": ready.message,
		"observedGeneration": app.GetGeneration(),
	}
	// Keep the transition time unless the status flips.
	now := time.Now().UTC().Format(time.RFC3339)
	cond["lastTransitionTime"] = now
	if oldConds, ok := old["conditions"].([]any); ok {
		for _, c := range oldConds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Ready" && m["status"] == string(ready.status) {
				if t, ok := m["lastTransitionTime"].(string); ok {
					cond["lastTransitionTime"] = t
				}
			}
		}
	}
	status["conditions"] = []any{cond}
	if t, ok := old["lastReconciledAt"]; ok {
		status["lastReconciledAt"] = t
	}
	if equalStatus(old, status) && old["syncRequestedAt"] == status["syncRequestedAt"] {
		return nil
	}
	status["lastReconciledAt"] = now
	u := app.DeepCopy()
	u.Object["status"] = status
	o.statusWrites.Add(1)
	_, err := o.dyn.Resource(appcr.Resource).Namespace(app.GetNamespace()).UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: appcr.OperatorManager})
	if apierrors.IsConflict(err) {
		// A newer App is on its way through the informer; it is reconciled again.
		o.queue.AddAfter(types.NamespacedName{Namespace: app.GetNamespace(), Name: app.GetName()}, 200*time.Millisecond)
		return nil
	}
	if err != nil {
		return fmt.Errorf("operator: update status: %w", err)
	}
	return nil
}

// equalStatus compares two status maps, ignoring lastReconciledAt.
func equalStatus(a, b map[string]any) bool {
	strip := func(m map[string]any) map[string]any {
		c := map[string]any{}
		for k, v := range m {
			if k != "lastReconciledAt" {
				c[k] = v
			}
		}
		return c
	}
	return equalJSON(strip(a), strip(b))
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }

// equalJSON compares two JSON-like values through their encodings, which
// makes int and int64 (and float64 from the apiserver) compare by value.
func equalJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
