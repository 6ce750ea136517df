package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/devcluster"
)

// FleetOptions configures SeedFleet.
type FleetOptions struct {
	// Apps is the number of extra Apps.
	Apps int
	// Namespaces receive the Apps in turn (default: storefront, payments).
	Namespaces []string
	// Batch is how many Apps are created before the next batch starts
	// (default 200); Workers create a batch concurrently (default 8).
	Batch, Workers int
	// Timeout bounds the whole seeding (default: 10 minutes plus a second
	// per App; on a loaded 2-core machine 2,000 Apps took about 17 minutes).
	Timeout time.Duration
	// Stall is how long SeedFleet waits while no further App converges
	// (default 5 minutes). Then it names every App not converged with the
	// state it is in; when they are at most one in a hundred of the fleet it
	// goes on without them and lists them in FleetResult.Unconverged,
	// otherwise it fails.
	Stall time.Duration
	// Progress receives one line per batch and one when the fleet has
	// converged (nil: quiet).
	Progress io.Writer
}

// FleetResult is what SeedFleet did.
type FleetResult struct {
	Apps                            int
	Healthy, Progressing, Degraded  int
	WithHistory                     int
	Created, Converged, HistoryDone time.Duration
	// Unconverged names the Apps that had not reached the state they are
	// built for when SeedFleet stopped waiting (see FleetOptions.Stall),
	// each with its state.
	Unconverged []Stalled
}

// Stalled is an App SeedFleet stopped waiting for.
type Stalled struct {
	// App is namespace/name.
	App string
	// State is its class and what it was doing: "(healthy): Ready=False
	// RollingOut: ...".
	State string
}

func (s Stalled) String() string { return s.App + " " + s.State }

// someOf joins the first three of stalled, for an error.
func someOf(stalled []Stalled) string {
	var b strings.Builder
	for i, s := range stalled[:min(3, len(stalled))] {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(s.String())
	}
	return b.String()
}

// fleetClass is the state a seeded App is built to reach.
type fleetClass int

const (
	classHealthy fleetClass = iota
	// classProgressing: pods that take an hour to be ready.
	classProgressing
	// classImagePull: a tag that cannot be pulled (Progressing).
	classImagePull
	// classStuck: pods never ready and a 30 s progress deadline (Degraded,
	// and quiet: nothing keeps changing).
	classStuck
	// classCrashLoop: pods in CrashLoopBackOff (Degraded; KWOK bumps their
	// restart count every 30 s, so they are few).
	classCrashLoop
)

func (c fleetClass) String() string {
	switch c {
	case classHealthy:
		return "healthy"
	case classProgressing:
		return "progressing"
	case classImagePull:
		return "image pull"
	case classStuck:
		return "stuck"
	case classCrashLoop:
		return "crash loop"
	}
	return fmt.Sprintf("class %d", int(c))
}

// fleetApp is the i-th App of a seeded fleet.
type fleetApp struct {
	name, namespace string
	class           fleetClass
	spec            map[string]any
	// next is the image of a second release, played once the fleet has
	// converged ("" for none): the App then has ReplicaSet history.
	next string
}

// FleetApp returns the name and namespace of the i-th App SeedFleet
// creates.
func FleetApp(i int, namespaces []string) (namespace, name string) {
	return namespaces[i%len(namespaces)], fmt.Sprintf("fleet-%05d", i)
}

// fleetSpec builds the i-th App deterministically: out of every 200 Apps,
// 6 are Progressing (4 slow, 2 an image that cannot be pulled), 7 Degraded
// (6 never ready past a 30 s deadline, 1 crash-looping) and the rest
// Healthy; 1-3 replicas; about one in five has an Ingress, one in five a
// ConfigMap, one in ten a PodDisruptionBudget; one in four healthy Apps gets
// a second release.
func fleetSpec(i int, namespaces []string) fleetApp {
	ns, name := FleetApp(i, namespaces)
	repo := "registry.demo.local/" + ns + "/" + name
	a := fleetApp{name: name, namespace: ns}
	minor := i % 7
	spec := map[string]any{
		"image":    fmt.Sprintf("%s:1.%d.0", repo, minor),
		"replicas": int64(1 + i%3),
		"port":     int64(8080),
	}
	labels := map[string]any{}
	switch r := i % 200; {
	case r < 4:
		a.class = classProgressing
		labels[devcluster.BehaviorLabel] = devcluster.BehaviorSlow
		spec["podAnnotations"] = map[string]any{devcluster.ReadyDelayAnnotation: "3600s"}
		spec["progressDeadlineSeconds"] = int64(7200)
	case r < 6:
		a.class = classImagePull
		labels[devcluster.BehaviorLabel] = devcluster.BehaviorImagePull
		spec["progressDeadlineSeconds"] = int64(7200)
	case r < 12:
		a.class = classStuck
		labels[devcluster.BehaviorLabel] = devcluster.BehaviorSlow
		spec["podAnnotations"] = map[string]any{devcluster.ReadyDelayAnnotation: "86400s"}
		spec["progressDeadlineSeconds"] = int64(30)
	case r < 13:
		a.class = classCrashLoop
		labels[devcluster.BehaviorLabel] = devcluster.BehaviorCrashLoop
		spec["progressDeadlineSeconds"] = int64(30)
	default:
		a.class = classHealthy
		if i%4 == 1 {
			a.next = fmt.Sprintf("%s:1.%d.1", repo, minor)
		}
	}
	if len(labels) > 0 {
		spec["podLabels"] = labels
	}
	if i%5 == 2 {
		spec["host"] = name + ".demo.local"
	}
	if i%5 == 3 {
		spec["env"] = []any{map[string]any{"name": "LOG_LEVEL", "value": "info"}, map[string]any{"name": "REGION", "value": "eu-west-1"}}
	}
	if i%10 == 4 && spec["replicas"].(int64) > 1 {
		spec["minAvailable"] = int64(1)
	}
	a.spec = spec
	return a
}

// SeedFleet creates opts.Apps extra Apps in batches (see fleetSpec for the
// mix), waits until the operator and the cluster have brought every App to
// the state it is built for, plays a second release on some healthy Apps,
// waits again, and reports. The Apps are named fleet-00000, fleet-00001, ...
// (FleetApp); an App that exists already is left as it is, so a second run
// only adds the missing ones.
func SeedFleet(ctx context.Context, dyn dynamic.Interface, opts FleetOptions) (FleetResult, error) {
	if opts.Apps <= 0 {
		return FleetResult{}, fmt.Errorf("demo: fleet of %d apps", opts.Apps)
	}
	if len(opts.Namespaces) == 0 {
		opts.Namespaces = []string{"storefront", "payments"}
	}
	if opts.Batch <= 0 {
		opts.Batch = 200
	}
	if opts.Workers <= 0 {
		opts.Workers = 8
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10*time.Minute + time.Duration(opts.Apps)*time.Second
	}
	if opts.Stall <= 0 {
		opts.Stall = 5 * time.Minute
	}
	progress := func(format string, args ...any) {
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "fleet: "+format+"\n", args...)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	begin := time.Now()
	res := FleetResult{Apps: opts.Apps}
	apps := make([]fleetApp, opts.Apps)
	for i := range apps {
		apps[i] = fleetSpec(i, opts.Namespaces)
		switch apps[i].class {
		case classHealthy:
			res.Healthy++
		case classProgressing, classImagePull:
			res.Progressing++
		default:
			res.Degraded++
		}
		if apps[i].next != "" {
			res.WithHistory++
		}
	}
	progress("creating %d apps (%d healthy, %d progressing, %d degraded) in batches of %d", opts.Apps, res.Healthy, res.Progressing, res.Degraded, opts.Batch)
	for start := 0; start < len(apps); start += opts.Batch {
		end := min(start+opts.Batch, len(apps))
		if err := forEach(ctx, apps[start:end], opts.Workers, func(a fleetApp) error { return createApp(ctx, dyn, a) }); err != nil {
			return res, err
		}
		progress("created %d/%d apps (%s)", end, len(apps), time.Since(begin).Round(time.Second))
	}
	res.Created = time.Since(begin)
	stalled, err := waitConverged(ctx, dyn, apps, false, opts.Stall, progress)
	res.Unconverged = append(res.Unconverged, stalled...)
	if err != nil {
		return res, err
	}
	res.Converged = time.Since(begin)
	if len(stalled) == 0 {
		progress("fleet converged: %d apps in %s", opts.Apps, res.Converged.Round(time.Second))
	} else {
		progress("fleet converged but for %d of %d apps (named above) in %s; going on without them", len(stalled), opts.Apps, res.Converged.Round(time.Second))
		apps = withoutStalled(apps, stalled)
	}

	if res.WithHistory > 0 {
		var hist []fleetApp
		for _, a := range apps {
			if a.next != "" {
				hist = append(hist, a)
			}
		}
		progress("playing a second release on %d apps", len(hist))
		if err := forEach(ctx, hist, opts.Workers, func(a fleetApp) error {
			patch, err := json.Marshal(map[string]any{"spec": map[string]any{"image": a.next}})
			if err != nil {
				return err
			}
			_, err = dyn.Resource(appcr.Resource).Namespace(a.namespace).Patch(ctx, a.name, types.MergePatchType, patch, metav1.PatchOptions{})
			if err != nil {
				return fmt.Errorf("demo: release %s/%s: %w", a.namespace, a.name, err)
			}
			return nil
		}); err != nil {
			return res, err
		}
		stalled, err := waitConverged(ctx, dyn, apps, true, opts.Stall, progress)
		res.Unconverged = append(res.Unconverged, stalled...)
		if err != nil {
			return res, err
		}
		res.HistoryDone = time.Since(begin)
		if len(stalled) == 0 {
			progress("second releases rolled out: fleet converged in %s", res.HistoryDone.Round(time.Second))
		} else {
			progress("second releases rolled out but for %d apps (named above) in %s", len(stalled), res.HistoryDone.Round(time.Second))
		}
	}
	return res, nil
}

func createApp(ctx context.Context, dyn dynamic.Interface, a fleetApp) error {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": appcr.GroupVersion.String(), "kind": appcr.Kind.Kind,
		"metadata": map[string]any{"name": a.name, "namespace": a.namespace, "labels": map[string]any{"team": a.namespace, "fleet": "seeded"}},
		"spec":     a.spec,
	}}
	_, err := dyn.Resource(appcr.Resource).Namespace(a.namespace).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("demo: create %s/%s: %w", a.namespace, a.name, err)
	}
	return nil
}

// forEach runs fn on every item with at most workers at a time and returns
// the first error.
func forEach[T any](ctx context.Context, items []T, workers int, fn func(T) error) error {
	ch := make(chan T)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range workers {
		wg.Go(func() {
			for it := range ch {
				if err := fn(it); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
feed:
	for _, it := range items {
		select {
		case ch <- it:
		case <-ctx.Done():
			break feed
		}
	}
	close(ch)
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = fmt.Errorf("demo: %w", ctx.Err())
	}
	return first
}

// waitConverged watches the seeded Apps (one informer: a list, then watch
// events, so a large fleet is not listed again every few seconds while the
// apiserver is busiest) until each one is in the state it is built for:
// the operator observed its generation, and its Ready condition says
// RolloutComplete (healthy), ProgressDeadlineExceeded (stuck,
// crash-looping) or that the rollout is under way (progressing, image
// pull); afterRelease also wants the second release's image. It counts from
// the informer's store every few seconds and prints the count every 15 s.
//
// When no further App converges for stall, it prints every App left with
// its state and returns them (sorted by App): with no error when they are at most one in a
// hundred of apps, else with one. A deadline names the first few too.
func waitConverged(ctx context.Context, dyn dynamic.Interface, apps []fleetApp, afterRelease bool, stall time.Duration, progress func(string, ...any)) ([]Stalled, error) {
	want := make(map[string]fleetApp, len(apps))
	for _, a := range apps {
		want[a.namespace+"/"+a.name] = a
	}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, metav1.NamespaceAll, func(o *metav1.ListOptions) {
		o.LabelSelector = "fleet=seeded"
	})
	inf := factory.ForResource(appcr.Resource).Informer()
	// Only metadata and status are read: drop the rest as objects enter
	// the store.
	if err := inf.SetTransform(func(obj any) (any, error) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			u.SetManagedFields(nil)
			unstructured.RemoveNestedField(u.Object, "spec")
		}
		return obj, nil
	}); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	watchCtx, stop := context.WithCancel(ctx)
	factory.Start(watchCtx.Done())
	// Shutdown waits for the informer to end, which it does once its
	// context is cancelled: stop first (two defers would run the other
	// way round and hang until ctx's deadline).
	defer func() {
		stop()
		factory.Shutdown()
	}()
	start := time.Now()
	last, gained := start, start
	done, best := 0, -1
	for {
		if inf.HasSynced() {
			done = countConverged(inf.GetStore().List(), want, afterRelease)
			if done == len(apps) {
				return nil, nil
			}
			if done > best {
				best, gained = done, time.Now()
			}
			if time.Since(gained) > stall {
				left := notConverged(inf.GetStore().List(), want, afterRelease)
				progress("%d/%d apps converged; none more in %s. Not converged:", done, len(apps), stall)
				for _, s := range left {
					progress("  %s", s)
				}
				if len(left)*100 > len(apps) {
					return left, fmt.Errorf("demo: fleet not converged: %d of %d apps stalled for %s, e.g. %s", len(left), len(apps), stall, someOf(left))
				}
				return left, nil
			}
		}
		if time.Since(last) > 15*time.Second {
			progress("%d/%d apps converged (%s)", done, len(apps), time.Since(start).Round(time.Second))
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			left := notConverged(inf.GetStore().List(), want, afterRelease)
			return left, fmt.Errorf("demo: fleet not converged: %d/%d apps, e.g. %s: %w", done, len(apps), someOf(left), ctx.Err())
		case <-time.After(2 * time.Second):
		}
	}
}

// notConverged describes, sorted, every App of want that the store does
// not hold in the state it is built for.
func notConverged(objs []any, want map[string]fleetApp, afterRelease bool) []Stalled {
	seen := make(map[string]bool, len(objs))
	var left []Stalled
	for _, o := range objs {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		key := u.GetNamespace() + "/" + u.GetName()
		a, ok := want[key]
		if !ok {
			continue
		}
		seen[key] = true
		if !converged(u, a, afterRelease) {
			left = append(left, Stalled{App: key, State: describeApp(u, a, afterRelease)})
		}
	}
	for key, a := range want {
		if !seen[key] {
			left = append(left, Stalled{App: key, State: fmt.Sprintf("(%s): not found", a.class)})
		}
	}
	sort.Slice(left, func(i, j int) bool { return left[i].App < left[j].App })
	return left
}

// describeApp says what state an App is in, for a person finding out why
// it did not converge (Stalled.State).
func describeApp(u *unstructured.Unstructured, a fleetApp, afterRelease bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "(%s): ", a.class)
	status, reason, message := readyOf(u)
	if status == "" {
		b.WriteString("no Ready condition")
	} else {
		fmt.Fprintf(&b, "Ready=%s %s", status, reason)
		if message != "" {
			// Quoted: a terminal shows it, and the cluster wrote it.
			fmt.Fprintf(&b, ": %q", truncate(message, 200))
		}
	}
	og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if og != u.GetGeneration() {
		fmt.Fprintf(&b, "; generation %d, observed %d", u.GetGeneration(), og)
	}
	if afterRelease && a.next != "" {
		if img, _, _ := unstructured.NestedString(u.Object, "status", "image"); img != a.next {
			fmt.Fprintf(&b, "; image %q, want %q", img, a.next)
		}
	}
	if t, _, _ := unstructured.NestedString(u.Object, "status", "lastReconciledAt"); t != "" {
		fmt.Fprintf(&b, "; status written %s", t)
	}
	return b.String()
}

// truncate cuts s to at most n runes.
func truncate(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i] + "..."
		}
		n--
	}
	return s
}

// withoutStalled drops from apps those named in stalled.
func withoutStalled(apps []fleetApp, stalled []Stalled) []fleetApp {
	drop := make(map[string]bool, len(stalled))
	for _, s := range stalled {
		drop[s.App] = true
	}
	var kept []fleetApp
	for _, a := range apps {
		if !drop[a.namespace+"/"+a.name] {
			kept = append(kept, a)
		}
	}
	return kept
}

// countConverged counts the objects of the store that are seeded Apps in
// the state they are built for.
func countConverged(objs []any, want map[string]fleetApp, afterRelease bool) int {
	done := 0
	for _, o := range objs {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		if a, ok := want[u.GetNamespace()+"/"+u.GetName()]; ok && converged(u, a, afterRelease) {
			done++
		}
	}
	return done
}

func converged(u *unstructured.Unstructured, a fleetApp, afterRelease bool) bool {
	og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if og != u.GetGeneration() {
		return false
	}
	if afterRelease && a.next != "" {
		img, _, _ := unstructured.NestedString(u.Object, "status", "image")
		if img != a.next {
			return false
		}
	}
	status, reason, _ := readyOf(u)
	switch a.class {
	case classHealthy:
		return status == "True" && reason == "RolloutComplete"
	case classStuck, classCrashLoop:
		return reason == "ProgressDeadlineExceeded"
	case classProgressing:
		// Its pods are ready after an hour: a long run sees it complete.
		return reason == "RollingOut" || status == "True" && reason == "RolloutComplete"
	default:
		return reason == "RollingOut"
	}
}

// readyOf returns the status, reason and message of an App's Ready
// condition ("" when it has none).
func readyOf(u *unstructured.Unstructured) (status, reason, message string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			status, _ = m["status"].(string)
			reason, _ = m["reason"].(string)
			message, _ = m["message"].(string)
		}
	}
	return status, reason, message
}
