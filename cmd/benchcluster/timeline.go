package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/demo"
	"github.com/hanzoai/deploy-web/internal/labels"
	"github.com/hanzoai/deploy-web/timeline"
)

// timelineWindow is each of the timeline's measurement windows.
const timelineWindow = 30 * time.Second

// timelineNamespace is the dashboard's own namespace in the bench (its
// --history-namespace): the audit trail and the timeline's shards.
const timelineNamespace = "deploy-web"

// timelineResult is what the bench measures of the timeline: shard writes
// per second at rest and under churn (the budget: 0 and at most 1), and
// the bytes the shards hold.
type timelineResult struct {
	window               time.Duration
	restWrites           int
	churnWrites, patches int
	storedBytes, shards  int
	// drained says the writer's queue from the start emptied before the
	// rest window (else the fleet never stopped changing: crash loops).
	drained bool
	err     string
}

// ensureNamespace creates ns unless it exists.
func ensureNamespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// shardWrites counts the writes (creates and updates) of the timeline's
// shard ConfigMaps in ns during window, while work runs (nil: at rest).
func shardWrites(ctx context.Context, cs kubernetes.Interface, ns string, window time.Duration, work func(ctx context.Context) int) (writes, done int, err error) {
	sel := metav1.ListOptions{LabelSelector: labels.Kind + "=" + timeline.KindValue}
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, sel)
	if err != nil {
		return 0, 0, fmt.Errorf("list the timeline's shards: %w", err)
	}
	sel.ResourceVersion = list.ResourceVersion
	wctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	w, err := cs.CoreV1().ConfigMaps(ns).Watch(wctx, sel)
	if err != nil {
		return 0, 0, fmt.Errorf("watch the timeline's shards: %w", err)
	}
	defer w.Stop()
	workDone := make(chan int, 1)
	if work != nil {
		go func() { workDone <- work(wctx) }()
	} else {
		workDone <- 0
	}
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return writes, <-workDone, nil
			}
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if ok && cm.Labels[labels.Kind] == timeline.KindValue && (ev.Type == watch.Added || ev.Type == watch.Modified) {
				writes++
			}
		case <-wctx.Done():
			return writes, <-workDone, nil
		}
	}
}

// churn patches the images of the fleet's Apps, one every interval, in
// turn, until ctx ends; it returns how many patches were sent. Each patch
// is a deploy (and its health flapping) in the timeline.
func churn(dyn dynamic.Interface, apps int, interval time.Duration) func(ctx context.Context) int {
	return func(ctx context.Context) int {
		stamp := time.Now().Unix() % 100000
		n := 0
		t := time.NewTicker(interval)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return n
			case <-t.C:
			}
			ns, name := demo.FleetApp(i%apps, []string{"storefront", "payments"})
			image := fmt.Sprintf("registry.demo.local/%s/%s:8.%d.%d", ns, name, stamp, i)
			patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"image": image}})
			if _, err := dyn.Resource(appcr.Resource).Namespace(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "benchcluster"}); err == nil {
				n++
			}
		}
	}
}

// storedShards sums the bytes of the timeline's shards in ns.
func storedShards(ctx context.Context, cs kubernetes.Interface, ns string) (bytes, shards int, err error) {
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.Kind + "=" + timeline.KindValue})
	if err != nil {
		return 0, 0, err
	}
	for _, cm := range list.Items {
		bytes += len(cm.BinaryData[timeline.DataKey])
	}
	return bytes, len(list.Items), nil
}

// measureTimeline measures the timeline of a running dashboard: writes at
// rest and under churn over window each, then the bytes stored once the
// writer caught up (a minute at most).
func measureTimeline(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, apps int, window time.Duration) timelineResult {
	r := timelineResult{window: window}
	// A start records what it finds (the last hour's Warning Events, the
	// Apps still converging) and the writer drains that at one shard a
	// second: at rest is after it.
	r.drained = waitQuiet(ctx, cs, 36)
	var err error
	if r.restWrites, _, err = shardWrites(ctx, cs, timelineNamespace, window, nil); err != nil {
		r.err = err.Error()
		return r
	}
	if r.churnWrites, r.patches, err = shardWrites(ctx, cs, timelineNamespace, window, churn(dyn, apps, 50*time.Millisecond)); err != nil {
		r.err = err.Error()
		return r
	}
	// The writer empties its queue at one shard a second: wait for it
	// (at most a minute), then sum the shards.
	waitQuiet(ctx, cs, 12)
	if r.storedBytes, r.shards, err = storedShards(ctx, cs, timelineNamespace); err != nil {
		r.err = err.Error()
	}
	return r
}

// waitQuiet waits for 5 seconds without a shard write, at most tries
// times; it returns whether it came.
func waitQuiet(ctx context.Context, cs kubernetes.Interface, tries int) bool {
	for range tries {
		n, _, err := shardWrites(ctx, cs, timelineNamespace, 5*time.Second, nil)
		if err != nil {
			return false
		}
		if n == 0 {
			return true
		}
	}
	return false
}

// perSecond is n over d.
func perSecond(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}
