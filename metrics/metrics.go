// Package metrics is deploy-web's Prometheus instrumentation: HTTP request
// durations per route pattern, open server-sent-event streams, the informer
// caches' sync state and last-event age, and rollback, sync and apply counts
// by outcome. main builds one Metrics (its own registry, no global state)
// and serves Handler on a separate listener (--metrics-addr), so the main
// site's routes stay exactly the authenticated ones.
package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/release"
)

// Operations counted by outcome.
const (
	OpRollback = "rollback"
	OpSync     = "sync"
	OpApply    = "apply"
)

// Outcomes of an operation.
const (
	// OutcomeAccepted: the change was made.
	OutcomeAccepted = "accepted"
	// OutcomeUnchanged: nothing to do (an idempotent repeat).
	OutcomeUnchanged = "unchanged"
	// OutcomeRefused: a gate said no (bad version, not in history, unknown
	// app, a protected environment, a held lock).
	OutcomeRefused = "refused"
	// OutcomeConflict: the object changed underneath, even after a retry.
	OutcomeConflict = "conflict"
	// OutcomeError: anything else (the apiserver failed or denied).
	OutcomeError = "error"
)

var (
	operations = []string{OpRollback, OpSync, OpApply}
	outcomes   = []string{OutcomeAccepted, OutcomeUnchanged, OutcomeRefused, OutcomeConflict, OutcomeError}
)

// InformerSource reports the informer caches' state (implemented by
// *kubeview.Cache).
type InformerSource interface {
	InformerStates() []kubeview.InformerState
}

// ClusterInformers are the informers of one cluster, named by the
// cluster label of the informer series.
type ClusterInformers struct {
	Cluster string
	Source  InformerSource
	// Reachable, if set, says whether the cluster's apiserver answered its
	// last probe (deploy_web_cluster_reachable).
	Reachable func() bool
}

// Metrics holds the registry and the instruments. Its methods are safe for
// concurrent use.
type Metrics struct {
	reg        *prometheus.Registry
	requests   *prometheus.HistogramVec
	streams    prometheus.Gauge
	operations *prometheus.CounterVec
}

// New builds a registry with the Go and process collectors, deploy-web's
// instruments and, for the clusters given, the informer collector (read at
// scrape time, each series labelled with its cluster).
func New(informers ...ClusterInformers) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "deploy_web_http_request_duration_seconds",
			Help:    "Duration of HTTP requests by route pattern (as in the route table) and status class; server-sent-event streams are counted in deploy_web_sse_streams_open instead.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "code"}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "deploy_web_sse_streams_open",
			Help: "Server-sent-event streams (live logs, live pages) open now.",
		}),
		operations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "deploy_web_operations_total",
			Help: "Rollbacks, sync requests and applies by outcome (accepted, unchanged, refused, conflict, error).",
		}, []string{"operation", "outcome"}),
	}
	for _, op := range operations {
		for _, o := range outcomes {
			m.operations.WithLabelValues(op, o) // every series exists from the start, at 0
		}
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.streams, m.operations,
	)
	if len(informers) > 0 {
		m.reg.MustRegister(informerCollector{src: informers, now: time.Now})
	}
	return m
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler(log *slog.Logger) http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		Registry:          m.reg, // promhttp_metric_handler_errors_total
		EnableOpenMetrics: true,
	})
}

// Registry returns the registry, for other packages' collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObserveRequest records one HTTP request of route (the route table's
// pattern, never the raw path: bounded cardinality) that answered status.
func (m *Metrics) ObserveRequest(route string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, statusClass(status)).Observe(d.Seconds())
}

// StreamOpened counts a server-sent-event stream as open.
func (m *Metrics) StreamOpened() { m.streams.Inc() }

// StreamClosed counts a server-sent-event stream as closed.
func (m *Metrics) StreamClosed() { m.streams.Dec() }

// Operation counts one operation (OpRollback, OpSync, OpApply) with its
// outcome (one of the Outcome constants; anything else counts as error).
func (m *Metrics) Operation(op, outcome string) {
	valid := false
	for _, o := range outcomes {
		valid = valid || o == outcome
	}
	if !valid {
		outcome = OutcomeError
	}
	m.operations.WithLabelValues(op, outcome).Inc()
}

func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status/100) + "xx"
}

// Outcome classifies the result of a release operation.
func Outcome(err error, changed bool) string {
	switch {
	case err == nil && changed:
		return OutcomeAccepted
	case err == nil:
		return OutcomeUnchanged
	case errors.Is(err, release.ErrConflict):
		return OutcomeConflict
	case errors.Is(err, release.ErrInvalidVersion), errors.Is(err, release.ErrNotInHistory),
		errors.Is(err, release.ErrNotFound), errors.Is(err, kubeview.ErrAppNotFound):
		return OutcomeRefused
	}
	return OutcomeError
}

// Releaser is the release seam as the handlers use it.
type Releaser interface {
	Rollback(ctx context.Context, namespace, name, version, user string) (release.Result, error)
	Sync(ctx context.Context, namespace, name, user string) (release.SyncResult, error)
}

// CountingReleaser counts the outcomes of the Releaser it wraps.
type CountingReleaser struct {
	next Releaser
	m    *Metrics
}

// Releaser wraps r so that every rollback and sync is counted by outcome.
func (m *Metrics) Releaser(r Releaser) *CountingReleaser {
	return &CountingReleaser{next: r, m: m}
}

// Rollback calls the wrapped Rollback and counts its outcome.
func (c *CountingReleaser) Rollback(ctx context.Context, namespace, name, version, user string) (release.Result, error) {
	res, err := c.next.Rollback(ctx, namespace, name, version, user)
	c.m.Operation(OpRollback, Outcome(err, res.Changed))
	return res, err
}

// Sync calls the wrapped Sync and counts its outcome.
func (c *CountingReleaser) Sync(ctx context.Context, namespace, name, user string) (release.SyncResult, error) {
	res, err := c.next.Sync(ctx, namespace, name, user)
	c.m.Operation(OpSync, Outcome(err, true))
	return res, err
}

// informerCollector turns kubeview's informer states into gauges at scrape
// time.
type informerCollector struct {
	src []ClusterInformers
	now func() time.Time
}

var (
	informerSyncedDesc = prometheus.NewDesc("deploy_web_informer_synced",
		"1 when the informer of a kind in a platform namespace has synced its initial list.",
		[]string{"cluster", "namespace", "kind"}, nil)
	informerForbiddenDesc = prometheus.NewDesc("deploy_web_informer_forbidden",
		"1 when the service account may not read the kind in the namespace (RBAC).",
		[]string{"cluster", "namespace", "kind"}, nil)
	clusterReachableDesc = prometheus.NewDesc("deploy_web_cluster_reachable",
		"1 when the cluster's apiserver answered the last reachability probe; 0 while its rows are shown stale.",
		[]string{"cluster"}, nil)
	informerAgeDesc = prometheus.NewDesc("deploy_web_informer_last_event_age_seconds",
		"Seconds since the informer last delivered an add, update or delete (resyncs every 10 minutes included); absent until the first event, so a kind with no objects has none.",
		[]string{"cluster", "namespace", "kind"}, nil)
)

func (c informerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- informerSyncedDesc
	ch <- informerForbiddenDesc
	ch <- informerAgeDesc
	ch <- clusterReachableDesc
}

func (c informerCollector) Collect(ch chan<- prometheus.Metric) {
	now := c.now()
	for _, ci := range c.src {
		if ci.Reachable != nil {
			ch <- prometheus.MustNewConstMetric(clusterReachableDesc, prometheus.GaugeValue, b2f(ci.Reachable()), ci.Cluster)
		}
		for _, s := range ci.Source.InformerStates() {
			ch <- prometheus.MustNewConstMetric(informerSyncedDesc, prometheus.GaugeValue, b2f(s.Synced), ci.Cluster, s.Namespace, s.Kind)
			ch <- prometheus.MustNewConstMetric(informerForbiddenDesc, prometheus.GaugeValue, b2f(s.Forbidden), ci.Cluster, s.Namespace, s.Kind)
			if !s.LastEvent.IsZero() {
				ch <- prometheus.MustNewConstMetric(informerAgeDesc, prometheus.GaugeValue, max(0, now.Sub(s.LastEvent).Seconds()), ci.Cluster, s.Namespace, s.Kind)
			}
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
