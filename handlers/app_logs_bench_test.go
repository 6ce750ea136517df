package handlers

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchLine is a realistic access-log line (about 190 bytes).
const benchLine = `level=info msg="http request" method=GET path=/api/v1/products status=200 duration_ms=12.4 bytes=5321 remote=10.42.3.17 request_id=7f3a9c21 user_agent="Mozilla/5.0"`

// floodLogAPI is a log endpoint that sends total lines as fast as the
// reader takes them, then holds the stream open until the request ends.
func floodLogAPI(b *testing.B, total int) *fakeLogAPI {
	b.Helper()
	var chunk bytes.Buffer
	ts := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	for i := range 1000 {
		fmt.Fprintf(&chunk, "%s %s n=%d\n", ts.Add(time.Duration(i)*time.Microsecond).Format(time.RFC3339Nano), benchLine, i)
	}
	a := &fakeLogAPI{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.active.Add(1)
		defer a.active.Add(-1)
		w.WriteHeader(http.StatusOK)
		for sent := 0; sent < total; sent += 1000 {
			if _, err := w.Write(chunk.Bytes()); err != nil {
				return
			}
		}
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}))
	b.Cleanup(a.Close)
	return a
}

// countLines reads an SSE stream until want log lines (or a skipped count
// covering the rest) arrived; it returns lines delivered and skipped.
func countLines(r *bufio.Reader, want int, html bool) (lines, skipped int, err error) {
	for lines+skipped < want {
		l, err := r.ReadSlice('\n')
		if err != nil {
			return lines, skipped, err
		}
		switch {
		case !bytes.HasPrefix(l, []byte("data: ")):
		case html:
			lines += bytes.Count(l, []byte(`data-testid="log-line"`))
			if i := bytes.Index(l, []byte(`data-kind="skipped">`)); i >= 0 {
				var n int
				fmt.Sscanf(string(l[i+len(`data-kind="skipped">`):]), "%d", &n)
				skipped += n
			}
		case bytes.HasPrefix(l, []byte(`data: {"ts"`)):
			lines++
		case bytes.HasPrefix(l, []byte(`data: {"skipped"`)):
			var n int
			fmt.Sscanf(string(l), `data: {"skipped":%d`, &n)
			skipped += n
		}
	}
	return lines, skipped, nil
}

// BenchmarkLogStream measures lines per second through the whole follow
// path to one loopback client: an apiserver log endpoint, client-go
// GetLogs, kubeview's consume, the bounded queue, the SSE framing (JSON
// for the API, escaped HTML rows for the viewer) and a real TCP client.
func BenchmarkLogStream(b *testing.B) {
	for _, tt := range []struct {
		name, target string
		html         bool
	}{
		{"json", "/v1/deploy/web/logs?follow=1&tail=1", false},
		{"html", "/clusters/in-cluster/apps/apps/web/logs/stream?tail=1", true},
	} {
		b.Run(tt.name, func(b *testing.B) {
			total := max(b.N, 1000)
			api := floodLogAPI(b, total)
			ts, _ := realLogsServer(b, api, LogStreamLimits{})
			srv := httptest.NewServer(ts.handler)
			defer srv.Close()
			b.ResetTimer()
			start := time.Now()
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+tt.target, nil)
			req.Header.Set(testUserHeader, "admin")
			resp, err := srv.Client().Do(req)
			if err != nil {
				b.Fatal(err)
			}
			lines, skipped, err := countLines(bufio.NewReaderSize(resp.Body, 64<<10), total, tt.html)
			elapsed := time.Since(start)
			b.StopTimer()
			cancel()
			resp.Body.Close()
			if err != nil {
				b.Fatalf("after %d lines: %v", lines, err)
			}
			b.ReportMetric(float64(lines)/elapsed.Seconds(), "lines/s")
			b.ReportMetric(float64(skipped), "skipped")
		})
	}
}

// BenchmarkLogFollowers50 measures the memory of 50 concurrent follow
// streams (25 JSON, 25 viewer), each fed 200 lines/s for 3 seconds: the
// heap in use beyond the idle server, after a GC. The figure includes the
// 50 test clients and the fake apiserver in the same process, so the
// server's own share is smaller. Run with -benchtime=1x.
func BenchmarkLogFollowers50(b *testing.B) {
	api := newFakeLogAPI(b, 25*time.Millisecond)
	api.perTick = 5 // 200 lines/s per stream
	// One test user opens all 50: lift the per-user cap (10 by default).
	ts, _ := realLogsServer(b, api, LogStreamLimits{PerUser: 50})
	srv := httptest.NewServer(ts.handler)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 100}}
	for b.Loop() {
		heapBefore, goBefore := heapInUse(), runtime.NumGoroutine()
		sentBefore := api.sent.Load()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var lines atomic.Int64
		for i := range 50 {
			target := "/v1/deploy/web/logs?follow=1&tail=500"
			if i%2 == 1 {
				target = "/clusters/in-cluster/apps/apps/web/logs/stream?tail=500"
			}
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+target, nil)
				req.Header.Set(testUserHeader, "admin")
				resp, err := client.Do(req)
				if err != nil {
					return
				}
				defer resp.Body.Close()
				br := bufio.NewReader(resp.Body)
				for {
					l, err := br.ReadSlice('\n')
					if err != nil {
						return
					}
					if bytes.HasPrefix(l, []byte("data: ")) {
						lines.Add(int64(max(1, strings.Count(string(l), `data-testid="log-line"`))))
					}
				}
			})
		}
		time.Sleep(3 * time.Second)
		heapDuring, goDuring := heapInUse(), runtime.NumGoroutine()
		sent := api.sent.Load() - sentBefore
		cancel()
		wg.Wait()
		if opened := api.opened.Load(); opened < 50 {
			b.Fatalf("%d upstream streams opened, want 50", opened)
		}
		b.ReportMetric(float64(heapDuring-heapBefore)/(1<<20), "MB-extra")
		b.ReportMetric(float64(goDuring-goBefore), "goroutines-extra")
		b.ReportMetric(float64(lines.Load())/3, "lines/s-total")
		b.ReportMetric(float64(sent)/3, "upstream-lines/s")
	}
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// BenchmarkLogFollowers50Stalled is the worst case: 50 clients that read
// nothing while their upstreams flood lines as fast as the server takes
// them. Each stream's queue is bounded (lines are dropped and counted), so
// the heap stays flat however long it lasts. Run with -benchtime=1x.
func BenchmarkLogFollowers50Stalled(b *testing.B) {
	api := floodLogAPI(b, 1<<40)
	ts, _ := realLogsServer(b, api, LogStreamLimits{PerUser: 50})
	srv := httptest.NewServer(ts.handler)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 100}}
	for b.Loop() {
		heapBefore := heapInUse()
		ctx, cancel := context.WithCancel(context.Background())
		var resps []*http.Response
		for i := range 50 {
			target := "/v1/deploy/web/logs?follow=1"
			if i%2 == 1 {
				target = "/clusters/in-cluster/apps/apps/web/logs/stream"
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+target, nil)
			req.Header.Set(testUserHeader, "admin")
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			resps = append(resps, resp) // never read
		}
		time.Sleep(time.Second)
		heap1 := heapInUse()
		time.Sleep(2 * time.Second)
		heap3 := heapInUse()
		cancel()
		for _, r := range resps {
			r.Body.Close()
		}
		b.ReportMetric(float64(heap1-heapBefore)/(1<<20), "MB-extra-1s")
		b.ReportMetric(float64(heap3-heapBefore)/(1<<20), "MB-extra-3s")
	}
}
