package handlers

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hanzoai/deploy-web/kubeview"
)

// BenchmarkHomePageTwoClusters serves the application list over two
// clusters of 2,000 Apps each, every cluster a real informer cache of its
// own (as serve builds them): the first page of all 4,000, the first page
// of one cluster (?cluster=), and the JSON of all 4,000. Compare with
// BenchmarkHomePageFromCache/apps=2000 (one cluster).
func BenchmarkHomePageTwoClusters(b *testing.B) {
	const n = 2000
	first := (&benchCaches{caches: map[int]*kubeview.Cache{}}).get(b, n)
	second := (&benchCaches{caches: map[int]*kubeview.Cache{}}).get(b, n)
	ts := newTestServer(b, newFakeView(nil), func(o *Options) {
		o.Clusters = []Cluster{{Name: "devcluster", View: first}, {Name: "eu-west", View: second}}
	})
	h := ts.srv.Handler()
	for _, route := range []struct{ name, path string }{
		{"html", "/"}, {"html-one-cluster", "/?cluster=eu-west"}, {"json-all", "/v1/deploy/applications"},
	} {
		b.Run("apps=2x2000/"+route.name, func(b *testing.B) {
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
