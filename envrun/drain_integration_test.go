package envrun

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/gitservertest"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/planstore"
)

// TestDrainOnRealCluster: a replica stopping during an apply. A run
// stalled before its second write, the grace over (Drain's context
// ended): the apply stops before that write, and leaves one audit record
// (outcome interrupted, the run's actor: the person, or auto-sync), one
// history entry (interrupted, its report naming the object written), the
// first object live, the second not, and no lock held; no run starts
// after. A run that ends within the grace is not interrupted.
func TestDrainOnRealCluster(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{"person", "engine", "grace", "deploy-web"}})
	dir := t.TempDir()
	gitservertest.WriteTree(t, dir, map[string]string{
		"m/kustomization.yaml": "resources: [api.yaml, worker.yaml]\n",
		"m/api.yaml":           labelledCM("api-config", "api", "1"),
		// A wave of its own: the objects of one kind group of a wave are
		// written in parallel, so only a later wave is surely unwritten.
		"m/worker.yaml": strings.Replace(labelledCM("worker-config", "worker", "1"), "\n  labels:", "\n  annotations: {"+deployplan.WaveAnnotation+": \"1\"}\n  labels:", 1),
		"catalog.json":  `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`,
	})
	cfg, err := envconfig.ParseConfig([]byte(`environments:
  - {name: person, cluster: {context: test}, namespace: person, source: {path: m}, catalog: catalog.json, registry: {skip: true}}
  - {name: engine, cluster: {context: test}, namespace: engine, source: {path: m}, catalog: catalog.json, registry: {skip: true}}
  - {name: grace, cluster: {context: test}, namespace: grace, source: {path: m}, catalog: catalog.json, registry: {skip: true}}
`), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store := planstore.New(p.Kube.CoreV1(), "deploy-web", 20)

	// newRunner is a runner whose applies stall before writing
	// worker-config until proceed is closed; reached is closed then.
	newRunner := func() (r *Runner, records func() []audit.Record, reached, proceed chan struct{}) {
		var mu sync.Mutex
		var recs []audit.Record
		reached, proceed = make(chan struct{}), make(chan struct{})
		var once sync.Once
		r = New(cfg, slog.New(slog.DiscardHandler), Options{RestConfig: p.Cluster.Config, Events: p.Kube.CoreV1(),
			ReportsDir: t.TempDir(), Store: store, ApplyTimeout: time.Minute,
			Record: func(_ context.Context, rec audit.Record) {
				mu.Lock()
				defer mu.Unlock()
				recs = append(recs, rec)
			},
			BeforeWrite: func(_ context.Context, what string) {
				if what == "apply ConfigMap/worker-config" {
					once.Do(func() { close(reached) })
					<-proceed
				}
			}})
		return r, func() []audit.Record {
			mu.Lock()
			defer mu.Unlock()
			return append([]audit.Record(nil), recs...)
		}, reached, proceed
	}
	exists := func(ns, name string) bool {
		_, err := p.Kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil
	}
	lockHeld := func(ns string) bool {
		l, err := p.Kube.CoordinationV1().Leases(ns).Get(ctx, deployplan.LockName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false
		}
		return err != nil || (l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "")
	}

	interrupted := []struct {
		env   string
		req   DeployRequest
		actor audit.Actor
	}{
		{"person", DeployRequest{User: "alice@example.com", Actor: audit.Actor{Subject: "alice-sub", Email: "alice@example.com"}, Trigger: TriggerSync},
			audit.Actor{Subject: "alice-sub", Email: "alice@example.com"}},
		{"engine", DeployRequest{User: audit.EngineSubject, Actor: audit.EngineActor(), Trigger: TriggerAutoSync}, audit.EngineActor()},
	}
	for _, tt := range interrupted {
		t.Run("interrupted: "+tt.env, func(t *testing.T) {
			r, records, reached, proceed := newRunner()
			run, err := r.Deploy(tt.env, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			<-reached
			over, cancel := context.WithCancel(ctx)
			cancel() // the grace is over
			drained := make(chan error, 1)
			go func() {
				_, err := r.Drain(over)
				drained <- err
			}()
			// The runs are interrupted once Drain saw the grace over; the
			// stalled write then goes on to its guard.
			waitFor(t, "the interruption", func() bool { return r.interrupt.Err() != nil })
			close(proceed)
			if err := <-drained; err != nil {
				t.Fatalf("Drain() = %v", err)
			}
			s := run.Snapshot()
			var ie *deployplan.InterruptedError
			if !s.Done || !errors.As(s.Err, &ie) || ie.Written != 1 {
				t.Fatalf("run after Drain: done %v, err %v; want done, interrupted after 1 write", s.Done, s.Err)
			}
			if !exists(tt.env, "api-config") || exists(tt.env, "worker-config") {
				t.Errorf("live: api-config %v, worker-config %v; want the first written, the second not", exists(tt.env, "api-config"), exists(tt.env, "worker-config"))
			}
			recs := records()
			if len(recs) != 1 || recs[0].Outcome != audit.OutcomeInterrupted || recs[0].Actor.Subject != tt.actor.Subject || recs[0].Actor.Email != tt.actor.Email {
				t.Fatalf("audit records = %+v, want one, interrupted, by %+v", recs, tt.actor)
			}
			entries, err := store.List(ctx, tt.env)
			if err != nil || len(entries) == 0 || entries[0].Action != ActionApply || entries[0].Conclusion != ConclusionInterrupted {
				t.Fatalf("history = %+v, %v; want the apply entry first, interrupted", entries, err)
			}
			if lockHeld(tt.env) {
				t.Error("the environment's apply lock is still held after the drain")
			}
			if _, err := r.Deploy(tt.env, tt.req); !errors.Is(err, ErrStopping) {
				t.Errorf("Deploy after Drain = %v, want ErrStopping", err)
			}
		})
	}

	t.Run("finishes within the grace", func(t *testing.T) {
		r, records, reached, proceed := newRunner()
		run, err := r.Deploy("grace", DeployRequest{User: "bob", Trigger: TriggerSync})
		if err != nil {
			t.Fatal(err)
		}
		<-reached
		drained := make(chan int, 1)
		go func() {
			grace, cancel := context.WithTimeout(ctx, 3*time.Minute)
			defer cancel()
			n, _ := r.Drain(grace)
			drained <- n
		}()
		close(proceed)
		if n := <-drained; n != 0 {
			t.Errorf("Drain() interrupted %d run(s), want 0", n)
		}
		if s := run.Snapshot(); !s.Done || s.Err != nil || s.Report.Status() != deployplan.StatusApplied {
			t.Errorf("run = done %v, %v; want applied", s.Done, s.Err)
		}
		if recs := records(); len(recs) != 1 || recs[0].Outcome != audit.OutcomeSucceeded {
			t.Errorf("audit records = %+v, want one, succeeded", recs)
		}
		if lockHeld("grace") {
			t.Error("the apply lock is still held")
		}
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
