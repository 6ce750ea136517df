// Package clusterfeed feeds the timeline from the clusters: what every
// replica observes of each member cluster's informer caches (health,
// sync, drift, containers) and of the Warning Events of its platform
// namespaces, handed to the timeline store (which the Lease holder
// writes). The third source, the audit records (deploys, rollbacks), is
// timeline/recordentries, a subscriber of the one records feed. It sits
// beside timeline, not in it, because it reads kubeview's rows.
package clusterfeed

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/timeline"
)

// Sink is what the feeds write to (implemented by
// *timeline.Store).
type Sink interface {
	Observe(app timeline.App, cur timeline.State)
	Forget(app timeline.App)
	Record(entries ...timeline.Entry)
}

// View is what the App feed reads of one cluster's caches
// (implemented by *kubeview.Cache).
type View interface {
	Touched() <-chan struct{}
	TakeTouched() []string
	Row(namespace, name string) (kubeview.AppRow, bool)
	AppPods(namespace, app string) []*corev1.Pod
}

// Pace is the least time between two passes of a feed over the Apps
// it was told changed: a churning fleet is read at most once a second,
// its changes batched.
const Pace = time.Second

// stateOf is the timeline's view of an App: its fleet row's health, sync,
// drift and declared version, and its pods' containers.
func stateOf(row kubeview.AppRow, pods []*corev1.Pod) timeline.State {
	return timeline.State{
		Health: string(row.Health.Status), HealthMessage: row.Health.Message,
		Sync: string(row.Sync.Status), SyncMessage: row.Sync.Message,
		Drifted: row.Sync.Drifted, Revision: row.Version,
		Containers: timeline.ContainersOf(pods),
	}
}

// Apps observes the Apps of one cluster each time its caches say they
// were touched, at most once per pace, until ctx ends. An App gone from
// the fleet is forgotten (its entries stay until they age out).
func Apps(ctx context.Context, cluster string, v View, sink Sink, pace time.Duration) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-v.Touched():
		}
		for _, key := range v.TakeTouched() {
			ns, name, ok := strings.Cut(key, "/")
			if !ok {
				continue
			}
			app := timeline.App{Cluster: cluster, Namespace: ns, Name: name}
			row, ok := v.Row(ns, name)
			if !ok {
				sink.Forget(app)
				continue
			}
			sink.Observe(app, stateOf(row, v.AppPods(ns, name)))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pace):
		}
	}
}

// AppOfFunc maps an object of a namespace to its App (kubeview.Cache.AppOf).
type AppOfFunc func(namespace, group, kind, name string) (string, bool)

// warningEntry is the timeline entry of a Warning Event about an object
// of an App: at the Event's last time, Ref the object as the tree names
// it (kubeview.Ref), Message "Reason: message". False for an Event that
// is not a Warning or is about no App's object.
func warningEntry(cluster string, ev *corev1.Event, appOf AppOfFunc) (timeline.Entry, bool) {
	if ev.Type != corev1.EventTypeWarning {
		return timeline.Entry{}, false
	}
	o := ev.InvolvedObject
	ns := o.Namespace
	if ns == "" {
		ns = ev.Namespace
	}
	gv, err := schema.ParseGroupVersion(o.APIVersion)
	if err != nil {
		return timeline.Entry{}, false
	}
	app, ok := appOf(ns, gv.Group, o.Kind, o.Name)
	if !ok {
		return timeline.Entry{}, false
	}
	at := eventTime(ev)
	if at.IsZero() {
		return timeline.Entry{}, false
	}
	msg := ev.Message
	if ev.Reason != "" {
		msg = ev.Reason + ": " + msg
	}
	return timeline.Entry{Time: at, App: timeline.App{Cluster: cluster, Namespace: ns, Name: app}, Kind: timeline.KindWarning,
		Ref: kubeview.Ref{Group: gv.Group, Kind: o.Kind, Namespace: ns, Name: o.Name}.String(), Message: msg}, true
}

// eventTime is when an Event last happened: its series' last observation,
// its lastTimestamp, its eventTime or its creation, the first set.
func eventTime(ev *corev1.Event) time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	}
	return ev.CreationTimestamp.Time
}

// stripEvent keeps what warningEntry reads of an Event (the informer's
// transform): a fleet's Warning Events are many, the rest of each is not
// needed.
func stripEvent(obj any) (any, error) {
	ev, ok := obj.(*corev1.Event)
	if !ok {
		return obj, nil
	}
	out := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: ev.Namespace, Name: ev.Name, ResourceVersion: ev.ResourceVersion,
			CreationTimestamp: ev.CreationTimestamp},
		InvolvedObject: corev1.ObjectReference{APIVersion: ev.InvolvedObject.APIVersion, Kind: ev.InvolvedObject.Kind,
			Namespace: ev.InvolvedObject.Namespace, Name: ev.InvolvedObject.Name},
		Type: ev.Type, Reason: ev.Reason, Message: ev.Message, LastTimestamp: ev.LastTimestamp, EventTime: ev.EventTime,
	}
	if len(out.Message) > timeline.MaxMessageBytes {
		out.Message = out.Message[:timeline.MaxMessageBytes] // capped again, on a rune boundary, by Record
	}
	if ev.Series != nil {
		out.Series = &corev1.EventSeries{LastObservedTime: ev.Series.LastObservedTime}
	}
	return out, nil
}

// warningSelector selects Warning Events only (a field the apiserver
// indexes for Events).
var warningSelector = fields.OneTermEqualSelector("type", corev1.EventTypeWarning).String()

// Warnings watches the Warning Events of a cluster's platform
// namespaces and records those about an App's objects, until ctx ends.
// The Events a start lists (the last hour's) are recorded again: the
// store keeps what it holds already and writes nothing for them.
func Warnings(ctx context.Context, cluster string, cs kubernetes.Interface, namespaces []string, appOf AppOfFunc, sink Sink, log *slog.Logger) error {
	for _, ns := range namespaces {
		f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns),
			informers.WithTransform(stripEvent),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = warningSelector }))
		inf := f.Core().V1().Events().Informer()
		record := func(obj any) {
			if ev, ok := obj.(*corev1.Event); ok {
				if e, ok := warningEntry(cluster, ev, appOf); ok {
					sink.Record(e)
				}
			}
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { record(obj) },
			UpdateFunc: func(_, obj any) { record(obj) },
		}); err != nil {
			return fmt.Errorf("timeline: watch the Warning Events of namespace %s in cluster %s: %w", ns, cluster, err)
		}
		if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			log.Warn("timeline: Warning Events not read", "cluster", cluster, "namespace", ns, "err", err)
		}); err != nil {
			return fmt.Errorf("timeline: %w", err)
		}
		f.Start(ctx.Done())
	}
	return nil
}
