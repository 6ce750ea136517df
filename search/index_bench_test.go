package search

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// benchIndexFleet returns n Apps shaped as kubeview's benchmark fleet:
// 10 objects each (the App, a Deployment, 2 ReplicaSets, 3 pods, a
// Service, an HPA, a PDB) with their images and instance labels, in 4
// namespaces.
func benchIndexFleet(n int) []App {
	prefixes := []string{"web", "api", "worker", "billing"}
	apps := make([]App, n)
	for i := range n {
		name := fmt.Sprintf("%s-%05d", prefixes[i%4], i)
		apps[i] = benchApp(fmt.Sprintf("team-%c", 'a'+i%4), name, "5d8f7c9b6")
	}
	return apps
}

func benchApp(ns, name, hash string) App {
	labels := map[string]string{"app.kubernetes.io/instance": name}
	podLabels := map[string]string{"app.kubernetes.io/instance": name, "pod-template-hash": hash}
	img := []string{"registry.test/" + name + ":1.2.0"}
	objs := []Object{
		{Group: "hanzo.ai", Kind: "App", Name: name, Images: img},
		{Group: "apps", Kind: "Deployment", Name: name, Labels: labels, Images: img},
		{Group: "apps", Kind: "ReplicaSet", Name: name + "-7c6b5a4f3", Labels: labels, Images: []string{"registry.test/" + name + ":1.1.0"}},
		{Group: "apps", Kind: "ReplicaSet", Name: name + "-" + hash, Labels: podLabels, Images: img},
	}
	for _, s := range []string{"abcde", "fghij", "klmno"} {
		objs = append(objs, Object{Kind: "Pod", Name: name + "-" + hash + "-" + s, Labels: podLabels, Images: img})
	}
	objs = append(objs,
		Object{Kind: "Service", Name: name, Labels: labels},
		Object{Group: "autoscaling", Kind: "HorizontalPodAutoscaler", Name: name, Labels: labels},
		Object{Group: "policy", Kind: "PodDisruptionBudget", Name: name, Labels: labels})
	return App{Namespace: ns, Name: name, Objects: objs}
}

// BenchmarkIndexUpdate: the index's write path at 10,000 Apps, as the
// cache calls it on object events: one App's tree replaced (a new
// ReplicaSet hash each time), a batch of 100 Apps, and the whole fleet
// put into an empty index (start-up).
func BenchmarkIndexUpdate(b *testing.B) {
	const n = 10000
	fleet := benchIndexFleet(n)
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprintf("apps=%d/batch=%d", n, batch), func(b *testing.B) {
			var x Index
			x.Update(fleet, nil)
			// The new trees, made before the clock runs: 64 batches of
			// random Apps with a new ReplicaSet hash.
			r := rand.New(rand.NewPCG(1, 2))
			batches := make([][]App, 64)
			for i := range batches {
				batches[i] = make([]App, batch)
				for j := range batches[i] {
					a := fleet[r.IntN(n)]
					batches[i][j] = benchApp(a.Namespace, a.Name, fmt.Sprintf("%09x", i*batch+j))
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				x.Update(batches[i%len(batches)], nil)
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*batch), "µs/app")
		})
	}
	b.Run(fmt.Sprintf("apps=%d/build", n), func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var x Index
			x.Update(fleet, nil)
		}
	})
}

// BenchmarkIndexFirstPageUnderChurn: the first page of the worst queries
// (matching only the last App) at 10,000 Apps while another goroutine
// replaces one App's tree every millisecond (1,000 updates a second).
func BenchmarkIndexFirstPageUnderChurn(b *testing.B) {
	const n = 10000
	fleet := benchIndexFleet(n)
	var x Index
	x.Update(fleet, nil)
	stop, done := make(chan struct{}), make(chan int)
	go func() {
		r := rand.New(rand.NewPCG(3, 4))
		updates := 0
		for {
			select {
			case <-stop:
				done <- updates
				return
			case <-time.After(time.Millisecond):
			}
			a := fleet[r.IntN(n-1)] // never the last App: the queries' want stays
			x.Update([]App{benchApp(a.Namespace, a.Name, fmt.Sprintf("%09x", updates))}, nil)
			updates++
		}
	}()
	members := []Member{{Cluster: "c", Source: &x}}
	all := func(string, string, string) bool { return true }
	for _, s := range []string{"name:*-09999", "09999", "label:app.kubernetes.io/instance=billing-09999", "image:billing-09999:", "kind:Job ns:team-d"} {
		b.Run(s, func(b *testing.B) {
			q, err := Parse(s)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				Run(members, q, all, 0, DefaultLimit)
			}
		})
	}
	close(stop)
	b.ReportMetric(float64(<-done), "updates")
}
