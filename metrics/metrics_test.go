package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/metrics"
	"github.com/hanzoai/deploy-web/release"
)

type fakeInformers []kubeview.InformerState

func (f fakeInformers) InformerStates() []kubeview.InformerState { return f }

type fakeReleaser struct {
	rollbackErr error
	changed     bool
	syncErr     error
}

func (f fakeReleaser) Rollback(ctx context.Context, namespace, name, version, user string) (release.Result, error) {
	return release.Result{App: name, Namespace: namespace, To: version, Changed: f.changed}, f.rollbackErr
}

func (f fakeReleaser) Sync(ctx context.Context, namespace, name, user string) (release.SyncResult, error) {
	return release.SyncResult{App: name, Namespace: namespace}, f.syncErr
}

// scrape fetches the exposition text of m's handler.
func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler(slog.New(slog.DiscardHandler)))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d, want 200:\n%s", resp.StatusCode, b)
	}
	return string(b)
}

// TestScrape records one of each measurement and checks the series are in
// the scrape with the right labels and values.
func TestScrape(t *testing.T) {
	m := metrics.New(metrics.ClusterInformers{Cluster: "us", Source: fakeInformers{
		{Namespace: "shop", Kind: "Deployment", Synced: true, LastEvent: time.Now().Add(-90 * time.Second)},
		{Namespace: "shop", Kind: "CronJob", Synced: true},
		{Namespace: "pay", Kind: "Pod", Synced: false, Forbidden: true},
	}, Reachable: func() bool { return true }}, metrics.ClusterInformers{Cluster: "eu-west", Source: fakeInformers{
		{Namespace: "shop", Kind: "Deployment", Synced: false},
	}, Reachable: func() bool { return false }})
	m.ObserveRequest("GET /apps/{namespace}/{name}", 200, 20*time.Millisecond)
	m.ObserveRequest("GET /apps/{namespace}/{name}", 404, time.Millisecond)
	m.ObserveRequest("POST /v1/deploy/{name}/rollback", 503, time.Millisecond)
	m.StreamOpened()
	m.StreamOpened()
	m.StreamClosed()
	ctx := context.Background()
	_, _ = m.Releaser(fakeReleaser{changed: true}).Rollback(ctx, "shop", "web", "1.0.0", "alice")
	_, _ = m.Releaser(fakeReleaser{}).Rollback(ctx, "shop", "web", "1.0.0", "alice")
	_, _ = m.Releaser(fakeReleaser{rollbackErr: fmt.Errorf("x: %w", release.ErrNotInHistory)}).Rollback(ctx, "shop", "web", "9.9.9", "alice")
	_, _ = m.Releaser(fakeReleaser{rollbackErr: release.ErrConflict}).Rollback(ctx, "shop", "web", "1.0.0", "alice")
	_, _ = m.Releaser(fakeReleaser{syncErr: errors.New("apiserver down")}).Sync(ctx, "shop", "web", "alice")
	_, _ = m.Releaser(fakeReleaser{}).Sync(ctx, "shop", "web", "alice")
	m.Operation(metrics.OpApply, metrics.OutcomeRefused)
	m.Operation(metrics.OpApply, "bogus")

	out := scrape(t, m)
	for _, want := range []string{
		`deploy_web_http_request_duration_seconds_count{code="2xx",route="GET /apps/{namespace}/{name}"} 1`,
		`deploy_web_http_request_duration_seconds_count{code="4xx",route="GET /apps/{namespace}/{name}"} 1`,
		`deploy_web_http_request_duration_seconds_count{code="5xx",route="POST /v1/deploy/{name}/rollback"} 1`,
		`deploy_web_http_request_duration_seconds_bucket{code="2xx",route="GET /apps/{namespace}/{name}",le="0.025"} 1`,
		`deploy_web_sse_streams_open 1`,
		`deploy_web_operations_total{operation="rollback",outcome="accepted"} 1`,
		`deploy_web_operations_total{operation="rollback",outcome="unchanged"} 1`,
		`deploy_web_operations_total{operation="rollback",outcome="refused"} 1`,
		`deploy_web_operations_total{operation="rollback",outcome="conflict"} 1`,
		`deploy_web_operations_total{operation="sync",outcome="error"} 1`,
		`deploy_web_operations_total{operation="sync",outcome="accepted"} 1`,
		`deploy_web_operations_total{operation="apply",outcome="refused"} 1`,
		`deploy_web_operations_total{operation="apply",outcome="error"} 1`,
		`deploy_web_operations_total{operation="apply",outcome="accepted"} 0`,
		`deploy_web_informer_synced{cluster="us",kind="Deployment",namespace="shop"} 1`,
		`deploy_web_informer_synced{cluster="us",kind="Pod",namespace="pay"} 0`,
		`deploy_web_informer_synced{cluster="eu-west",kind="Deployment",namespace="shop"} 0`,
		`deploy_web_cluster_reachable{cluster="us"} 1`,
		`deploy_web_cluster_reachable{cluster="eu-west"} 0`,
		`deploy_web_informer_forbidden{cluster="us",kind="Pod",namespace="pay"} 1`,
		`deploy_web_informer_forbidden{cluster="us",kind="Deployment",namespace="shop"} 0`,
		`deploy_web_informer_last_event_age_seconds{cluster="us",kind="Deployment",namespace="shop"} `,
		`go_goroutines `,
		`process_start_time_seconds `,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if strings.Contains(out, `deploy_web_informer_last_event_age_seconds{cluster="us",kind="CronJob"`) {
		t.Errorf("scrape has a last-event age for an informer that never had an event")
	}
	// The age is about 90s.
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, `deploy_web_informer_last_event_age_seconds{cluster="us",kind="Deployment",namespace="shop"} `); ok {
			var age float64
			if _, err := fmt.Sscan(rest, &age); err != nil || age < 89 || age > 120 {
				t.Errorf("last event age = %q, want about 90", rest)
			}
		}
	}
	if t.Failed() {
		t.Logf("scrape:\n%s", out)
	}
}

func TestOutcome(t *testing.T) {
	tests := []struct {
		err     error
		changed bool
		want    string
	}{
		{nil, true, metrics.OutcomeAccepted},
		{nil, false, metrics.OutcomeUnchanged},
		{release.ErrInvalidVersion, false, metrics.OutcomeRefused},
		{fmt.Errorf("wrapped: %w", release.ErrNotInHistory), false, metrics.OutcomeRefused},
		{release.ErrNotFound, false, metrics.OutcomeRefused},
		{kubeview.ErrAppNotFound, false, metrics.OutcomeRefused},
		{release.ErrConflict, false, metrics.OutcomeConflict},
		{errors.New("forbidden"), false, metrics.OutcomeError},
	}
	for _, tt := range tests {
		if got := metrics.Outcome(tt.err, tt.changed); got != tt.want {
			t.Errorf("Outcome(%v, %v) = %q, want %q", tt.err, tt.changed, got, tt.want)
		}
	}
}

// TestNoGlobalState checks that two Metrics do not share instruments (no
// default registry): each can be built and scraped on its own.
func TestNoGlobalState(t *testing.T) {
	a, b := metrics.New(), metrics.New()
	a.StreamOpened()
	if out := scrape(t, b); !strings.Contains(out, "deploy_web_sse_streams_open 0") {
		t.Errorf("a second Metrics sees the first's stream")
	}
}
