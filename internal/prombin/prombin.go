// Package prombin runs the Prometheus deploy-web's demo and tests run:
// Debian's prometheus package's binary (.ci/run installs it; the README's
// setup names it), on a loopback port, scraping one target, with its
// config, data and log in a folder of its own. The one way Prometheus is
// started (the demo, internal/promtest).
package prombin

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hanzoai/deploy-web/internal/proc"
)

// Bin is the binary of Debian's prometheus package.
const Bin = "/usr/bin/prometheus"

// Package is the Debian package that installs Bin.
const Package = "prometheus"

// RequireEnv, set (CI sets it), makes a test that needs Bin fail when it
// is missing instead of skipping.
const RequireEnv = "DEPLOY_WEB_REQUIRE_PROMETHEUS"

// Options say what to run.
type Options struct {
	// Bin is the binary (Bin when "").
	Bin string
	// Dir holds the config (prometheus.yml), the data (data/) and the
	// log (prometheus.log); it is created.
	Dir string
	// Target is the host:port scraped (its /metrics), every
	// ScrapeInterval, as job Job.
	Target         string
	Job            string
	ScrapeInterval time.Duration
}

// Server is a started Prometheus.
type Server struct {
	// URL is its HTTP API's base (http://127.0.0.1:port).
	URL string
	p   *proc.Process
}

// Start starts Prometheus on a free loopback port as o says, without
// waiting for it (WaitReady).
func Start(o Options) (*Server, error) {
	if o.Bin == "" {
		o.Bin = Bin
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("prombin: %w", err)
	}
	port, err := proc.FreePort()
	if err != nil {
		return nil, fmt.Errorf("prombin: %w", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cfg := filepath.Join(o.Dir, "prometheus.yml")
	iv := o.ScrapeInterval.String()
	conf := "# Written by deploy-web: one job scraping " + o.Target + ".\n" +
		"global: {scrape_interval: " + iv + ", scrape_timeout: " + iv + ", evaluation_interval: 15s}\n" +
		"scrape_configs:\n  - job_name: " + strconv.Quote(o.Job) + "\n    static_configs: [{targets: [" + strconv.Quote(o.Target) + "]}]\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		return nil, fmt.Errorf("prombin: %w", err)
	}
	p, err := proc.Start(proc.Spec{Name: "prometheus", Path: o.Bin, Dir: o.Dir, Args: []string{
		"--config.file=" + cfg, "--storage.tsdb.path=" + filepath.Join(o.Dir, "data"),
		"--storage.tsdb.retention.time=1d", "--web.listen-address=" + addr, "--log.level=warn",
	}})
	if err != nil {
		return nil, fmt.Errorf("prombin: %w", err)
	}
	return &Server{URL: "http://" + addr, p: p}, nil
}

// WaitReady waits until Prometheus answers ready, ctx ends, or it exits
// (the error then has its log's tail).
func (s *Server) WaitReady(ctx context.Context) error {
	if err := proc.WaitHTTP(ctx, nil, s.URL+"/-/ready", s.p, nil); err != nil {
		return fmt.Errorf("prombin: prometheus at %s: %w", s.URL, err)
	}
	return nil
}

// Stop ends Prometheus (SIGTERM, then SIGKILL after 5 s). It is safe to
// call more than once.
func (s *Server) Stop() { s.p.Stop(5 * time.Second) }

// Done is closed once Prometheus has exited.
func (s *Server) Done() <-chan struct{} { return s.p.Done() }

// LogTail is the end of Prometheus's log.
func (s *Server) LogTail() string { return s.p.Tail(4000) }
