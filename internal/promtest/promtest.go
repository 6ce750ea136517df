// Package promtest runs the real Prometheus (Debian's prometheus
// package, /usr/bin/prometheus) for tests, scraping a /metrics endpoint
// the test serves with gauges it sets.
package promtest

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/internal/prombin"
)

// Bin is Debian's prometheus package's binary (.ci/run installs it).
const Bin = prombin.Bin

// RequireEnv, set, makes a missing Bin a failure rather than a skip.
const RequireEnv = prombin.RequireEnv

// Exporter is the /metrics endpoint Prometheus scrapes: sample lines the
// test sets (`name{label="v"} 0.5`), all of gauges.
type Exporter struct {
	mu    sync.Mutex
	lines []string
}

// Set replaces the samples served.
func (x *Exporter) Set(lines ...string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.lines = lines
}

func (x *Exporter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x.mu.Lock()
	defer x.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	io.WriteString(w, strings.Join(x.lines, "\n")+"\n")
}

// Require skips the test, saying why, when Bin is missing, or fails it
// when RequireEnv is set (CI).
func Require(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(Bin); err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("%s is missing and %s is set: install Debian's %s package: %v", Bin, RequireEnv, prombin.Package, err)
		}
		t.Skipf("%s is missing (install Debian's %s package, as .ci/run does): %v", Bin, prombin.Package, err)
	}
}

// Prometheus is a running Prometheus.
type Prometheus struct {
	// URL is its API's base (http://127.0.0.1:port).
	URL string
}

// Start serves x and runs Prometheus (prombin.Start) on a loopback port
// scraping it every second, with its folder in a t.TempDir(); it returns
// once an instant query of ready answers a sample (waited for with a
// generous deadline). Without Bin the test is skipped, saying so, unless
// RequireEnv is set (CI): then it fails.
func Start(t *testing.T, x *Exporter, ready string) *Prometheus {
	t.Helper()
	Require(t)
	target := httptest.NewServer(x)
	t.Cleanup(target.Close)
	s, err := prombin.Start(prombin.Options{Dir: t.TempDir(), Target: strings.TrimPrefix(target.URL, "http://"), Job: "test", ScrapeInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("prometheus output:\n%s", s.LogTail())
		}
	})
	p := &Prometheus{URL: s.URL}
	p.WaitFor(t, ready, func(string) bool { return true })
	return p
}

// WaitFor waits (90 s at most) until an instant query q answers a sample
// whose value ok accepts.
func (p *Prometheus) WaitFor(t *testing.T, q string, ok func(value string) bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var last string
	client := &http.Client{Timeout: 5 * time.Second}
	for {
		resp, err := client.Get(p.URL + "/api/v1/query?query=" + url.QueryEscape(q))
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			last = string(b)
			if i := strings.Index(last, `"value":[`); i >= 0 {
				v := last[i+len(`"value":[`):]
				if j := strings.Index(v, `,"`); j >= 0 {
					v = v[j+2:]
					if k := strings.Index(v, `"`); k >= 0 && ok(v[:k]) {
						return
					}
				}
			}
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus at %s: %s answered no accepted sample within 90s (last: %s)", p.URL, q, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// FreeAddr is a loopback address nothing listens on (just now).
func FreeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
