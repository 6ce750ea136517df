package demo

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/hanzoai/deploy-web/internal/prombin"
)

// The demo's Prometheus: Debian's prometheus package's binary, started by
// the demo itself on loopback with a config it writes in its folder,
// scraping the demo's traffic source (Traffic) every ScrapeInterval. The
// environments' metrics: name it, and the promotion checks of staging run
// against it.
const (
	// PrometheusBin is the binary `deploy-web demo` runs.
	PrometheusBin = prombin.Bin
	// ScrapeInterval is how often Prometheus scrapes the traffic source.
	ScrapeInterval = 2 * time.Second
	// prometheusReadyTimeout bounds the wait for Prometheus to answer
	// ready.
	prometheusReadyTimeout = time.Minute
	// prometheusDir is Prometheus's folder in the demo folder: its
	// config, data and log.
	prometheusDir = "prometheus"
)

// MissingPrometheusError is a demo started without the Prometheus binary
// it runs.
type MissingPrometheusError struct{ Bin string }

func (e *MissingPrometheusError) Error() string {
	return fmt.Sprintf("demo: %s is missing: install Debian's %s package (apt-get install %s; .ci/run installs it): the demo's promotion checks run against it",
		e.Bin, prombin.Package, prombin.Package)
}

// checkPrometheusBin says whether bin is there to run.
func checkPrometheusBin(bin string) error {
	if st, err := os.Stat(bin); err != nil || st.IsDir() {
		return &MissingPrometheusError{Bin: bin}
	}
	return nil
}

// Prometheus is the demo's running Prometheus and the traffic source it
// scrapes.
type Prometheus struct {
	// URL is its HTTP API's base (http://127.0.0.1:port): the
	// environments' metrics.url.
	URL string
	// TrafficURL is the traffic source's /metrics.
	TrafficURL string

	server  *prombin.Server
	traffic *http.Server
}

// startPrometheus serves traffic on a loopback port and starts bin
// (Prometheus, prombin.Start) on another with its config, data and log in
// dir, scraping it every ScrapeInterval. It does not wait for Prometheus
// to be ready (WaitReady). On error nothing started is left running.
func startPrometheus(bin, dir string, traffic http.Handler) (_ *Prometheus, err error) {
	if err := checkPrometheusBin(bin); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo: traffic source: %w", err)
	}
	pr := &Prometheus{TrafficURL: "http://" + ln.Addr().String() + "/metrics",
		traffic: &http.Server{Handler: traffic, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}}
	go func() { _ = pr.traffic.Serve(ln) }()
	pr.server, err = prombin.Start(prombin.Options{Bin: bin, Dir: dir, Target: ln.Addr().String(), Job: "demo-traffic", ScrapeInterval: ScrapeInterval})
	if err != nil {
		pr.Stop()
		return nil, fmt.Errorf("demo: %w", err)
	}
	pr.URL = pr.server.URL
	return pr, nil
}

// WaitReady waits (prometheusReadyTimeout at most) until Prometheus
// answers ready; its exit fails the wait with its log's tail.
func (pr *Prometheus) WaitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, prometheusReadyTimeout)
	defer cancel()
	if err := pr.server.WaitReady(ctx); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

// Stop ends Prometheus and the traffic source. It is safe to call more
// than once.
func (pr *Prometheus) Stop() {
	if pr.server != nil {
		pr.server.Stop()
	}
	if pr.traffic != nil {
		_ = pr.traffic.Close() // a second Close has nothing left to close
	}
}
