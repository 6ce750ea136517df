package audit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/devcluster"
)

// BenchmarkListOnRealCluster seeds 10,000 record heads (50 streams of
// 200, chained, no manifests, created directly as Append writes them) on
// the real control plane, starts the index from the API server and
// measures List's first page (50, newest first, chains verified). It
// reports the seeding time and how long the index took to sync
// (start-up). It skips with -short.
func BenchmarkListOnRealCluster(b *testing.B) {
	if testing.Short() {
		b.Skip("starts a control plane")
	}
	c := devcluster.ForTest(b, devcluster.Options{})
	cfg := rest.CopyConfig(c.Config)
	cfg.QPS, cfg.Burst = 1000, 1000 // seeding only
	kube := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()
	const ns = "deploy-web"
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	s, err := New(kube.CoreV1(), metadata.NewForConfigOrDie(cfg), Options{Namespace: ns})
	if err != nil {
		b.Fatal(err)
	}
	seedStart := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	errs := make(chan error, 1)
	for i := range 50 {
		ch := buildChain(b, s, testRecord("eu", fmt.Sprintf("env-%02d", i), testTime().Add(time.Duration(i)*time.Second)), 200, nil)
		for _, cm := range append([]*corev1.ConfigMap{ch.headCM()}, ch.heads...) {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			})
		}
	}
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	seeded := time.Since(seedStart)
	syncStart := time.Now()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.Start(sctx); err != nil {
		b.Fatal(err)
	}
	synced := time.Since(syncStart)
	p, err := s.List(ctx, Filter{})
	if err != nil || len(p.Records) != DefaultLimit || len(flaggedIDs(p)) != 0 {
		b.Fatalf("List = %d records, %v; want %d intact: %s", len(p.Records), err, DefaultLimit, chainState(p))
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.List(ctx, Filter{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(seeded.Seconds(), "seed-s")
	b.ReportMetric(synced.Seconds(), "index-sync-s")
}
