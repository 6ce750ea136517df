package demo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/prombin"
	"github.com/hanzoai/deploy-web/internal/promtest"
	"github.com/hanzoai/deploy-web/promcheck"
)

// TestDemoChecksAgainstPrometheus runs the demo's Prometheus (the real
// binary, started as Start starts it) scraping the demo's traffic source
// for dev's api and worker at DevVersion, and evaluates the promotion
// checks of the demo's environments file against dev's metrics, as a
// promotion into staging does: worker's 8% errors fail error-rate with
// the value, the query as run and the threshold; api's pass. Stop leaves
// no Prometheus running.
func TestDemoChecksAgainstPrometheus(t *testing.T) {
	promtest.Require(t)
	dir := t.TempDir()
	apps := []RunningApp{
		{App: "api", Namespace: StagingNamespace, Environment: DevEnvironment, Version: DevVersion},
		{App: FailingApp, Namespace: StagingNamespace, Environment: DevEnvironment, Version: DevVersion},
	}
	pr, err := startPrometheus(PrometheusBin, filepath.Join(dir, prometheusDir), NewTraffic(func(context.Context) ([]RunningApp, error) { return apps, nil }, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Stop()
	if err := pr.WaitReady(t.Context()); err != nil {
		t.Fatal(err)
	}

	envFile := filepath.Join(dir, EnvironmentsFileName)
	if err := os.WriteFile(envFile, []byte(environmentsYAML("file://"+filepath.Join(dir, manifestBareDir), filepath.Join(dir, "kubeconfig"), pr.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := envconfig.LoadConfig(envFile)
	if err != nil {
		t.Fatalf("LoadConfig(demo environments with Prometheus) = %v", err)
	}
	dev, err := cfg.Env(DevEnvironment)
	if err != nil {
		t.Fatal(err)
	}
	staging, err := cfg.Env(StagingEnvironment)
	if err != nil {
		t.Fatal(err)
	}
	if dev.Metrics == nil || dev.Metrics.URL != pr.URL || staging.Promotion == nil || len(staging.Promotion.Checks) != 1 || staging.Promotion.Checks[0].Name != ErrorRateCheck {
		t.Fatalf("dev's metrics %+v, staging's promotion %+v: want dev's metrics at %s and staging's check %s", dev.Metrics, staging.Promotion, pr.URL, ErrorRateCheck)
	}
	check := staging.Promotion.Checks[0]

	// Each App's check is evaluated (fresh, past the cache) until
	// Prometheus has scraped enough to answer a value: two scrapes of the
	// App's counters.
	e := promcheck.New(promcheck.Options{})
	evaluate := func(app string) promcheck.Result {
		v := promcheck.Vars{App: app, Namespace: dev.Namespace, Environment: dev.Name, Version: DevVersion}
		deadline := time.Now().Add(90 * time.Second)
		for {
			r := e.Evaluate(t.Context(), *dev.Metrics, check, v, time.Time{}, true)
			if r.HasValue {
				return r
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s's %s check answered no value within 90s: %s", app, check.Name, r.Message())
			}
			time.Sleep(ScrapeInterval / 2)
		}
	}
	worker := evaluate(FailingApp)
	if worker.Held || worker.Problem != "" || worker.Value <= ErrorRateMax || worker.Value > FailingErrorRatio+0.02 {
		t.Errorf("worker %s's check = %+v, want failed at about %g (> %g)", DevVersion, worker, FailingErrorRatio, ErrorRateMax)
	}
	msg := worker.Message()
	t.Logf("worker: %s", msg)
	for _, w := range []string{"check " + ErrorRateCheck + " failed", "breaks the threshold <= 0.05",
		`app="worker",environment="dev",version="1.5.0"`, `code=~"5.."`, strconv.FormatFloat(worker.Value, 'g', 6, 64)} {
		if !strings.Contains(msg, w) {
			t.Errorf("worker's gate message %q lacks %q", msg, w)
		}
	}
	api := evaluate("api")
	t.Logf("api: %s", api.Message())
	if !api.Held || api.Problem != "" || api.Value > ErrorRateMax {
		t.Errorf("api %s's check = %+v (%s), want held (about %g <= %g)", DevVersion, api, api.Message(), BaseErrorRatio, ErrorRateMax)
	}

	pr.Stop()
	select {
	case <-pr.server.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Prometheus still runs after Stop")
	}
}

// TestStartWithoutPrometheus: a demo asked to run a Prometheus that is
// not installed stops before it starts anything, naming Debian's
// package.
func TestStartWithoutPrometheus(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "prometheus")
	_, err := Start(t.Context(), Options{CallbackURL: "http://127.0.0.1:1/callback", Prometheus: missing, BinDir: t.TempDir()})
	var me *MissingPrometheusError
	if !errors.As(err, &me) || me.Bin != missing {
		t.Fatalf("Start without %s = %v, want a MissingPrometheusError", missing, err)
	}
	for _, w := range []string{missing, "Debian's " + prombin.Package + " package", "apt-get install " + prombin.Package} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q lacks %q", err, w)
		}
	}
}
