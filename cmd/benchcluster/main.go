// Command benchcluster measures deploy-web against the real local control
// plane with a large fleet: it starts the demo environment (cluster,
// reference operator, IdP), seeds 2,000 and then 10,000 extra Apps
// (demo.SeedFleet), and for each fleet size starts `deploy-web serve` as a
// process of its own, signs in through the IdP like a browser, and measures
// what a user and an operator of the fleet see: time to ready, the JSON
// list, HTML pages, the tree, a resource with its diff, a logs read, RSS and
// Go heap, the time from a merge patch of an App (as `kubectl patch`) to the change on the list, the
// apiserver's requests per second at rest, and (with Chromium) the first row
// in a cold browser. It writes the table into BENCHMARKS.md.
//
//	go run ./cmd/benchcluster --apps 2000,10000
//
// Everything runs on loopback, every request has a deadline, and the number
// of requests is bounded by --runs.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/internal/benchrun"
)

type config struct {
	apps           []int
	binDir         string
	deployWeb      string
	out            string
	runs           int
	chromium       string
	restWindow     time.Duration
	operatorResync time.Duration
	dir            string
}

func main() { benchrun.Main("benchcluster", run) }

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("benchcluster", flag.ContinueOnError)
	apps := fs.String("apps", "2000,10000", "comma-separated fleet sizes, measured in turn (each adds to the last)")
	var cfg config
	fs.StringVar(&cfg.binDir, "bin-dir", "", "folder of the built cluster and IdP binaries (default: the repository's bin/)")
	fs.StringVar(&cfg.deployWeb, "deploy-web", "bin/deploy-web", "the deploy-web binary to measure")
	fs.StringVar(&cfg.out, "out", "BENCHMARKS.md", "file whose real-cluster section is replaced with the results (empty: print only)")
	fs.IntVar(&cfg.runs, "runs", 30, "requests per measured route")
	fs.StringVar(&cfg.chromium, "chromium", "/usr/bin/chromium", "Chromium for the cold-browser first row (skipped when missing)")
	fs.DurationVar(&cfg.restWindow, "rest-window", 90*time.Second, "how long apiserver requests are counted at rest (covers a resync of the operator)")
	fs.DurationVar(&cfg.operatorResync, "operator-resync", 60*time.Second, "the reference operator's resync period during the run")
	fs.StringVar(&cfg.dir, "dir", "", "working folder (default: a temporary folder, removed at the end)")
	var a attachConfig
	fs.StringVar(&a.kubeconfig, "attach-kubeconfig", "", "measure a running environment instead of starting one: its kubeconfig (nothing is seeded; --apps is ignored; the --attach-* flags are then required)")
	fs.StringVar(&a.namespaces, "attach-namespaces", "storefront,payments,staging", "platform namespaces, comma-separated (attached)")
	fs.StringVar(&a.issuer, "attach-issuer", "", "the IdP's issuer URL (attached)")
	fs.StringVar(&a.clientID, "attach-client-id", "deploy-web", "the OIDC client id (attached)")
	fs.StringVar(&a.secretFile, "attach-secret-file", "", "file with the OIDC client secret (attached)")
	fs.StringVar(&a.keyFile, "attach-session-keys", "", "file with the session keys (attached)")
	fs.StringVar(&a.base, "attach-base", "", "http://127.0.0.1:PORT the dashboard listens on: the callback registered with the IdP (attached)")
	fs.StringVar(&a.metricsAddr, "attach-metrics-addr", "", "127.0.0.1:PORT for the dashboard's metrics (attached)")
	fs.StringVar(&a.user, "attach-user", "admin", "an admin user of the IdP (attached)")
	fs.StringVar(&a.password, "attach-password", "admin", "its password (attached)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, s := range strings.Split(*apps, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 20000 {
			return fmt.Errorf("--apps: %q is not a fleet size between 1 and 20000", s)
		}
		if len(cfg.apps) > 0 && n <= cfg.apps[len(cfg.apps)-1] {
			return fmt.Errorf("--apps: sizes must grow (%d after %d)", n, cfg.apps[len(cfg.apps)-1])
		}
		cfg.apps = append(cfg.apps, n)
	}
	if cfg.runs < 3 || cfg.runs > 1000 {
		return fmt.Errorf("--runs: %d is not between 3 and 1000", cfg.runs)
	}
	var err error
	if cfg.deployWeb, err = filepath.Abs(cfg.deployWeb); err != nil {
		return err
	}
	if _, err := os.Stat(cfg.deployWeb); err != nil {
		return fmt.Errorf("%s: build it first (make build): %w", cfg.deployWeb, err)
	}
	report := func(res []result) error {
		table := renderResults(res, cfg.runs)
		fmt.Fprintln(stdout, table)
		if cfg.out == "" {
			return nil
		}
		if err := section.Replace(cfg.out, table); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "benchcluster: wrote the table into %s\n", cfg.out)
		return nil
	}
	if a.kubeconfig != "" {
		if err := a.check(); err != nil {
			return err
		}
		r, err := benchAttached(ctx, cfg, a, stdout)
		if err != nil {
			return err
		}
		return report([]result{r})
	}
	_, err = bench(ctx, cfg, stdout, report)
	return err
}
