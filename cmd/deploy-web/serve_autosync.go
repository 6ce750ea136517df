package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/handlers"
	"github.com/hanzoai/deploy-web/internal/sign"
	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/planstore"
)

// autoSyncDeps is what the auto-sync loop of serve is wired to.
type autoSyncDeps struct {
	cfg *deployplan.Config
	// index reads the branch heads and the rendered objects.
	index autoSyncIndex
	// runner runs the guarded deploys; store is its plan history (the
	// commit live).
	runner autoSyncRunner
	store  *planstore.Store
	// envConfig reaches an environment's cluster (the drift reads).
	envConfig func(env *deployplan.Environment) (*rest.Config, error)
	// kube holds the Lease and the pauses in namespace (deploy-web's
	// own); identity is this replica's.
	kube      kubernetes.Interface
	namespace string
	identity  string
	// keys sign the pauses (the audit store's key; required).
	keys sign.Keys
	// appendRecord stores an audit record (nil: none kept).
	appendRecord func(ctx context.Context, rec audit.Record)
	// clusters maps an environment to its cluster's name (audit records).
	clusters map[string]string
	log      *slog.Logger
	// timings of the Lease, for tests (zero: autosync's defaults).
	leaseDuration, renewDeadline, retryPeriod time.Duration
}

// autoSyncIndex is what the loop reads of envsource.Index.
type autoSyncIndex interface {
	Head(ctx context.Context, env string) (string, error)
	Objects(env string) []*unstructured.Unstructured
}

// autoSyncRunner is what the loop asks of envrun.Runner.
type autoSyncRunner interface {
	Deploy(env string, d envrun.DeployRequest) (*envrun.Run, error)
}

// autoSync is the loop of serve and its pauses: the environment pages and
// the API read its state and pause or resume it.
type autoSync struct {
	loop   *autosync.Loop
	pauses *autosync.Pauses
	envs   map[string]bool
}

// autoSyncEnvironments are the environments of cfg the loop acts on:
// those with autoSync.enabled that are not protected (deployplan's
// validation refuses auto-sync on a protected one; it is left out here
// all the same).
func autoSyncEnvironments(cfg *deployplan.Config) []autosync.Environment {
	var out []autosync.Environment
	for _, e := range cfg.Environments {
		if e.AutoSync == nil || !e.AutoSync.Enabled || e.Protected {
			continue
		}
		out = append(out, autosync.Environment{Name: e.Name, Enabled: true, SelfHeal: e.AutoSync.SelfHeal,
			Interval: e.AutoSync.IntervalOrDefault(), Grace: e.AutoSync.GraceOrDefault()})
	}
	return out
}

// newAutoSync builds the loop over d; nil (and no error) when no
// environment has auto-sync on. Run it with run.
func newAutoSync(d autoSyncDeps) (*autoSync, error) {
	envs := autoSyncEnvironments(d.cfg)
	if len(envs) == 0 {
		return nil, nil
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	a := &autoSyncAdapters{d: d, seen: autosync.NewDriftSeen(), fields: map[string]map[string]string{}}
	if d.keys == nil {
		return nil, errors.New("auto-sync: no audit trail holds the key that signs its pauses (deploy-web's namespace is required)")
	}
	pauses := autosync.NewPauses(d.kube.CoreV1(), d.namespace, d.keys, nil)
	o := autosync.Options{
		Environments: envs, Heads: a, Live: a, Deployer: a, Drift: a, Pauses: pauses, Recorder: a,
		Kube: d.kube, Namespace: d.namespace, Identity: d.identity, Log: d.log.With("component", "autosync"),
		LeaseDuration: d.leaseDuration, RenewDeadline: d.renewDeadline, RetryPeriod: d.retryPeriod,
	}
	loop, err := autosync.NewLoop(o)
	if err != nil {
		return nil, err
	}
	out := &autoSync{loop: loop, pauses: pauses, envs: map[string]bool{}}
	for _, e := range envs {
		out.envs[e.Name] = true
	}
	return out, nil
}

// run contends for the Lease until ctx ends.
func (s *autoSync) run(ctx context.Context, log *slog.Logger) {
	if err := s.loop.Run(ctx); err != nil {
		log.Error("auto-sync stopped", "err", err)
	}
}

// Status is env's auto-sync state; ok is false when env has none.
func (s *autoSync) Status(ctx context.Context, env string) (autosync.Status, bool, error) {
	if s == nil || !s.envs[env] {
		return autosync.Status{}, false, nil
	}
	st, err := s.loop.Status(ctx, env)
	return st, true, err
}

// Pause stops auto-sync of env (autosync.Pauses.Pause).
func (s *autoSync) Pause(ctx context.Context, env, reason string, until time.Time, by string) (autosync.Pause, error) {
	if s == nil || !s.envs[env] {
		return autosync.Pause{}, fmt.Errorf("autosync: environment %q has no autoSync: there is nothing to pause", env)
	}
	return s.pauses.Pause(ctx, env, reason, until, by)
}

// Resume ends env's pause and checks it now on this replica.
func (s *autoSync) Resume(ctx context.Context, env, by string) (autosync.Pause, error) {
	if s == nil || !s.envs[env] {
		return autosync.Pause{}, fmt.Errorf("autosync: environment %q has no autoSync: there is nothing to resume", env)
	}
	p, err := s.pauses.Resume(ctx, env, by)
	if err == nil {
		s.loop.Reset(env)
	}
	return p, err
}

// autoSyncAdapters are the loop's Heads, Live, Deployer, Drift and
// Recorder over the server's index, runner, history and audit trail.
type autoSyncAdapters struct {
	d    autoSyncDeps
	seen *autosync.DriftSeen

	mu sync.Mutex
	// fields are the drifted fields of each object the last Drifted call
	// found, by environment and ref ("spec.replicas (kubectl, 5)"), for
	// the record of a heal.
	fields map[string]map[string]string
}

// Head is the branch head of env's source (envsource.Index.Head).
func (a *autoSyncAdapters) Head(ctx context.Context, env string) (string, error) {
	return a.d.index.Head(ctx, env)
}

// Live is the commit of env's last apply that applied, from the plan
// history.
func (a *autoSyncAdapters) Live(ctx context.Context, env string) (string, time.Time, error) {
	e, ok, err := a.d.store.LastApplied(ctx, env)
	if err != nil || !ok {
		return "", time.Time{}, err
	}
	return e.Commit, e.Time, nil
}

// Deploy starts one guarded run of env (envrun.Runner.Deploy, actor
// auto-sync) and waits for its end: applied, blocked (its blockers),
// refused (a lock, a freeze, another run) or failed. When ctx ends first
// (the Lease lost) it returns ctx's error; the run itself goes on to its
// end under the server's context, as any run does.
func (a *autoSyncAdapters) Deploy(ctx context.Context, env string, req autosync.Request) (autosync.Result, error) {
	d := envrun.DeployRequest{User: audit.EngineSubject, Actor: audit.EngineActor(), Trigger: string(req.Trigger), Commit: req.Commit}
	if req.Trigger == autosync.TriggerSelfHeal {
		d.Force = req.Objects
	}
	run, err := a.d.runner.Deploy(env, d)
	if err != nil {
		return autosync.Result{}, err
	}
	for {
		snap := run.Snapshot()
		if snap.Done {
			return deployResult(run.ID, snap), nil
		}
		select {
		case <-snap.Changed:
		case <-ctx.Done():
			return autosync.Result{RunID: run.ID}, fmt.Errorf("run %s: %w", run.ID, ctx.Err())
		}
	}
}

// deployResult is how the run id ended, for the loop.
func deployResult(id string, snap envrun.Snapshot) autosync.Result {
	res := autosync.Result{RunID: id, Outcome: autosync.OutcomeFailed}
	if snap.Report != nil {
		res.Commit = snap.Report.DeployApply.Source.Commit
	}
	var ref *deployplan.RefusalError
	switch {
	case snap.Err == nil && snap.Report != nil && snap.Report.Status() == deployplan.StatusApplied:
		res.Outcome = autosync.OutcomeApplied
	case snap.Report != nil && snap.Report.Status() == deployplan.StatusBlocked:
		res.Outcome = autosync.OutcomeBlocked
		for _, b := range snap.Report.DeployApply.RemainingBlockers {
			res.Blockers = append(res.Blockers, b.ID+": "+b.Message)
		}
	case errors.As(snap.Err, &ref):
		res.Outcome = autosync.OutcomeRefused
		res.Blockers = []string{ref.Reason}
	}
	return res
}

// Drifted lists env's drifted objects (deployplan.Drifted over the
// objects the index last rendered: the head's, refreshed after each run),
// each with when it was first seen drifted.
func (a *autoSyncAdapters) Drifted(ctx context.Context, env string) ([]autosync.DriftedObject, error) {
	e, err := a.d.cfg.Env(env)
	if err != nil {
		return nil, err
	}
	rc, err := a.d.envConfig(e)
	if err != nil {
		return nil, fmt.Errorf("the cluster of environment %s: %w", env, err)
	}
	// The index's last good render: none yet, or one that renders nothing
	// in the namespace (a blocked head), is no drift to heal; it is never
	// an error, which would stop auto-sync too.
	objs := a.d.index.Objects(env)
	drifted, err := deployplan.Drifted(ctx, e, rc, objs)
	if err != nil {
		return nil, err
	}
	refs := make([]string, 0, len(drifted))
	fields := map[string]string{}
	for _, o := range drifted {
		refs = append(refs, o.Ref)
		var fs []string
		for _, f := range o.Fields {
			fs = append(fs, fmt.Sprintf("%s = %s (by %s)", f.Path, f.Live, f.Manager))
		}
		fields[o.Ref] = textfmt.Cut(strings.Join(fs, ", "), 300)
	}
	a.mu.Lock()
	a.fields[env] = fields
	a.mu.Unlock()
	return a.seen.Observe(env, refs, time.Now()), nil
}

// Record writes the audit record of one automatic run (verb auto-sync or
// self-heal, actor auto-sync). The apply of a run that applied has its
// own apply record from the engine, with the manifests; this one says
// why the run was started and how it ended: the commit, the run, the
// blockers of a blocked plan, and for a heal what was put back.
func (a *autoSyncAdapters) Record(ctx context.Context, r autosync.Record) error {
	if a.d.appendRecord == nil {
		return nil
	}
	e, err := a.d.cfg.Env(r.Env)
	if err != nil {
		return err
	}
	a.d.appendRecord(ctx, a.record(e, r))
	return nil
}

// record is the audit record of r, a run of environment e.
func (a *autoSyncAdapters) record(e *deployplan.Environment, r autosync.Record) audit.Record {
	rec := audit.Record{Time: r.Time, Actor: audit.EngineActor(), Verb: audit.VerbAutoSync, Cluster: envCluster(e, a.d.clusters),
		Environment: e.Name, Namespace: e.Namespace, Commit: r.Commit, Blockers: append([]string{}, r.Blockers...)}
	switch r.Outcome {
	case autosync.OutcomeApplied:
		rec.Outcome = audit.OutcomeSucceeded
	case autosync.OutcomeBlocked, autosync.OutcomeRefused:
		rec.Outcome = audit.OutcomeRefused
	default:
		rec.Outcome = audit.OutcomeFailed
	}
	msg := fmt.Sprintf("%s of %s at %s (replica %s, run %s): %s", r.Trigger, e.Name, textfmt.ShortSHA(r.Commit), r.Identity, r.RunID, r.Outcome)
	if r.Outcome == autosync.OutcomeBlocked && r.Trigger == autosync.TriggerAutoSync {
		msg += ": the plan has blockers, nothing was applied; this head is not tried again until a new commit or a person acts"
	}
	if r.Error != "" {
		msg += ": " + r.Error
	}
	if r.Trigger == autosync.TriggerSelfHeal {
		rec.Verb = audit.VerbSelfHeal
		a.mu.Lock()
		fields := a.fields[e.Name]
		var healed []string
		for _, ref := range r.Objects {
			healed = append(healed, ref+" "+fields[ref])
			if kind, name, ok := strings.Cut(ref, "/"); ok {
				rec.Objects = append(rec.Objects, a.objectOf(e, kind, name))
			}
		}
		a.mu.Unlock()
		msg += "; put back: " + strings.Join(healed, "; ")
	}
	rec.Message = msg
	return rec
}

// objectOf names the rendered object kind/name of environment e (its
// group and version from the index).
func (a *autoSyncAdapters) objectOf(e *deployplan.Environment, kind, name string) audit.Object {
	for _, o := range a.d.index.Objects(e.Name) {
		if o.GetKind() == kind && o.GetName() == name {
			return audit.ObjectOf(o)
		}
	}
	return audit.Object{Kind: kind, Namespace: e.Namespace, Name: name}
}

// startAutoSync builds the loop over d and, when an environment has
// auto-sync on, runs it until ctx ends and hands it to the pages.
func startAutoSync(ctx context.Context, hopts *handlers.Options, d autoSyncDeps) error {
	as, err := newAutoSync(d)
	if err != nil {
		return fmt.Errorf("--environments: %w", err)
	}
	if as == nil {
		return nil
	}
	d.log.Info("auto-sync", "environments", len(as.envs), "lease", d.namespace+"/"+autosync.LeaseName, "identity", d.identity)
	go as.run(ctx, d.log)
	hopts.AutoSync = as
	return nil
}

// auditAppender stores a record in store, within 10s even when the
// caller's context ended; nil when there is no store.
func auditAppender(store *audit.Store) func(ctx context.Context, rec audit.Record) {
	if store == nil {
		return nil
	}
	return func(ctx context.Context, rec audit.Record) {
		appendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_, _ = store.Append(appendCtx, rec)
	}
}
