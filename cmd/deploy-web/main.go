// Command deploy-web is a GitOps console and guarded deploy engine for a
// Kubernetes fleet of App custom resources.
//
// Usage:
//
//	deploy-web serve [flags]   run the dashboard against a cluster
//	deploy-web demo  [flags]   run everything locally: control plane, operator, seeded fleet, OIDC provider, dashboard
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
	case "-h", "--help", "help":
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "deploy-web: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
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
