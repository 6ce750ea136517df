package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// envPrefix names the environment variables that set serve's flags:
// --oidc-issuer is $DEPLOY_WEB_OIDC_ISSUER.
const envPrefix = "DEPLOY_WEB_"

// envName is the environment variable of a flag.
func envName(prefix, flagName string) string {
	return prefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// flagsFromEnv sets each flag of fs from its environment variable, if set,
// before the command line is parsed (so a flag given on the command line
// wins), and names the variable in the flag's help. A value the flag
// refuses is an error naming the variable.
func flagsFromEnv(fs *flag.FlagSet, prefix string, lookup func(string) (string, bool)) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := envName(prefix, f.Name)
		f.Usage += " [$" + name + "]"
		v, ok := lookup(name)
		if !ok || err != nil {
			return
		}
		if serr := fs.Set(f.Name, v); serr != nil {
			err = fmt.Errorf("$%s: %w", name, serr)
		}
	})
	return err
}

// checkNamespaces fails start-up unless every platform namespace exists, so
// a typo in --namespaces is a loud error, not an empty dashboard.
func checkNamespaces(ctx context.Context, nsc typedcorev1.NamespaceInterface, names []string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	for _, n := range names {
		_, err := nsc.Get(ctx, n, metav1.GetOptions{})
		switch {
		case err == nil:
		case apierrors.IsNotFound(err):
			return fmt.Errorf("--namespaces: namespace %q does not exist", n)
		case apierrors.IsForbidden(err):
			return fmt.Errorf("--namespaces: may not read namespace %q to check it exists (grant get on it; deploy/ does with the deploy-web-namespaces ClusterRole): %w", n, err)
		default:
			return fmt.Errorf("--namespaces: check namespace %q: %w", n, err)
		}
	}
	return nil
}

// serveMetrics serves h as /metrics on its own listener at addr, apart
// from the site (whose every route but login and probes needs a
// superadmin). A failure to listen is returned; a later serving error goes
// to errc.
func serveMetrics(addr string, h http.Handler, log *slog.Logger, errc chan<- error) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	ms := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go func() {
		if err := ms.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("metrics: %w", err)
		}
	}()
	log.Info("serving metrics", "addr", ln.Addr().String(), "path", "/metrics")
	return ms, nil
}

// shutdown stops hs gracefully: the listener closes at once (no new
// connections), idle connections close, and requests in flight (a rollback
// POST) get up to grace to finish. Live log streams end by themselves, with a
// "reconnecting" event, because their ShutdownCtx is already done. Whatever
// still runs after grace is cut off, and that is an error.
func shutdown(hs *http.Server, grace time.Duration, log *slog.Logger) error {
	if grace <= 0 {
		grace = defaultShutdownGrace
	}
	log.Info("shutting down", "grace", grace.String())
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := hs.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		_ = hs.Close()
		return fmt.Errorf("shutdown: requests still running after the %s grace period were cut off", grace)
	}
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("shut down", "took_ms", time.Since(start).Milliseconds())
	return nil
}
