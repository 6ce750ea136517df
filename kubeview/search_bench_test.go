package kubeview_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/search"
)

// searchBenchCases are the queries of BenchmarkSearchFirstPage (10
// objects per App: the App, a Deployment, 2 ReplicaSets, 3 pods, a
// Service, an HPA, a PDB), each a function of the fleet's last App
// (benchLastApp). The ones that match little or only the last App are the
// worst case of a first page: a walk would visit every App.
var searchBenchCases = []struct {
	name string
	q    func(last string) string
	want int // results on the first page (search.DefaultLimit at most)
}{
	{"kind=Pod (matches at once)", func(string) string { return "kind:Pod" }, search.DefaultLimit},
	{"no match", func(string) string { return "zzz-nothing" }, 0},
	{"glob kind+name, last App", func(l string) string { return "kind:Service name:*-" + l[len(l)-5:] }, 1},
	{"glob no prefix, last App", func(l string) string { return "name:*-" + l[len(l)-5:] }, 5},
	{"glob with prefix, last App", func(l string) string { return "name:bill*-" + l[len(l)-5:] }, 5},
	{"glob many stars, last App", func(l string) string { return "name:b*i*l*-" + l[len(l)-5:] + "*" }, 10},
	{"name prefix, last App", func(l string) string { return "name:" + l }, 10},
	{"plain word, last App", func(l string) string { return l[len(l)-6:] }, 10},
	{"label, last App", func(l string) string { return "label:app.kubernetes.io/instance=" + l }, 9},
	{"image substring, last App", func(l string) string { return "image:" + l + ":1.2" }, 6},
	{"image and kind, all Apps", func(string) string { return "image:1.1.0 kind:ReplicaSet" }, search.DefaultLimit},
	{"kind+ns, no match", func(string) string { return "kind:Job ns:team-d" }, 0},
	{"kind+ns+word, last App", func(l string) string { return "kind:Deployment ns:team-d " + l }, 1},
	{"ns term, no match", func(string) string { return "ns:team-a zzz-nothing" }, 0},
}

// benchLastApp is the name of the last App of benchFixtures(n).
func benchLastApp(n int) string {
	return fmt.Sprintf("%s-%05d", genPrefixes[(n-1)%len(genPrefixes)], n-1)
}

// BenchmarkSearchFirstPage: the first page of a fleet-wide search over a
// synced cache of 1,000 and 10,000 Apps, as the handler runs it
// (search.Run over the cache's index, everything visible).
func BenchmarkSearchFirstPage(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) {
			c := syncedBenchCache(b, n)
			members := []search.Member{{Cluster: "in-cluster", Source: c}}
			all := func(string, string, string) bool { return true }
			for _, tc := range searchBenchCases {
				b.Run(tc.name, func(b *testing.B) {
					qs := tc.q(benchLastApp(n))
					q, err := search.Parse(qs)
					if err != nil {
						b.Fatal(err)
					}
					if p := search.Run(members, q, all, 0, search.DefaultLimit); p.Count != tc.want {
						b.Fatalf("search %q = %d results, want %d", qs, p.Count, tc.want)
					}
					b.ReportAllocs()
					cpu0 := processCPU(b)
					for b.Loop() {
						search.Run(members, q, all, 0, search.DefaultLimit)
					}
					// CPU time per search: on a machine whose cores other work
					// shares, wall time counts the waits for a core too.
					b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
				})
			}
		})
	}
}

// BenchmarkSearchIndexMemory: the heap the search's index and label store
// hold at 10,000 Apps (measured by dropping them from a synced cache).
func BenchmarkSearchIndexMemory(b *testing.B) {
	const n = 10000
	c := syncedBenchCache(b, n)
	for b.Loop() {
	}
	before := heapInUse()
	kubeview.DropSearchIndex(c)
	after := heapInUse()
	b.ReportMetric(float64(before-after)/1e6, "MB-index")
	b.ReportMetric(float64(before-after)/float64(n)*1000/1e6, "MB-index/1000apps")
}

// BenchmarkSearchIndexUpdate: the index's write path at 10,000 Apps as
// the cache runs it on an event: an App's tree rebuilt from the caches
// (its objects, images, labels) and put into the index, one App at a time
// and in batches of 100 (a recompute's batch under churn).
func BenchmarkSearchIndexUpdate(b *testing.B) {
	const n = 10000
	c := syncedBenchCache(b, n)
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprintf("apps=%d/batch=%d", n, batch), func(b *testing.B) {
			keys := make([]string, batch)
			b.ReportAllocs()
			cpu0 := processCPU(b)
			i := 0
			for b.Loop() {
				for j := range keys {
					k := (i * 7919) % n // spread over the fleet
					keys[j] = fmt.Sprintf("%s/%s-%05d", benchNamespaces[k%len(benchNamespaces)], genPrefixes[k%len(genPrefixes)], k)
					i++
				}
				kubeview.IndexApps(c, keys)
			}
			b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N*batch), "cpu-µs/app")
		})
	}
}

// syncedBenchCache is a cache of n benchmark Apps (decoded from JSON, as
// a real client's), synced within 5 minutes (a loaded machine takes more
// than startCache's minute); it runs until the benchmark ends.
func syncedBenchCache(b *testing.B, n int) *kubeview.Cache {
	b.Helper()
	cs, dyn := benchClients(n, false)
	decodeLists(cs, dyn)
	c, err := kubeview.New(cs, dyn, discardLogger(), kubeview.Options{Namespaces: benchNamespaces, ProbeInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	c.Start(ctx)
	wctx, stop := context.WithTimeout(ctx, 5*time.Minute)
	defer stop()
	if err := c.WaitForSync(wctx); err != nil {
		b.Fatal(err)
	}
	return c
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
