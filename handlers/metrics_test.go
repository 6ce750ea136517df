package handlers

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeMetrics records what the handlers measure.
type fakeMetrics struct {
	mu       sync.Mutex
	observed []string // "route status"
	open     int
	maxOpen  int
}

func (f *fakeMetrics) ObserveRequest(route string, status int, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.observed = append(f.observed, fmt.Sprintf("%s %d", route, status))
}

func (f *fakeMetrics) StreamOpened() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.open++
	f.maxOpen = max(f.maxOpen, f.open)
}

func (f *fakeMetrics) StreamClosed() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.open--
}

func (f *fakeMetrics) snapshot() (observed []string, open, maxOpen int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.observed), f.open, f.maxOpen
}

// TestMetricsRoutePatterns checks that each request is measured under its
// route table pattern (never the raw path), denials included, and that the
// main site serves no /metrics: it stays behind authentication like any
// unknown URL.
func TestMetricsRoutePatterns(t *testing.T) {
	fm := &fakeMetrics{}
	ts := newTestServer(t, newFakeView(testRows()), func(o *Options) { o.Metrics = fm })
	tests := []struct {
		req  request
		want string
	}{
		{request{target: "/healthz"}, "GET /healthz 200"},
		{request{target: "/static/nope.css"}, "GET /static/{file} 404"},
		{request{target: "/", admin: true}, "GET /{$} 200"},
		{request{target: "/"}, "GET /{$} 401"},
		{request{target: "/clusters/in-cluster/apps/shop/does-not-exist", admin: true}, "GET /clusters/{cluster}/apps/{namespace}/{name} 404"},
		{request{target: "/v1/deploy/applications?limit=1", admin: true}, "GET /v1/deploy/applications 200"},
		{request{target: "/metrics"}, "/ 401"},
		{request{target: "/metrics", admin: true}, "/ 404"},
		{request{target: "/no/such/page/" + strings.Repeat("x", 50), admin: true}, "/ 404"},
	}
	for _, tt := range tests {
		before, _, _ := fm.snapshot()
		ts.do(t, tt.req)
		after, _, _ := fm.snapshot()
		if len(after) != len(before)+1 || after[len(after)-1] != tt.want {
			t.Errorf("GET %s (admin %v): measured %q, want %q", tt.req.target, tt.req.admin, after[len(before):], tt.want)
		}
	}
}

// TestMetricsEventStream checks that an event-stream answer counts as an
// open stream while it runs (not as a request duration), that flushing
// still works through the instrumented writer, and that the gauge goes
// back down when the handler returns.
func TestMetricsEventStream(t *testing.T) {
	fm := &fakeMetrics{}
	ts := newTestServer(t, newFakeView(nil), func(o *Options) { o.Metrics = fm })
	inStream := make(chan struct{})
	release := make(chan struct{})
	h := ts.srv.instrument("GET /stream", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("Flush() through the instrumented writer = %v", err)
		}
		_, _ = io.WriteString(w, "data: {}\n\n")
		close(inStream)
		<-release
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Error(err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	<-inStream
	if _, open, _ := fm.snapshot(); open != 1 {
		t.Errorf("open streams during the stream = %d, want 1", open)
	}
	close(release)
	<-done
	observed, open, maxOpen := fm.snapshot()
	if open != 0 || maxOpen != 1 {
		t.Errorf("open streams after = %d (max %d), want 0 (max 1)", open, maxOpen)
	}
	if len(observed) != 0 {
		t.Errorf("a stream was measured as a request: %q", observed)
	}
}

// TestNoMetricsNoWrapper checks that without Metrics the routes are served
// as before (nothing wraps them).
func TestNoMetricsNoWrapper(t *testing.T) {
	ts := newTestServer(t, newFakeView(nil))
	if w := ts.do(t, request{target: "/healthz"}); w.Code != http.StatusOK {
		t.Errorf("GET /healthz = %d, want 200", w.Code)
	}
}
