package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/kubeview"
)

// fakeLogAPI is an apiserver's pod log endpoint: it sends a line every
// interval and holds the stream open until the request ends, counting the
// open streams.
type fakeLogAPI struct {
	*httptest.Server
	active   atomic.Int64
	opened   atomic.Int64
	sent     atomic.Int64
	interval time.Duration
	// perTick lines are sent each interval (default 1).
	perTick int
}

func newFakeLogAPI(t testing.TB, interval time.Duration) *fakeLogAPI {
	t.Helper()
	a := &fakeLogAPI{interval: interval}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.active.Add(1)
		a.opened.Add(1)
		defer a.active.Add(-1)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		tick := time.NewTicker(a.interval)
		defer tick.Stop()
		ts := time.Now().UTC()
		for i := 0; ; i++ {
			for range max(a.perTick, 1) {
				ts = ts.Add(time.Microsecond)
				if _, err := fmt.Fprintf(w, "%s level=info msg=\"http request\" method=GET path=/api/v1/products status=200 duration_ms=12.4 bytes=5321 request_id=%08x\n", ts.Format(time.RFC3339Nano), i); err != nil {
					return
				}
				a.sent.Add(1)
			}
			_ = rc.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
			}
		}
	}))
	t.Cleanup(a.Close)
	return a
}

// realLogsServer is a test server over a real kubeview cache (App apps/web
// with one running pod) whose logs come through client-go's GetLogs from
// api. It returns the client transport to close idle connections with.
func realLogsServer(t testing.TB, api *fakeLogAPI, limits LogStreamLimits) (*testServer, *http.Transport) {
	t.Helper()
	// The pod is in the App's tree: App -> Deployment -> pod.
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps", UID: "dep-web",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "hanzo.ai/v1", Kind: "App", Name: "web", UID: "app-web", Controller: ptr.To(true)}}}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "apps", UID: "pod-web-1", Labels: map[string]string{appcr.InstanceLabel: "web"},
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "dep-web", Controller: ptr.To(true)}},
			CreationTimestamp: metav1.NewTime(testNow.Add(-time.Hour))},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.test/web:1.0.0"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hanzo.ai/v1", "kind": "App",
		"metadata": map[string]any{"name": "web", "namespace": "apps", "uid": "app-web"},
		"spec":     map[string]any{"image": "registry.test/web:1.0.0"},
	}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(k8sruntime.NewScheme(),
		map[schema.GroupVersionResource]string{appcr.Resource: "AppList"}, app)
	view, err := kubeview.New(fake.NewClientset(pod, dep), dyn, slog.New(slog.DiscardHandler), kubeview.Options{Namespaces: []string{"apps"}, ProbeInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	view.Start(ctx)
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := view.WaitForSync(wctx); err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 100}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: api.URL, Transport: tr, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	fv := newFakeView(nil)
	fv.namespaces = []string{"apps"}
	fv.Fleet = view
	ts := newTestServer(t, fv, func(o *Options) {
		o.Clusters[0].Logs = kubeview.NewLogs(view, cs.CoreV1())
		o.LogStreams = limits
	})
	ts.srv.clusters[0].View = view
	ts.handler = ts.srv.Handler()
	return ts, tr
}

// TestLogStreamsLeaveNothingBehind opens 200 follow streams through the
// real GetLogs path, waits for a line on each, drops them all, and checks
// that every upstream log request ended and no goroutine is left.
func TestLogStreamsLeaveNothingBehind(t *testing.T) {
	api := newFakeLogAPI(t, 20*time.Millisecond)
	ts, upstream := realLogsServer(t, api, LogStreamLimits{PerUser: 1000, Total: 1000})
	srv := httptest.NewServer(ts.handler)
	t.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 100}}
	before := runtime.NumGoroutine()
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		target := "/v1/deploy/web/logs?follow=1"
		if i%2 == 1 {
			target = "/clusters/in-cluster/apps/apps/web/logs/stream"
		}
		wg.Go(func() {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel() // the browser goes away
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+target, nil)
			req.Header.Set(testUserHeader, "admin")
			resp, err := client.Do(req)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			got := parseSSE(t, resp.Body, func(evs []sseEvent) bool {
				for _, ev := range evs {
					if ev.Event == "message" || ev.Event == "lines" && len(ev.Data) > 0 && ev.ID != "" {
						return true
					}
				}
				return false
			})
			if len(got) == 0 {
				errs <- fmt.Errorf("%s: no line before the stream ended", target)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := api.opened.Load(); got != n {
		t.Errorf("upstream log requests = %d, want %d", got, n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for (api.active.Load() != 0 || ts.srv.logStreams.inUse() != 0) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if a, o := api.active.Load(), ts.srv.logStreams.inUse(); a != 0 || o != 0 {
		t.Fatalf("after dropping %d streams: %d upstream log requests and %d streams still open", n, a, o)
	}
	client.CloseIdleConnections()
	upstream.CloseIdleConnections()
	t.Logf("goroutines: %d before the streams, %d after", before, runtime.NumGoroutine())
}
