package envrun

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/planstore"
)

func TestApplyRecord(t *testing.T) {
	env := &envconfig.Environment{Name: "dev", Namespace: "dev"}
	report := func(status, summary string, blockers ...string) *deployplan.Report {
		rep := &deployplan.Report{}
		d := &rep.DeployApply
		d.Conclusion.Status, d.Conclusion.Summary = status, summary
		d.Source.Commit, d.Source.RenderedDigest = "0123abc", "sha256:feed"
		d.Objects = []deployplan.ObjectPlan{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "dev", Name: "api"}}
		for _, b := range blockers {
			d.RemainingBlockers = append(d.RemainingBlockers, deployplan.Blocker{ID: b, Message: "m"})
		}
		return rep
	}
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "db", "namespace": "dev"}, "stringData": map[string]any{"password": "hunter2"}}}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "namespace": "dev"}, "data": map[string]any{"a": "b"}}}
	tests := []struct {
		name      string
		rep       *deployplan.Report
		err       error
		applied   []*unstructured.Unstructured
		outcome   audit.Outcome
		message   string
		blockers  []string
		manifests int
		objects   []audit.Object
	}{
		{"applied", report(deployplan.StatusApplied, "applied 2 objects"), nil, []*unstructured.Unstructured{cm, secret},
			audit.OutcomeSucceeded, "applied 2 objects", []string{}, 2, nil},
		{"refused by a gate", report(deployplan.StatusBlocked, "blocked", "image-not-in-catalog"), &deployplan.RefusalError{Reason: "the plan is blocked by 1 blocker(s)"}, []*unstructured.Unstructured{cm},
			audit.OutcomeRefused, "the plan is blocked by 1 blocker(s)", []string{"image-not-in-catalog"}, 0,
			[]audit.Object{{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "dev", Name: "api"}}},
		{"refused before any report", nil, &deployplan.RefusalError{Reason: "confirm the environment"}, nil,
			audit.OutcomeRefused, "confirm the environment", []string{}, 0, nil},
		{"failed with a report", report(deployplan.StatusFailed, "api did not become healthy"), nil, []*unstructured.Unstructured{cm},
			audit.OutcomeFailed, "api did not become healthy", []string{}, 1, nil},
		{"an error without a report", nil, errors.New("dial tcp 10.0.0.7:443: connection refused"), nil,
			audit.OutcomeFailed, "the apply could not run: see the server log", []string{}, 0, nil},
		{"lock lost", nil, &deployplan.LockLostError{Namespace: "dev", Holder: "a", Now: "b"}, nil,
			audit.OutcomeFailed, (&deployplan.LockLostError{Namespace: "dev", Holder: "a", Now: "b"}).Error(), []string{}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ApplyRecord(audit.VerbApply, env, time.Now(), tt.rep, tt.err, tt.applied)
			if got.Outcome != tt.outcome || got.Message != tt.message {
				t.Errorf("ApplyRecord() = %s %q, want %s %q", got.Outcome, got.Message, tt.outcome, tt.message)
			}
			if diff := cmp.Diff(tt.blockers, got.Blockers); diff != "" {
				t.Errorf("ApplyRecord() blockers mismatch (-want +got):\n%s", diff)
			}
			if len(got.Manifests) != tt.manifests {
				t.Errorf("ApplyRecord() = %d manifests, want %d", len(got.Manifests), tt.manifests)
			}
			if diff := cmp.Diff(tt.objects, got.Objects); diff != "" {
				t.Errorf("ApplyRecord() objects mismatch (-want +got):\n%s", diff)
			}
			if got.Environment != "dev" || got.Namespace != "dev" || got.Verb != audit.VerbApply {
				t.Errorf("ApplyRecord() = %s of %s/%s, want apply of dev/dev", got.Verb, got.Environment, got.Namespace)
			}
			if tt.rep != nil && (got.Commit != "0123abc" || got.RenderedDigest != "sha256:feed") {
				t.Errorf("ApplyRecord() commit, digest = %s, %s; want the report's", got.Commit, got.RenderedDigest)
			}
			for _, m := range got.Manifests {
				if m.GetKind() == "Secret" && (m.Object["stringData"] != nil || m.Object["data"] != nil) {
					t.Errorf("ApplyRecord() keeps the Secret's values: %v", m.Object)
				}
			}
		})
	}
}

// recordSink collects the records a Runner hands over.
type recordSink struct {
	mu    sync.Mutex
	store *audit.Store
	recs  []audit.Record
}

func (s *recordSink) record(ctx context.Context, rec audit.Record) {
	rec.Cluster = "test"
	stored, err := s.store.Append(ctx, rec)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		stored = audit.Record{Message: "not stored: " + err.Error()}
	}
	s.recs = append(s.recs, stored)
}

func (s *recordSink) got() []audit.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]audit.Record(nil), s.recs...)
}

// TestConsoleApplyWritesOneRecordEach: on the real control plane, a plan
// writes no record, and every apply writes exactly one, stored in the
// cluster: refused at once (a confirmation that does not name the
// environment, a plan that is not the latest), failed (the environment's
// cluster unresolvable), refused as busy (another apply runs) and applied,
// the last with its commit, digest and
// manifests, the Secret by name and hash only.
func TestConsoleApplyWritesOneRecordEach(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{"dev", "deploy-web"}})
	ctx := context.Background()
	dir := t.TempDir()
	files := map[string]string{
		"m/kustomization.yaml": "namespace: dev\nresources:\n  - objects.yaml\n",
		"m/objects.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: new\n---\n" +
			"apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-secret\nstringData:\n  password: manifest-marker-91c3\n",
		"catalog.json": `{"commit": "0123456789abcdef0123456789abcdef01234567", "services": []}`,
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := envconfig.ParseConfig([]byte("environments:\n  - {name: dev, cluster: {context: test}, namespace: dev, source: {path: m}, catalog: catalog.json, registry: {skip: true}}\n"), dir)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := metadata.NewForConfig(platformtest.AdminConfig(p.Cluster.Config))
	if err != nil {
		t.Fatal(err)
	}
	store, err := audit.New(p.Kube.CoreV1(), meta, audit.Options{Namespace: "deploy-web"})
	if err != nil {
		t.Fatal(err)
	}
	sink := &recordSink{store: store}
	history := planstore.New(p.Kube.CoreV1(), "deploy-web", 10)
	alice := audit.Actor{Email: "alice@example.com", Subject: "u-alice"}
	r := New(cfg, slog.New(slog.DiscardHandler), Options{
		RestConfig: p.Cluster.Config, ReportsDir: t.TempDir(), Store: history, Events: p.Kube.CoreV1(), ApplyTimeout: time.Minute,
		Record: sink.record,
	})
	stored := func() []audit.Record {
		t.Helper()
		pg, err := store.List(ctx, audit.Filter{Environment: "dev"})
		if err != nil {
			t.Fatal(err)
		}
		return pg.Records
	}
	expect := func(step string, n int, outcome audit.Outcome, message string) audit.Record {
		t.Helper()
		recs := stored()
		if len(recs) != n || len(sink.got()) != n {
			t.Fatalf("%s: %d records stored (%d handed over), want %d", step, len(recs), len(sink.got()), n)
		}
		// The newest by time; a record's time is its start, so an apply
		// outlasting a later refusal is found by its outcome.
		got := recs[0]
		for _, r := range recs {
			if r.Outcome == outcome {
				got = r
				break
			}
		}
		if got.Verb != audit.VerbApply || got.Outcome != outcome || !strings.Contains(got.Message, message) || got.Actor.Email != alice.Email || !got.Chain.OK {
			t.Errorf("%s: record = %s %s %q by %+v (chain %+v), want apply %s %q by alice, chain ok", step, got.Verb, got.Outcome, got.Message, got.Actor, got.Chain, outcome, message)
		}
		return got
	}

	plan, err := r.StartAs(alice, "dev", ActionPlan, "alice", "", "")
	if err != nil {
		t.Fatal(err)
	}
	ps := waitDone(t, plan)
	if ps.Report == nil || ps.Report.Status() != deployplan.StatusReady {
		t.Fatalf("plan = %+v (err %v), want ready", ps.Report, ps.Err)
	}
	if n := len(stored()); n != 0 {
		t.Fatalf("after a plan: %d records, want none (a plan writes nothing)", n)
	}

	if _, err := r.StartAs(alice, "dev", ActionApply, "alice", "prod", ps.Entry.ID); err == nil {
		t.Fatal("apply confirming another environment: started, want refused")
	}
	expect("apply confirming another environment", 1, audit.OutcomeRefused, "")
	if _, err := r.StartAs(alice, "dev", ActionApply, "alice", "dev", "no-such-plan"); err == nil {
		t.Fatal("apply of an unknown plan: started, want refused")
	}
	expect("apply of an unknown plan", 2, audit.OutcomeRefused, "")

	unresolved := New(cfg, slog.New(slog.DiscardHandler), Options{
		ClusterConfig: func(*envconfig.Environment) (*rest.Config, error) { return nil, errors.New("no such context") },
		ReportsDir:    t.TempDir(), Store: history, Record: sink.record,
	})
	run, err := unresolved.StartAs(alice, "dev", ActionApply, "alice", "dev", ps.Entry.ID)
	if err != nil {
		t.Fatal(err)
	}
	waitDone(t, run)
	expect("apply to an unresolvable cluster", 3, audit.OutcomeFailed, "see the server log")

	apply, err := r.StartAs(alice, "dev", ActionApply, "alice", "dev", ps.Entry.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Busy is decided when Start returns: a second apply is refused.
	if _, err := r.StartAs(alice, "dev", ActionApply, "alice", "dev", ps.Entry.ID); !errors.Is(err, ErrBusy) {
		t.Fatalf("a second apply while one runs = %v, want ErrBusy", err)
	}
	expect("a second apply while one runs", 4, audit.OutcomeRefused, "already running")
	as := waitDone(t, apply)
	if as.Report == nil || as.Report.Status() != deployplan.StatusApplied {
		t.Fatalf("apply = %v (err %v, refusal %q), want applied", as.Report, as.Err, as.Refusal)
	}
	got := expect("apply", 5, audit.OutcomeSucceeded, "")
	if got.Commit != as.Report.DeployApply.Source.Commit || got.RenderedDigest != as.Report.DeployApply.Source.RenderedDigest || got.RenderedDigest == "" {
		t.Errorf("record commit, digest = %s, %s; want the report's %s, %s", got.Commit, got.RenderedDigest, as.Report.DeployApply.Source.Commit, as.Report.DeployApply.Source.RenderedDigest)
	}
	full, err := store.Get(ctx, got.ID)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]*unstructured.Unstructured{}
	for _, m := range full.Manifests {
		kinds[m.GetKind()+"/"+m.GetName()] = m
	}
	if kinds["ConfigMap/settings"] == nil || kinds["Secret/api-secret"] == nil || len(kinds) != 2 {
		t.Fatalf("record manifests = %v, want the ConfigMap and the Secret", kinds)
	}
	s := kinds["Secret/api-secret"]
	if s.Object["stringData"] != nil || s.Object["data"] != nil || s.GetAnnotations()[deployplan.SecretHashAnnotation] == "" {
		t.Errorf("record's Secret = %v, want its name and hash only", s.Object)
	}
}
