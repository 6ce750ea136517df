package main

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/internal/benchrun"
)

// benchSection is the rolling-restart section of BENCHMARKS.md.
var benchSection = benchrun.Section{Start: "<!-- benchrestart:start -->", End: "<!-- benchrestart:end -->"}

// missing is want - got, at least 0.
func missing(want, got int64) int64 { return max(want-got, 0) }

// markdown is the section of BENCHMARKS.md with r's figures.
func (r *result) markdown(cfg config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n### Rolling restart under traffic\n\n", benchSection.Start)
	fmt.Fprintf(&b, "Measured by `make bench-restart` (`go run ./cmd/benchrestart --rounds %d`) on %s, %d cores: the demo environment "+
		"(real local control plane, reference operator, Hydra), %d `deploy-web serve` processes behind a round-robin proxy on loopback, "+
		"signed in through the IdP; %d readers (fleet page, JSON list, environment page, environments JSON; %s apart each) and the console "+
		"planning and applying staging every 5 s, while each restart pushes a commit (auto-sync applies it to dev and staging) and changes an "+
		"App by hand (drift, then self-heal). Each replica in turn leaves the proxy's rotation, waits %s (preStop), gets SIGTERM "+
		"(`--shutdown-grace %s`), exits, starts again and rejoins once `/readyz` answers.\n\n",
		cfg.rounds, r.when.Format("2006-01-02"), runtime.NumCPU(), cfg.replicas, cfg.workers, cfg.pause, cfg.preStop, cfg.grace)
	var maxStop, maxReady time.Duration
	exits := 0
	for _, rs := range r.restarts {
		maxStop, maxReady = max(maxStop, rs.stop), max(maxReady, rs.ready)
		if rs.exitErr == "" {
			exits++
		}
	}
	b.WriteString("| What | Figure |\n|---|---|\n")
	fmt.Fprintf(&b, "| restarts (exit 0) | %d (%d) |\n", len(r.restarts), exits)
	fmt.Fprintf(&b, "| slowest exit after SIGTERM / slowest start to ready | %s / %s |\n", maxStop.Round(time.Millisecond), maxReady.Round(time.Millisecond))
	fmt.Fprintf(&b, "| requests (pages, JSON, plans, applies) | %d |\n", r.requests)
	fmt.Fprintf(&b, "| **requests failed** (transport error or 5xx) | **%d** |\n", r.failed)
	fmt.Fprintf(&b, "| console applies acknowledged / refused (recorded refusals) | %d / %d |\n", r.applies, r.appliesRefused)
	fmt.Fprintf(&b, "| **apply records missing** (acknowledged + refused − person's apply records of staging) | **%d** |\n", missing(r.applies+r.appliesRefused, int64(r.applyRecords)))
	fmt.Fprintf(&b, "| commits pushed / **auto-sync applies recorded missing** | %d / **%d** |\n", r.pushed, r.pushed-r.pushedRecorded)
	fmt.Fprintf(&b, "| notifications received / **duplicated** (same delivery id) | %d / **%d** |\n", r.notifications, r.notifications-r.uniqueNotes)
	if len(r.failures) > 0 {
		b.WriteString("\nThe first failed requests:\n\n")
		for _, f := range r.failures {
			fmt.Fprintf(&b, "- `%s`\n", f)
		}
	}
	b.WriteString("\n" + benchSection.End + "\n")
	return b.String()
}
