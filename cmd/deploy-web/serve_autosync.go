package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/autosync"
	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/handlers"
	"github.com/hanzoai/deploy-web/internal/sign"
	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/planstore"
)

// autoSyncDeps is what the auto-sync loop of serve is wired to.
type autoSyncDeps struct {
	cfg *envconfig.Config
	// index reads the branch heads and the rendered objects.
	index autoSyncIndex
	// runner runs the guarded deploys; store is its plan history (the
	// commit live).
	runner autoSyncRunner
	store  *planstore.Store
	// envConfig reaches an environment's cluster (the drift reads).
	envConfig func(env *envconfig.Environment) (*rest.Config, error)
	// kube holds the Lease and the pauses in namespace (deploy-web's
	// own); identity is this replica's.
	kube      kubernetes.Interface
	namespace string
	identity  string
	// keys sign the pauses (the audit store's key; required).
	keys sign.Keys
	// appendRecord stores an audit record (nil: none kept); records lists
	// them (nil: the commit live is read from the plan history alone).
	appendRecord func(ctx context.Context, rec audit.Record)
	records      audit.Lister
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
func autoSyncEnvironments(cfg *envconfig.Config) []autosync.Environment {
	var out []autosync.Environment
	for _, e := range cfg.Environments {
		if e.AutoSync == nil || !e.AutoSync.Enabled || e.Protected {
			continue
		}
		out = append(out, autosync.Environment{Name: e.Name, Enabled: true, SelfHeal: e.AutoSync.SelfHeal.On,
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
	a := &autoSyncAdapters{d: d, seen: autosync.NewDriftSeen(), fields: map[string]map[string]string{}, cannot: map[string]map[string]bool{}}
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
	// cannot are, by environment, the drifted fields (FieldHeal.Key) a
	// heal reported it cannot heal: left out of the drift until they
	// change, so they are reported once, not healed every window.
	cannot map[string]map[string]bool
}

// Head is the branch head of env's source (envsource.Index.Head).
func (a *autoSyncAdapters) Head(ctx context.Context, env string) (string, error) {
	return a.d.index.Head(ctx, env)
}

// Live is the commit of env's last apply that applied, whoever made it:
// from the audit trail (audit.LastApplied: the console's, auto-sync's and
// the command line's applies), else the plan history.
func (a *autoSyncAdapters) Live(ctx context.Context, env string) (string, time.Time, error) {
	if a.d.records != nil {
		rec, ok, err := audit.LastApplied(ctx, a.d.records, env)
		if err != nil || !ok {
			return "", time.Time{}, err
		}
		return rec.Commit, rec.Time, nil
	}
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
	if req.Trigger == autosync.TriggerSelfHeal {
		return a.heal(ctx, env, req)
	}
	return a.run(ctx, env, envrun.DeployRequest{User: audit.EngineSubject, Actor: audit.EngineActor(), Trigger: string(req.Trigger), Commit: req.Commit})
}

// heal puts env's drifted objects (req.Objects) back: each drifted field
// git sets by one run whose apply forces those objects only; each field
// git does not set, with selfHeal prune: fields, by a write that removes
// exactly that field (deployplan.RemoveFields); the others are "cannot
// heal: owned by X". What changed is checked against the live objects
// after the writes (deployplan.VerifyHeal); a field that cannot be healed
// is remembered and left out of the drift until it changes, so it is
// reported once. A heal that changes nothing and finds nothing new says
// so (NoChange: no record).
func (a *autoSyncAdapters) heal(ctx context.Context, env string, req autosync.Request) (autosync.Result, error) {
	e, err := a.d.cfg.Env(env)
	if err != nil {
		return autosync.Result{}, err
	}
	rc, err := a.d.envConfig(e)
	if err != nil {
		return autosync.Result{}, fmt.Errorf("the cluster of environment %s: %w", env, err)
	}
	objs := a.d.index.Objects(env)
	heals, err := deployplan.PlanHeal(ctx, e, rc, objs, req.Objects, e.AutoSync != nil && e.AutoSync.SelfHeal.PrunesFields())
	if err != nil {
		return autosync.Result{}, err
	}
	a.mu.Lock()
	heals = slices.DeleteFunc(heals, func(h deployplan.FieldHeal) bool { return a.cannot[env][h.Key()] })
	a.mu.Unlock()
	if heals, err = deployplan.RemoveFields(ctx, e, rc, objs, heals); err != nil {
		return autosync.Result{}, err
	}
	res := autosync.Result{Outcome: autosync.OutcomeApplied, Commit: req.Commit}
	var force []string
	for _, h := range heals {
		if h.Action == deployplan.HealPutBack && !slices.Contains(force, h.Ref) {
			force = append(force, h.Ref)
		}
	}
	if len(force) > 0 {
		if res, err = a.run(ctx, env, envrun.DeployRequest{User: audit.EngineSubject, Actor: audit.EngineActor(), Trigger: string(req.Trigger), Commit: req.Commit, Force: force}); err != nil {
			return res, err
		}
	}
	if heals, err = deployplan.VerifyHeal(ctx, e, rc, objs, heals); err != nil {
		return res, err
	}
	a.mu.Lock()
	if a.cannot[env] == nil {
		a.cannot[env] = map[string]bool{}
	}
	for _, h := range heals {
		if h.Action == deployplan.HealCannot {
			a.cannot[env][h.Key()] = true
			res.CannotHeal = append(res.CannotHeal, h.String())
		} else {
			res.Healed = append(res.Healed, h.String())
		}
	}
	a.mu.Unlock()
	res.NoChange = len(res.Healed) == 0 && len(res.CannotHeal) == 0
	if len(res.Healed) == 0 && len(res.CannotHeal) > 0 && res.Outcome == autosync.OutcomeApplied {
		res.Outcome, res.Blockers = autosync.OutcomeRefused, res.CannotHeal
	}
	return res, nil
}

// run starts one guarded run of env and waits for its end (Deploy).
func (a *autoSyncAdapters) run(ctx context.Context, env string, d envrun.DeployRequest) (autosync.Result, error) {
	run, err := a.d.runner.Deploy(env, d)
	if errors.Is(err, envrun.ErrStopping) {
		return autosync.Result{}, autosync.ErrNotStarted
	}
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
	var interrupted *deployplan.InterruptedError
	switch {
	case errors.As(snap.Err, &interrupted):
		res.Outcome = autosync.OutcomeInterrupted
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
	a.mu.Lock()
	cannot, kept := a.cannot[env], map[string]bool{}
	a.mu.Unlock()
	for _, o := range drifted {
		var fs []string
		for _, f := range o.Fields {
			// A field a heal could not heal, unchanged since: reported
			// once, not a reason for another heal.
			if k := (deployplan.FieldHeal{Ref: o.Ref, Field: f}).Key(); cannot[k] {
				kept[k] = true
				continue
			}
			fs = append(fs, fmt.Sprintf("%s = %s (by %s)", f.Path, f.Live, f.Manager))
		}
		if len(fs) == 0 {
			continue
		}
		refs = append(refs, o.Ref)
		fields[o.Ref] = textfmt.Cut(strings.Join(fs, ", "), 300)
	}
	a.mu.Lock()
	a.fields[env] = fields
	a.cannot[env] = kept // a field that changed or went is forgotten
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
func (a *autoSyncAdapters) record(e *envconfig.Environment, r autosync.Record) audit.Record {
	rec := audit.Record{Time: r.Time, Actor: audit.EngineActor(), Verb: audit.VerbAutoSync, Cluster: envCluster(e, a.d.clusters),
		Environment: e.Name, Namespace: e.Namespace, Commit: r.Commit, Blockers: append([]string{}, r.Blockers...)}
	switch r.Outcome {
	case autosync.OutcomeApplied:
		rec.Outcome = audit.OutcomeSucceeded
	case autosync.OutcomeBlocked, autosync.OutcomeRefused:
		rec.Outcome = audit.OutcomeRefused
	case autosync.OutcomeInterrupted:
		rec.Outcome = audit.OutcomeInterrupted
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
		switch {
		case len(r.Healed) > 0 || len(r.CannotHeal) > 0:
			// What the heal changed, checked against the live objects.
			if len(r.Healed) > 0 {
				msg += "; changed: " + strings.Join(r.Healed, "; ")
			}
			if len(r.CannotHeal) > 0 {
				msg += "; " + strings.Join(r.CannotHeal, "; ")
			}
		default:
			msg += "; put back: " + strings.Join(healed, "; ")
		}
	}
	rec.Message = msg
	return rec
}

// objectOf names the rendered object kind/name of environment e (its
// group and version from the index).
func (a *autoSyncAdapters) objectOf(e *envconfig.Environment, kind, name string) audit.Object {
	for _, o := range a.d.index.Objects(e.Name) {
		if o.GetKind() == kind && o.GetName() == name {
			return audit.ObjectOf(o)
		}
	}
	return audit.Object{Kind: kind, Namespace: e.Namespace, Name: name}
}

// startAutoSync builds the loop over d and, when an environment has
// auto-sync on, runs it in held until ctx ends and hands it to the pages.
func startAutoSync(ctx context.Context, held *leaseHolders, hopts *handlers.Options, d autoSyncDeps) error {
	as, err := newAutoSync(d)
	if err != nil {
		return fmt.Errorf("--environments: %w", err)
	}
	if as == nil {
		return nil
	}
	d.log.Info("auto-sync", "environments", len(as.envs), "lease", d.namespace+"/"+autosync.LeaseName, "identity", d.identity)
	held.Go(func() { as.run(ctx, d.log) })
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

// recordLister is store as an audit.Lister; nil when there is no store (a
// nil *audit.Store in the interface would not read as nil).
func recordLister(store *audit.Store) audit.Lister {
	if store == nil {
		return nil
	}
	return store
}
