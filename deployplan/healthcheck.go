package deployplan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/boundedhttp"
)

// runHealthChecks sends each check a GET under its own deadline (timeout,
// within ctx: limits.healthCheckTimeout, DefaultHealthCheckTimeout by
// default) and reads at most 64 KiB of each answer; only a 2xx passes
// (healthCheckPasses). Plan and Apply call it. Redirects are not
// followed, by this client or a given one. A nil client is one whose dial,
// TLS handshake and headers are bounded by timeout and whose bodies are
// capped.
func runHealthChecks(ctx context.Context, checks []envconfig.HealthCheck, client *http.Client, timeout time.Duration) []HealthCheckResult {
	if client == nil {
		client = &http.Client{
			Timeout:   timeout,
			Transport: capAnswers(boundedhttp.Transport(timeout), "a health check"),
		}
	} else {
		c := *client
		client = &c
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	out := []HealthCheckResult{}
	for _, hc := range checks {
		out = append(out, runHealthCheck(ctx, hc, client, timeout))
	}
	return out
}

func runHealthCheck(ctx context.Context, hc envconfig.HealthCheck, client *http.Client, timeout time.Duration) HealthCheckResult {
	r := HealthCheckResult{Name: hc.Name, URL: hc.URL, Required: hc.Required}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, hc.URL, nil)
	if err == nil {
		var resp *http.Response
		resp, err = client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
			r.OK = healthCheckPasses(resp.StatusCode)
			r.Message = resp.Status
			if resp.StatusCode >= 300 && resp.StatusCode < 400 {
				r.Message += " (a redirect: only a 2xx answer of the configured URL passes, redirects are not followed; point the check at the URL that answers)"
			}
		}
	}
	switch {
	case err != nil && isTimeout(err) && ctx.Err() == nil:
		r.Message = fmt.Sprintf("no answer within %s (limits.healthCheckTimeout)", timeout)
	case err != nil:
		r.Message = shortErr(err)
	}
	return r
}

// healthCheckPasses is the rule of a health check: only a 2xx answer of
// the configured URL passes. A 3xx fails and is not followed, even to the
// same host: a service that redirects its health URL (to a login page, to
// another service) has not said it is healthy, and the page it points to
// answering 200 proves nothing about it.
func healthCheckPasses(status int) bool {
	return status >= 200 && status < 300
}

// isTimeout reports whether err is a deadline: the context's or the
// transport's.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// healthCheckBlockers turns failing required checks into blockers and
// failing optional ones into warnings.
func healthCheckBlockers(rs []HealthCheckResult) ([]Blocker, []string) {
	var bs []Blocker
	var ws []string
	for _, r := range rs {
		if r.OK {
			continue
		}
		if r.Required {
			bs = append(bs, Blocker{ID: "health-check:" + r.Name, Message: fmt.Sprintf("required health check %s (%s) failed: %s", r.Name, r.URL, r.Message),
				UnblockHint: "make the check pass, or mark it required: false in the environment config"})
		} else {
			ws = append(ws, fmt.Sprintf("optional health check %s failed: %s", r.Name, r.Message))
		}
	}
	return bs, ws
}

// maxResponseBytes caps the body read from a health check, which answers
// with a few kilobytes at most.
const maxResponseBytes = 1 << 20

// capAnswers is rt with every answer capped at maxResponseBytes (a
// health check's): a *TooLargeError naming what.
func capAnswers(rt http.RoundTripper, what string) http.RoundTripper {
	return boundedhttp.CapBodies(rt, maxResponseBytes, func() error {
		return &TooLargeError{What: "the answer of " + what, Limit: "limits.maxRepoBytes", Max: maxResponseBytes, Read: maxResponseBytes + 1, Unit: "bytes"}
	})
}
