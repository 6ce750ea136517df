package envrun

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/planstore"
)

// testRunner has a dev and a protected prod environment rendering a local
// folder, and a "cluster" that never answers (so a run stays busy until the
// test ends).
func testRunner(t *testing.T) (*Runner, *fake.Clientset) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"m/kustomization.yaml": "resources:\n  - cm.yaml\n",
		"m/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n",
		"catalog.json":         `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`,
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := envconfig.ParseConfig([]byte(`
environments:
  - name: dev
    cluster: {context: test}
    namespace: dev
    source: {path: m}
    catalog: catalog.json
  - name: prod
    cluster: {context: test}
    namespace: prod
    protected: true
    source: {path: m}
    catalog: catalog.json
`), dir)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); hang.Close() })
	cs := fake.NewClientset()
	r := New(cfg, slog.New(slog.DiscardHandler), Options{
		RestConfig: &rest.Config{Host: hang.URL, Timeout: 3 * time.Second}, ReportsDir: t.TempDir(),
		Store: planstore.New(cs.CoreV1(), "deploy-web", 5), Events: cs.CoreV1(),
	})
	return r, cs
}

func TestStartRefusals(t *testing.T) {
	r, cs := testRunner(t)
	var refusal *deployplan.RefusalError
	tests := []struct {
		env, action, confirm string
		want                 func(error) bool
	}{
		{"prod", ActionApply, "prod", func(err error) bool { return errors.As(err, &refusal) }},
		{"dev", ActionApply, "prod", func(err error) bool { return errors.As(err, &refusal) }},
		{"dev", ActionApply, "", func(err error) bool { return errors.As(err, &refusal) }},
		{"nope", ActionPlan, "", func(err error) bool { return errors.Is(err, ErrUnknownEnv) }},
	}
	for _, tt := range tests {
		run, err := r.Start(tt.env, tt.action, "alice", tt.confirm, "")
		if run != nil || !tt.want(err) {
			t.Errorf("Start(%s, %s, confirm %q) = %v, %v; want a refusal and no run", tt.env, tt.action, tt.confirm, run, err)
		}
	}
	if evs, _ := cs.CoreV1().Events("prod").List(t.Context(), metavOpts()); len(evs.Items) != 0 {
		t.Errorf("a refused apply recorded %d events, want none (nothing started)", len(evs.Items))
	}
}

func TestOneRunPerEnvironment(t *testing.T) {
	r, _ := testRunner(t)
	first, err := r.Start("dev", ActionPlan, "alice", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Start("dev", ActionPlan, "bob", "", ""); !errors.Is(err, ErrBusy) {
		t.Errorf("a second plan of dev while one runs = %v, want ErrBusy", err)
	}
	if got, ok := r.Get(first.ID); !ok || got != first {
		t.Errorf("Get(%s) = %v, %v; want the run", first.ID, got, ok)
	}
	// Progress is recorded as the run goes (rendering happens before the
	// cluster is contacted).
	deadline := time.Now().Add(10 * time.Second)
	for len(first.Snapshot().Steps) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the run reported no progress")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if snap := first.Snapshot(); snap.Done {
		t.Errorf("the run ended although the cluster never answered: %+v", snap)
	}
}

func metavOpts() metav1.ListOptions { return metav1.ListOptions{} }

// TestShutdownInterruptsRuns: when the server's context ends, a running
// plan is interrupted, says so, ends, and frees its environment; no run
// starts after.
func TestShutdownInterruptsRuns(t *testing.T) {
	r0, _ := testRunner(t)
	base, shutdown := context.WithCancel(context.Background())
	opts := r0.opts
	opts.BaseContext = base
	r := New(r0.cfg, slog.New(slog.DiscardHandler), opts)
	run, err := r.Start("dev", ActionPlan, "alice", "", "")
	if err != nil {
		t.Fatal(err)
	}
	shutdown()
	deadline := time.Now().Add(30 * time.Second)
	for !run.Snapshot().Done {
		if time.Now().After(deadline) {
			t.Fatal("the run did not end after the shutdown")
		}
		time.Sleep(20 * time.Millisecond)
	}
	snap := run.Snapshot()
	found := false
	for _, s := range snap.Steps {
		if strings.HasPrefix(s, "interrupted") {
			found = true
		}
	}
	if !found {
		t.Errorf("steps = %q, want an interruption notice", snap.Steps)
	}
	if !r.Idle() {
		t.Error("the environment is still busy after the interrupted run ended")
	}
	if _, err := r.Start("dev", ActionPlan, "alice", "", ""); !errors.Is(err, ErrStopping) {
		t.Errorf("Start after the shutdown = %v, want ErrStopping", err)
	}
}

// TestClusterConfigPerEnvironment: with ClusterConfig, each environment's
// run reaches the cluster it returns, never RestConfig's (the home
// cluster); an environment whose cluster cannot be resolved ends in an
// error, in the history too, without reaching any cluster.
func TestClusterConfigPerEnvironment(t *testing.T) {
	base, _ := testRunner(t)
	var homeHits, euHits atomic.Int32
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		homeHits.Add(1)
		http.Error(w, "home", http.StatusInternalServerError)
	}))
	t.Cleanup(home.Close)
	eu := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		euHits.Add(1)
		http.Error(w, "eu", http.StatusInternalServerError)
	}))
	t.Cleanup(eu.Close)
	cs := fake.NewClientset()
	r := New(base.Config(), slog.New(slog.DiscardHandler), Options{
		RestConfig: &rest.Config{Host: home.URL, Timeout: 3 * time.Second}, ReportsDir: t.TempDir(),
		Store: planstore.New(cs.CoreV1(), "deploy-web", 5), Events: cs.CoreV1(),
		ClusterConfig: func(env *envconfig.Environment) (*rest.Config, error) {
			if env.Name == "dev" {
				return &rest.Config{Host: eu.URL, Timeout: 3 * time.Second}, nil
			}
			return nil, errors.New("kubeconfig context \"test\" does not exist")
		},
	})
	wait := func(run *Run) Snapshot {
		t.Helper()
		deadline := time.After(time.Minute)
		for {
			s := run.Snapshot()
			if s.Done {
				return s
			}
			select {
			case <-s.Changed:
			case <-deadline:
				t.Fatalf("run %s not done", run.ID)
			}
		}
	}
	dev, err := r.Start("dev", ActionPlan, "alice", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if s := wait(dev); s.Report == nil {
		t.Errorf("dev plan: no report (%v)", s.Err)
	} else if got := s.Report.DeployApply.Target.Cluster; got != eu.URL {
		t.Errorf("dev plan: target cluster %q, want its own %q", got, eu.URL)
	}
	if euHits.Load() == 0 {
		t.Errorf("dev plan did not reach its cluster")
	}
	prod, err := r.Start("prod", ActionPlan, "alice", "", "")
	if err != nil {
		t.Fatal(err)
	}
	s := wait(prod)
	if !errors.Is(s.Err, ErrNoCluster) || s.Report != nil {
		t.Errorf("prod plan with no cluster: err %v, report %v; want ErrNoCluster and no report", s.Err, s.Report != nil)
	}
	if s.Entry.Conclusion != "error" || !strings.Contains(s.Entry.Summary, "could not be resolved") {
		t.Errorf("prod plan history entry = %+v, want an error naming the unresolved cluster", s.Entry)
	}
	if n := homeHits.Load(); n != 0 {
		t.Errorf("the home cluster (RestConfig) got %d requests, want none", n)
	}
}
