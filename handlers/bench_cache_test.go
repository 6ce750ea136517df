package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/internal/fleetfixture"
	"github.com/hanzoai/deploy-web/kubeview"
)

// benchCaches holds one filled cache per fleet size for the benchmarks.
type benchCaches struct {
	mu      sync.Mutex
	caches  map[int]*kubeview.Cache
	clients map[int]*fake.Clientset
}

func (bc *benchCaches) get(b *testing.B, n int) *kubeview.Cache {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if c, ok := bc.caches[n]; ok {
		return c
	}
	if bc.clients == nil {
		bc.clients = map[int]*fake.Clientset{}
	}
	typed, apps := fleetfixture.Objects(n)
	cs := fake.NewClientset(typed...)
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{appcr.Resource: "AppList"}, apps...)
	c, err := kubeview.New(cs, dyn, slog.New(slog.DiscardHandler), kubeview.Options{Namespaces: []string{"apps", "infra"}, ProbeInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	c.Start(context.Background()) // lives for the test binary
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := c.WaitForSync(ctx); err != nil {
		b.Fatal(err)
	}
	bc.caches[n] = c
	bc.clients[n] = cs
	return c
}

// BenchmarkHomePageFromCache serves the first page of the application list
// (100 rows plus the fleet counts) through the whole handler stack, from a
// real informer cache filled with fixtures.
func BenchmarkHomePageFromCache(b *testing.B) {
	bc := &benchCaches{caches: map[int]*kubeview.Cache{}}
	for _, n := range []int{100, 2000, 10000} {
		b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) {
			c := bc.get(b, n)
			fv := newFakeView(nil)
			ts := newTestServer(b, fv)
			ts.srv.clusters[0].View = c
			benchHomeRoutes(b, ts.srv.Handler())
		})
	}
	// Two clusters of 2,000 Apps each (the same cache under two names):
	// the merged list, beside apps=2000 above.
	b.Run("clusters=2/apps=2x2000", func(b *testing.B) {
		c := bc.get(b, 2000)
		ts := newTestServer(b, newFakeView(nil), func(o *Options) {
			o.Clusters = []Cluster{{Name: "us-east", View: c}, {Name: "eu-west", View: c}}
		})
		benchHomeRoutes(b, ts.srv.Handler())
	})
}

// benchHomeRoutes measures the first HTML page and the whole JSON list.
func benchHomeRoutes(b *testing.B, h http.Handler) {
	for _, route := range []struct{ name, path string }{{"html", "/"}, {"json-all", "/v1/deploy/applications"}} {
		b.Run(route.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, route.path, nil)
			r.Header.Set(testUserHeader, "admin")
			b.ReportAllocs()
			cpu := startCPU(b)
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("GET %s = %d", route.path, w.Code)
				}
			}
			cpu.report(b)
		})
	}
}

// BenchmarkHomePageAfterChange serves the first HTML page right after a
// row changed, as on a live cluster where pods come and go every second:
// each iteration writes a Deployment's status through the client (ready
// replicas 3 or 2), waits for the fleet to publish the changed row
// (Changed), then serves the page. The informer's delivery is in the
// time; the row's recomputation and the list's re-sort or merge are what
// differ between versions.
func BenchmarkHomePageAfterChange(b *testing.B) {
	bc := &benchCaches{caches: map[int]*kubeview.Cache{}}
	for _, n := range []int{10000} {
		b.Run(fmt.Sprintf("apps=%d", n), func(b *testing.B) {
			c := bc.get(b, n)
			cs := bc.clients[n]
			ts := newTestServer(b, newFakeView(nil))
			ts.srv.clusters[0].View = c
			h := ts.srv.Handler()
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Header.Set(testUserHeader, "admin")
			ctx := context.Background()
			deps := cs.AppsV1().Deployments("apps")
			i := 0
			b.ReportAllocs()
			cpu := startCPU(b)
			for b.Loop() {
				i++
				name := fmt.Sprintf("svc-%05d", 2*((i*7919)%(n/2)))
				d, err := deps.Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					b.Fatal(err)
				}
				changed := c.Changed()
				d.Status.ReadyReplicas ^= 1 // 3 and 2 in turn: the row changes
				if _, err := deps.UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
					b.Fatal(err)
				}
				select {
				case <-changed:
				case <-time.After(10 * time.Second):
					b.Fatalf("no change within 10s of an update of %s", name)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("GET / = %d", w.Code)
				}
			}
			cpu.report(b)
		})
	}
}

// cpuClock reads the process's CPU time (user + system, every goroutine:
// the informers', the fleet's and the collector's too), so that a
// benchmark on a loaded machine reports the work apart from the wait.
type cpuClock struct{ start time.Duration }

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU(b *testing.B) cpuClock { return cpuClock{processCPU(b)} }

// report adds cpu-ns/op: the process's CPU time per iteration.
func (c cpuClock) report(b *testing.B) {
	if b.N > 0 {
		b.ReportMetric(float64(processCPU(b)-c.start)/float64(b.N), "cpu-ns/op")
	}
}
