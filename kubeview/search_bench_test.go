package kubeview_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/search"
)

// searchBenchCases are the queries of BenchmarkSearchFirstPage at 10,000
// Apps (10 objects each: the App, a Deployment, 2 ReplicaSets, 3 pods, a
// Service, an HPA, a PDB). The ones that match little walk every App: the
// worst case of a first page.
var searchBenchCases = []struct {
	name, q string
	want    int // results on the first page (search.DefaultLimit at most)
}{
	{"kind=Pod (matches at once)", "kind:Pod", search.DefaultLimit},
	{"no match (walks every App)", "zzz-nothing", 0},
	{"glob near the end", "kind:Service name:*-09999", 1},
	{"label near the end", "label:app.kubernetes.io/instance=" + benchLastApp, 9},
	{"image and kind, all Apps", "image:1.1.0 kind:ReplicaSet", search.DefaultLimit},
	{"namespace term, no match", "ns:team-a zzz-nothing", 0},
}

// benchLastApp is the name of the last App of benchFixtures(10000).
const benchLastApp = "billing-09999"

// BenchmarkSearchFirstPage: the first page of a fleet-wide search over a
// synced cache of 10,000 Apps, as the handler runs it (search.Run over
// the cache's index, everything visible).
func BenchmarkSearchFirstPage(b *testing.B) {
	c := syncedBenchCache(b, 10000)
	members := []search.Member{{Cluster: "in-cluster", Source: c}}
	all := func(string, string, string) bool { return true }
	for _, tc := range searchBenchCases {
		b.Run(tc.name, func(b *testing.B) {
			q, err := search.Parse(tc.q)
			if err != nil {
				b.Fatal(err)
			}
			if p := search.Run(members, q, all, 0, search.DefaultLimit); p.Count != tc.want {
				b.Fatalf("search %q = %d results, want %d", tc.q, p.Count, tc.want)
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
