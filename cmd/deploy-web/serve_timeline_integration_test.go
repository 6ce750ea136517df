package main

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/fleetset"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/timeline"
)

// TestTimelineOnRealCluster runs the timeline as serve wires it
// (startTimeline: the caches' feed, the Warning Events, the Lease) on the
// local control plane with the reference operator: a rollout to a version
// that crashes shows a deploy, then a Degraded band and restarts; a
// console restarted on the same cluster shows the same timeline.
func TestTimelineOnRealCluster(t *testing.T) {
	env := platformtest.Start(t, platformtest.Options{Namespaces: []string{"shop", "deploy-web"}, Operator: true})
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	cfg := env.Cluster.Config
	apps := env.Dyn.Resource(appcr.Resource).Namespace("shop")
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hanzo.ai/v1", "kind": "App",
		"metadata": map[string]any{"name": "checkout", "namespace": "shop"},
		"spec":     map[string]any{"image": "registry.test/shop/checkout:1.0.0", "replicas": int64(1), "progressDeadlineSeconds": int64(10)},
	}}
	checkout := timeline.App{Cluster: "home", Namespace: "shop", Name: "checkout"}
	log := slog.New(slog.DiscardHandler)

	// start runs one console's timeline until its context ends.
	start := func(ctx context.Context, identity string, held *leaseHolders) *timeline.Store {
		t.Helper()
		cs := kubernetes.NewForConfigOrDie(cfg)
		view, err := kubeview.New(cs, dynamic.NewForConfigOrDie(cfg), log, kubeview.Options{Namespaces: []string{"shop"}, ProbeInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		view.Start(ctx)
		m := &member{cfg: fleetset.Cluster{Name: "home", Namespaces: []string{"shop"}, AppResource: "apps.v1.hanzo.ai"}, cs: cs, view: view, appKind: "App"}
		store, err := startTimeline(ctx, ctx, held, cs, "deploy-web", identity, []*member{m}, nil, log)
		if err != nil {
			t.Fatal(err)
		}
		return store
	}
	query := func(s *timeline.Store) []timeline.Entry {
		t.Helper()
		es, err := s.Query(ctx, checkout, time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return es
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			select {
			case <-ctx.Done():
				t.Fatalf("%s: not within the test's deadline", what)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}

	c1, stop1 := context.WithCancel(ctx)
	defer stop1()
	var held1 leaseHolders
	s1 := start(c1, "replica-a", &held1)
	<-s1.Ready()
	// Created once the console runs: it sees checkout before it is
	// Healthy, so its going Healthy at 1.0.0 is an entry.
	if _, err := apps.Create(ctx, app, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("checkout observed Healthy at 1.0.0", func() bool {
		return slices.ContainsFunc(query(s1), func(e timeline.Entry) bool {
			return e.Kind == timeline.KindHealth && e.To == "Healthy" && e.Revision == "1.0.0"
		})
	})
	// The rollout that fails: 1.1.0 crashes on start.
	patch := `{"spec":{"image":"registry.test/shop/checkout:1.1.0","podLabels":{"` + devcluster.BehaviorLabel + `":"` + devcluster.BehaviorCrashLoop + `"}}}`
	if _, err := apps.Patch(ctx, "checkout", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var story []timeline.Entry
	waitFor("a deploy, then Degraded, then restarts", func() bool {
		story = query(s1)
		deploy := slices.IndexFunc(story, func(e timeline.Entry) bool {
			return e.Kind == timeline.KindDeploy && e.From == "1.0.0" && e.To == "1.1.0"
		})
		degraded := slices.IndexFunc(story, func(e timeline.Entry) bool { return e.Kind == timeline.KindHealth && e.To == "Degraded" })
		restarts := slices.IndexFunc(story, func(e timeline.Entry) bool { return e.Kind == timeline.KindRestart })
		return deploy >= 0 && degraded > deploy && restarts > deploy
	})
	// Written by the Lease holder (this one replica), then the console
	// stops cleanly: what waits (the crash loop's folded restart count,
	// which a running holder writes only after FoldWrite) is written
	// before its Lease is released, and the restarted console reads back
	// from the shards all that the stopped one held.
	waitFor("the timeline written", func() bool { st := s1.Stats(); return st.Writes > 0 && st.Pending == 0 })
	stop1()
	if !held1.wait(time.Minute) {
		t.Fatal("the stopped console's Lease holder did not return")
	}
	if st := s1.Stats(); st.Pending != 0 || st.Folded != 0 {
		t.Errorf("the stopped console left %d shard(s) pending and %d App(s) folded, want none", st.Pending, st.Folded)
	}
	story = query(s1)
	c2, stop2 := context.WithCancel(ctx)
	defer stop2()
	s2 := start(c2, "replica-b", new(leaseHolders))
	waitFor("the restarted console holds what was written", func() bool {
		got := query(s2)
		for _, want := range story {
			if !slices.ContainsFunc(got, func(e timeline.Entry) bool {
				return e.Time.Equal(want.Time) && e.Kind == want.Kind && e.From == want.From && e.To == want.To
			}) {
				return false
			}
		}
		return true
	})
}
