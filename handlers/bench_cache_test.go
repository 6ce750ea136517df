package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

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
	mu     sync.Mutex
	caches map[int]*kubeview.Cache
}

func (bc *benchCaches) get(b *testing.B, n int) *kubeview.Cache {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if c, ok := bc.caches[n]; ok {
		return c
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
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("GET %s = %d", route.path, w.Code)
				}
			}
		})
	}
}
