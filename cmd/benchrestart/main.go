// Command benchrestart measures what a rolling restart of deploy-web
// costs: it starts the demo environment (the real local control plane,
// the reference operator, the IdP, the manifest repository with its
// auto-synced environments, the notifications inbox), runs --replicas
// `deploy-web serve` processes behind a round-robin proxy on loopback,
// signs in through the IdP, and sends steady traffic (pages, JSON reads,
// console plans and applies of staging) while commits are pushed for
// auto-sync and fields are changed by hand for drift and self-heal. It
// restarts the replicas one at a time, as a Deployment's rolling update
// does (out of the proxy's rotation, the preStop pause, SIGTERM, the exit,
// a new process, ready, back in), and reports the requests that failed,
// the applies acknowledged without an audit record, the pushed commits
// auto-sync never recorded, and the notifications delivered twice (the
// same delivery id at the inbox).
//
//	go run ./cmd/benchrestart --rounds 1
//
// Everything runs on loopback; every request has a deadline and a byte
// cap; the run is bounded by --timeout and the traffic by --workers and
// --pause.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/hanzoai/deploy-web/internal/benchrun"
)

type config struct {
	binDir, deployWeb, out, dir string
	replicas, rounds, workers   int
	pause, grace, preStop       time.Duration
	timeout                     time.Duration
}

func main() { benchrun.Main("benchrestart", run) }

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("benchrestart", flag.ContinueOnError)
	var cfg config
	fs.StringVar(&cfg.binDir, "bin-dir", "", "folder of the built cluster and IdP binaries (default: the repository's bin/)")
	fs.StringVar(&cfg.deployWeb, "deploy-web", "bin/deploy-web", "the deploy-web binary to run")
	fs.StringVar(&cfg.out, "out", "BENCHMARKS.md", "file whose rolling-restart section is replaced with the results (empty: print only)")
	fs.StringVar(&cfg.dir, "dir", "", "working folder (default: a temporary one, removed at the end)")
	fs.IntVar(&cfg.replicas, "replicas", 3, "serve processes behind the proxy")
	fs.IntVar(&cfg.rounds, "rounds", 1, "rolling restarts: each restarts every replica once, one at a time")
	fs.IntVar(&cfg.workers, "workers", 4, "concurrent readers (pages and JSON)")
	fs.DurationVar(&cfg.pause, "pause", 50*time.Millisecond, "pause of each reader between two requests")
	fs.DurationVar(&cfg.grace, "shutdown-grace", 60*time.Second, "the replicas' --shutdown-grace")
	fs.DurationVar(&cfg.preStop, "prestop", 2*time.Second, "time between leaving the proxy's rotation and SIGTERM (the Deployment's preStop sleep)")
	fs.DurationVar(&cfg.timeout, "timeout", 20*time.Minute, "bound of the whole run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case cfg.replicas < 2 || cfg.replicas > 5:
		return fmt.Errorf("--replicas %d: want 2 to 5", cfg.replicas)
	case cfg.rounds < 1 || cfg.rounds > 5:
		return fmt.Errorf("--rounds %d: want 1 to 5", cfg.rounds)
	case cfg.workers < 1 || cfg.workers > 16:
		return fmt.Errorf("--workers %d: want 1 to 16", cfg.workers)
	case cfg.pause < 10*time.Millisecond:
		return fmt.Errorf("--pause %s: want at least 10ms", cfg.pause)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	res, err := bench(ctx, cfg, stdout)
	if err != nil {
		return err
	}
	section := res.markdown(cfg)
	fmt.Fprintln(stdout, section)
	if cfg.out == "" {
		return nil
	}
	return benchSection.Replace(cfg.out, section)
}
