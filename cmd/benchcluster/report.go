package main

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/hanzoai/deploy-web/internal/benchrun"
)

// section is the section benchcluster owns in BENCHMARKS.md.
var section = benchrun.Section{Start: "<!-- bench-cluster:start -->", End: "<!-- bench-cluster:end -->",
	Heading: "## Real cluster (make bench-cluster)"}

func ms(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

// renderResults returns the Markdown section with every fleet size; runs
// is the number of timed requests per route.
func renderResults(res []result, runs int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", section.Start)
	fmt.Fprintf(&b, "Measured by `make bench-cluster` (cmd/benchcluster) on %s, %d cores, %s, against the real local control plane (devcluster) with the reference operator; the dashboard ran as its own `deploy-web serve` process, signed in through the IdP (a session cookie). Times are medians and 90th percentiles of %d requests after one warm-up, to the last byte, over loopback.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), runtime.Version(), runs)
	fmt.Fprintf(&b, "| measure |")
	for _, r := range res {
		fmt.Fprintf(&b, " %d apps (+%d demo) |", r.apps, r.total-r.apps)
	}
	fmt.Fprintf(&b, "\n| --- |%s\n", strings.Repeat(" ---: |", len(res)))
	row := func(name string, cell func(r result) string) {
		fmt.Fprintf(&b, "| %s |", name)
		for _, r := range res {
			fmt.Fprintf(&b, " %s |", cell(r))
		}
		b.WriteString("\n")
	}
	row("machine load (1/5/15 min) before, after", func(r result) string { return r.loadBefore + "; " + r.loadAfter })
	row("fleet seeded: healthy / progressing / degraded", func(r result) string {
		if r.attached {
			return "not seeded by this run: " + r.fleetNote
		}
		s := fmt.Sprintf("%d / %d / %d", r.seed.Healthy, r.seed.Progressing, r.seed.Degraded)
		if n := len(r.seed.Unconverged); n > 0 {
			// The run's output lists each with its state.
			keys := make([]string, 0, 3)
			for _, u := range r.seed.Unconverged[:min(3, n)] {
				keys = append(keys, u.App)
			}
			more := ""
			if n > 3 {
				more = ", ..."
			}
			s += fmt.Sprintf("; **%d did not converge** (%s%s; each with its state in the run's output)", n, strings.Join(keys, ", "), more)
		}
		return s
	})
	row("seed: created, converged, second releases done", func(r result) string {
		if r.attached {
			return "-"
		}
		return fmt.Sprintf("%s, %s, %s", r.seed.Created.Round(time.Second), r.seed.Converged.Round(time.Second), r.seed.HistoryDone.Round(time.Second))
	})
	row("dashboard start to /readyz (caches synced)", func(r result) string { return ms(r.ready) })
	row("dashboard CPU while idle (informer events), per second", func(r result) string { return ms(r.idleCPU) })
	if len(res) > 0 {
		for i := range res[0].routes {
			name := res[0].routes[i].name
			row(name+" (median / p90, size; dashboard CPU per request)", func(r result) string {
				if i >= len(r.routes) {
					return "-"
				}
				rr := r.routes[i]
				if rr.cpu > 0 {
					return fmt.Sprintf("%s / %s, %s; CPU %s", ms(rr.median), ms(rr.p90), size(rr.bytes), ms(rr.cpu))
				}
				return fmt.Sprintf("%s / %s, %s", ms(rr.median), ms(rr.p90), size(rr.bytes))
			})
		}
	}
	row("RSS after the requests (anonymous + mapped files, i.e. the binary)", func(r result) string {
		if r.rssAnonMB == 0 && r.rssFileMB == 0 {
			return fmt.Sprintf("%.0f MB", r.rssMB)
		}
		return fmt.Sprintf("%.0f MB (%.0f + %.0f)", r.rssMB, r.rssAnonMB, r.rssFileMB)
	})
	row("Go heap in use (go_memstats_heap_inuse_bytes)", func(r result) string { return fmt.Sprintf("%.0f MB", r.heapMB) })
	row("Go GC goal (go_memstats_next_gc_bytes: about 2x the live heap)", func(r result) string {
		if r.nextGCMB == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f MB", r.nextGCMB)
	})
	row("A merge patch (as `kubectl patch --type merge`) of an App's image to the new version on the JSON list (each of 5)", func(r result) string {
		var s []string
		for _, d := range r.patch {
			s = append(s, fmt.Sprintf("%.0f", float64(d.Milliseconds())))
		}
		return strings.Join(s, ", ") + " ms"
	})
	row("cold Chromium: navigation to the first row visible", func(r result) string {
		if r.firstRowNote != "" {
			return r.firstRowNote
		}
		return ms(r.firstRow)
	})
	notAtRest := func(r result, v string) string {
		if r.attached {
			return "- (not measured: attached)"
		}
		return v
	}
	row("apiserver at rest: requests/s (all but watches)", func(r result) string { return notAtRest(r, fmt.Sprintf("%.1f", r.rest.all)) })
	row("apiserver at rest: writes/s, all clients", func(r result) string { return notAtRest(r, fmt.Sprintf("%.2f", r.rest.writes)) })
	row("apiserver at rest: writes/s to Apps and their children (what the operator writes)", func(r result) string {
		return notAtRest(r, fmt.Sprintf("%.2f", r.rest.operatorWrite))
	})
	row("apiserver at rest: largest write counts in the window", func(r result) string {
		return notAtRest(r, fmt.Sprintf("%s over %s", orNone(r.rest.topWrites), r.rest.window))
	})
	timelineRow := func(name string, cell func(r result, tl *timelineResult) string) {
		row(name, func(r result) string {
			switch {
			case r.timeline == nil:
				return "- (not measured)"
			case r.timeline.err != "":
				return "- (" + r.timeline.err + ")"
			}
			return cell(r, r.timeline)
		})
	}
	timelineRow("timeline shard writes/s at rest (budget 0)", func(r result, tl *timelineResult) string {
		note := "after the start's entries were written"
		if !tl.drained {
			note = "the start's entries still being written, or the fleet still changing (crash loops restart)"
		}
		return fmt.Sprintf("%.2f (%d in %s; %s)", perSecond(tl.restWrites, tl.window), tl.restWrites, tl.window, note)
	})
	timelineRow("timeline shard writes/s under churn (budget at most 1)", func(r result, tl *timelineResult) string {
		return fmt.Sprintf("%.2f (%d in %s, while %d App images were patched)", perSecond(tl.churnWrites, tl.window), tl.churnWrites, tl.window, tl.patches)
	})
	timelineRow("timeline stored after the run, per 1,000 Apps (this run's entries; 30 days: see Timeline below)", func(r result, tl *timelineResult) string {
		return fmt.Sprintf("%s in %d shards; %s per 1,000 Apps", size(tl.storedBytes), tl.shards, size(tl.storedBytes*1000/max(r.total, 1)))
	})
	fmt.Fprintf(&b, "%s\n", section.End)
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
