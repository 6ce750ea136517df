package deployplan

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// RunHealthChecks sends each configured check a GET; 2xx and 3xx pass.
func RunHealthChecks(ctx context.Context, checks []HealthCheck, client *http.Client) []HealthCheckResult {
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	out := []HealthCheckResult{}
	for _, hc := range checks {
		r := HealthCheckResult{Name: hc.Name, URL: hc.URL, Required: hc.Required}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, hc.URL, nil)
		if err == nil {
			var resp *http.Response
			resp, err = client.Do(req)
			if err == nil {
				io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
				resp.Body.Close()
				r.OK = resp.StatusCode < 400
				r.Message = resp.Status
			}
		}
		if err != nil {
			r.Message = shortErr(err)
		}
		out = append(out, r)
	}
	return out
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
