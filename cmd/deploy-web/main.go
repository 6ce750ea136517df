// Command deploy-web is a GitOps console and guarded deploy engine for a
// Kubernetes fleet of App custom resources.
//
// Usage:
//
//	deploy-web serve [flags]   run the dashboard against a cluster
//	deploy-web demo  [flags]   run everything locally: control plane, operator, seeded fleet, OIDC provider, dashboard
//	deploy-web source-plan --env E --check     offline check of images, tags and env mirrors against the catalog
//	deploy-web apply --env E --dry-run         plan a deploy: blockers, unblock hints, rollback hints
//	deploy-web apply --env E --apply ...       apply inside the environment's boundary, with confirmation
//	deploy-web restore --env E --capture DIR ...  re-apply a pre-apply capture, with the guards of an apply
//	deploy-web validate-report [PATH]          check a report against the contract
//	deploy-web diff --env E --ref REF          what a branch, tag, commit or pull/N would change, for a pull request
//
// Run `deploy-web <command> -h` for the flags of a command.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serveCmd(ctx, args[1:], stdout, stderr)
	case "demo":
		err = demoCmd(ctx, args[1:], stdout, stderr)
	case "source-plan":
		err = sourcePlanCmd(ctx, args[1:], stdout, stderr)
	case "apply":
		err = applyCmd(ctx, args[1:], stdout, stderr)
	case "restore":
		err = restoreCmd(ctx, args[1:], stdout, stderr)
	case "validate-report":
		err = validateReportCmd(ctx, args[1:], stdout, stderr)
	case "diff":
		err = diffCmd(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "deploy-web: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	var ee *exitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.As(err, &ee):
		if ee.err != nil {
			fmt.Fprintf(stderr, "deploy-web %s: %v\n", args[0], ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "deploy-web %s: %v\n", args[0], err)
	return 1
}

// errUsage marks a command-line mistake already reported by the flag set.
var errUsage = errors.New("usage")

func usage(w io.Writer) {
	fmt.Fprint(w, `deploy-web: a GitOps console and guarded deploy engine for a fleet of App resources.

Commands:
  serve   run the dashboard against a cluster (in-cluster or --kubeconfig)
  demo    run everything locally: control plane, operator, seeded fleet,
          OIDC provider with demo logins, and the dashboard
  source-plan --env E [--check]
          offline: every workload image is in the artifact catalog, tagged
          with its commit, env mirrors agree (proves nothing about the
          registry or the cluster)
  apply --env E [--dry-run] [--expect-blocked] [--write-report [PATH]]
          plan a deploy (the default, writes nothing to the cluster)
  apply --env E --apply --confirm-env=E --confirmed-non-production
          apply inside the environment's namespace, under a lock
          (--prune also deletes the plan's orphans; --prune-many past 20 or half)
          (refused in a deploy freeze of the environment; --break-glass REASON
          writes through it once, recorded)
  restore --env E --capture DIR --confirm-env=E --confirmed-non-production
          re-apply a pre-apply capture with the guards of an apply
          (--dry-run plans it)
  validate-report [PATH]
          check a report against the contract

  diff --env E --ref REF [--format markdown|json]
          what rendering a branch, tag, commit or pull/N would change
          against live (Markdown for a pull request); exits 0 when nothing
          changes, 1 when something does, 2 on usage, config or error

Exit codes of source-plan, apply and validate-report: 0 ready or applied,
3 blocked, 2 refused or usage, 1 error (or an invalid report).

Run 'deploy-web <command> -h' for a command's flags.
`)
}

func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
