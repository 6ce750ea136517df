// Package envsource keeps, for every environment of a deploy config, the
// objects its manifests render, so the resource panel can diff a live object
// against what git says it should be (desiredSource "git").
//
// An Index renders each environment with deployplan.Render (the same
// kustomize render a plan uses) when Run starts, then every interval, and
// whenever the console calls Refresh after a plan or an apply. A render that
// fails is logged and reported by Status; the environment's last good render
// stays in the index, so a broken commit never blanks the diffs.
//
// What is indexed:
//   - the rendered objects of the environment's namespace (the only one a
//     plan may write), except core Secrets, which are never indexed (their
//     values must not reach the dashboard); an object for another namespace
//     is left out and counted in Status (Outside), so a repository cannot
//     make the console show a desired state for a namespace its
//     environment does not own;
//   - under group, kind, namespace and name; an object the kustomization
//     leaves without a namespace is indexed in the environment's namespace,
//     as a plan would apply it there.
//
// A render runs under a deadline (renderTimeout): when it passes, Refresh
// returns an error and the environment's render lock is free again, even
// if the render itself has not returned yet (its result is then dropped).
// The render is told through its context and stops at its next file
// access (deployplan reads every file through a context-checking file
// system).
//
// Memory: one render runs at a time in the process, an abandoned one
// included (it holds the render slot until it returns), so renders never
// pile up; what one render may hold is bounded by the environment's limits
// (limits.maxYAMLNodes, ~1 KiB of heap per node in kustomize, and the
// YAML budget of every file it reads: see deployplan's budgetFS).
//
// When two environments render the same object (two environments of one
// namespace), Lookup answers with the first of them in config order.
package envsource

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/deployplan"
	"github.com/hanzoai/deploy-web/envconfig"
)

// Desired is an environment's rendered manifest for one object.
type Desired struct {
	// Object is a copy of the rendered object; the caller may change it.
	Object *unstructured.Unstructured
	// Environment is the environment whose manifests render the object.
	Environment string
	// Repo is the source repository without credentials ("" for a local
	// folder source), Ref the configured branch, tag or commit ("" for a
	// local folder), Commit the commit rendered ("" for a local folder
	// outside git) and Path the kustomize folder as configured.
	Repo, Ref, Commit, Path string
}

// EnvStatus is the state of one environment's renders.
type EnvStatus struct {
	Environment string `json:"environment"`
	Namespace   string `json:"namespace"`
	// Repo (without credentials), Ref and Path describe the source.
	Repo string `json:"repo,omitempty"`
	Ref  string `json:"ref,omitempty"`
	Path string `json:"path"`
	// Rendered is when the last good render finished (zero: never).
	Rendered time.Time `json:"rendered"`
	// Commit is the commit of the last good render.
	Commit string `json:"commit,omitempty"`
	// Objects counts the indexed objects of the last good render (Secrets
	// are not indexed and not counted).
	Objects int `json:"objects"`
	// Outside counts the objects of the last good render for another
	// namespace than the environment's: they are not indexed.
	Outside int `json:"outside,omitempty"`
	// Attempted is when the last render, good or not, finished.
	Attempted time.Time `json:"attempted"`
	// Error is the last render's error; "" when it succeeded.
	Error string `json:"error,omitempty"`
	// Warnings are the last good render's warnings: a Helm chart rendered
	// for the configured or default Kubernetes version (the index asks no
	// cluster), a chart that calls lookup or draws random values.
	Warnings []string `json:"warnings,omitempty"`
	// Head is the branch head the last Head call read ("" before one),
	// at HeadRead; it may be ahead of Commit until the next render.
	Head     string    `json:"head,omitempty"`
	HeadRead time.Time `json:"headRead,omitzero"`
}

// DefaultInterval is used by New for an interval <= 0.
const DefaultInterval = time.Minute

// renderTimeout bounds one render (a clone of a remote repository).
const renderTimeout = 2 * time.Minute

// Index is the rendered desired state of every environment. It is safe for
// concurrent use.
type Index struct {
	log      *slog.Logger
	interval time.Duration
	timeout  time.Duration // one render's deadline
	render   func(context.Context, *envconfig.Environment) (*deployplan.Rendered, error)
	head     func(context.Context, *envconfig.Environment) (string, error)
	// slot holds one token while a render runs, until it returns (an
	// abandoned render keeps it): one render at a time in the process.
	slot chan struct{}

	envs []*envState // config order; the slice itself never changes

	mu sync.RWMutex // guards every envState's index and status
}

type envState struct {
	env  *envconfig.Environment
	repo string // redacted

	renderMu sync.Mutex // one render of this environment at a time

	objects map[objKey]*unstructured.Unstructured
	commit  string
	status  EnvStatus
}

type objKey struct{ group, kind, namespace, name string }

// New returns an index of cfg's environments; nothing is rendered until Run
// or Refresh. A nil log discards; an interval <= 0 is DefaultInterval.
func New(cfg *envconfig.Config, log *slog.Logger, interval time.Duration) *Index {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	ix := &Index{log: log, interval: interval, timeout: renderTimeout, render: deployplan.Render, head: deployplan.SourceHead, slot: make(chan struct{}, 1)}
	if cfg == nil {
		return ix
	}
	for i := range cfg.Environments {
		e := &cfg.Environments[i]
		st := &envState{env: e, repo: envconfig.RedactURL(e.Source.Repo)}
		st.status = EnvStatus{Environment: e.Name, Namespace: e.Namespace, Repo: st.repo, Ref: e.Source.Ref, Path: e.Source.Path}
		ix.envs = append(ix.envs, st)
	}
	return ix
}

// Run renders every environment now and then every interval, until ctx
// ends. Errors are logged and kept in Status; they do not stop the loop.
func (ix *Index) Run(ctx context.Context) {
	t := time.NewTicker(ix.interval)
	defer t.Stop()
	for {
		for _, st := range ix.envs {
			if ctx.Err() != nil {
				return
			}
			_ = ix.refresh(ctx, st) // logged and recorded
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Refresh re-renders one environment now. On error the environment keeps
// its last good render and the error is also recorded in Status.
func (ix *Index) Refresh(ctx context.Context, env string) error {
	for _, st := range ix.envs {
		if st.env.Name == env {
			return ix.refresh(ctx, st)
		}
	}
	return fmt.Errorf("envsource: no environment %q", env)
}

func (ix *Index) refresh(ctx context.Context, st *envState) error {
	st.renderMu.Lock()
	defer st.renderMu.Unlock()
	r, err := ix.renderBounded(ctx, st.env)
	var objs map[objKey]*unstructured.Unstructured
	outside := 0
	if err == nil {
		objs, outside, err = index(r, st.env.Namespace)
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("envsource: %s: %w", st.env.Name, ctx.Err()) // shutting down: not a render failure
	}
	now := time.Now()

	ix.mu.Lock()
	st.status.Attempted = now
	if err != nil {
		st.status.Error = err.Error()
		ix.mu.Unlock()
		ix.log.Warn("render environment", "env", st.env.Name, "source", st.sourceLabel(), "err", err)
		return fmt.Errorf("envsource: %s: %w", st.env.Name, err)
	}
	changed := st.commit != r.Commit || len(st.objects) != len(objs) || !slices.Equal(st.status.Warnings, r.Warnings)
	st.objects, st.commit = objs, r.Commit
	st.status.Error, st.status.Warnings = "", slices.Clone(r.Warnings)
	st.status.Rendered, st.status.Commit, st.status.Objects, st.status.Outside = now, r.Commit, len(objs), outside
	ix.mu.Unlock()
	if outside > 0 && changed {
		ix.log.Warn("rendered objects outside the environment's namespace are not indexed", "env", st.env.Name, "namespace", st.env.Namespace, "outside", outside)
	}
	if changed {
		ix.log.Info("rendered environment", "env", st.env.Name, "source", st.sourceLabel(), "commit", r.Commit, "objects", len(objs))
		for _, w := range r.Warnings {
			ix.log.Warn("render environment", "env", st.env.Name, "warning", w)
		}
	}
	return nil
}

// renderBounded renders env under the index's deadline, once the render
// slot is free (waiting for it counts against the deadline). When the
// deadline passes first it returns at once; the render, told through its
// context, stops at its next file access and its result is dropped; it
// holds the slot until then.
func (ix *Index) renderBounded(ctx context.Context, env *envconfig.Environment) (*deployplan.Rendered, error) {
	rctx, cancel := context.WithTimeout(ctx, ix.timeout)
	defer cancel()
	select {
	case ix.slot <- struct{}{}:
	case <-rctx.Done():
		if ctx.Err() == nil {
			return nil, fmt.Errorf("render did not start within %s: an earlier render, abandoned at its deadline, has not stopped yet", ix.timeout)
		}
		return nil, rctx.Err()
	}
	type result struct {
		r   *deployplan.Rendered
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() { <-ix.slot }()
		r, err := ix.render(rctx, env)
		done <- result{r, err}
	}()
	select {
	case res := <-done:
		return res.r, res.err
	case <-rctx.Done():
		if ctx.Err() == nil {
			return nil, fmt.Errorf("render did not finish within %s", ix.timeout)
		}
		return nil, rctx.Err()
	}
}

// index keys the rendered objects of namespace ns; it returns how many
// were for another namespace (left out).
func index(r *deployplan.Rendered, ns string) (map[objKey]*unstructured.Unstructured, int, error) {
	out := make(map[objKey]*unstructured.Unstructured, len(r.Objects))
	outside := 0
	for _, o := range r.Objects {
		gvk := o.GroupVersionKind()
		if gvk.Group == "" && gvk.Kind == "Secret" {
			continue // never indexed
		}
		if n := o.GetNamespace(); n != "" && n != ns {
			outside++
			continue
		}
		k := objKey{group: gvk.Group, kind: gvk.Kind, namespace: o.GetNamespace(), name: o.GetName()}
		if k.namespace == "" {
			k.namespace = ns
			o = o.DeepCopy()
			o.SetNamespace(ns)
		}
		if _, dup := out[k]; dup {
			return nil, 0, errors.New("the render has two objects " + k.String())
		}
		out[k] = o
	}
	return out, outside, nil
}

func (k objKey) String() string {
	g := k.group
	if g == "" {
		g = "core"
	}
	return fmt.Sprintf("%s/%s %s/%s", g, k.kind, k.namespace, k.name)
}

// Lookup returns the rendered manifest of an object (group "" for the core
// group), from the first environment of the object's namespace rendering
// it, in config order. Secrets are never found.
func (ix *Index) Lookup(group, kind, namespace, name string) (Desired, bool) {
	k := objKey{group: group, kind: kind, namespace: namespace, name: name}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var pick *envState
	var obj *unstructured.Unstructured
	for _, st := range ix.envs {
		o, ok := st.objects[k]
		if !ok {
			continue
		}
		pick, obj = st, o
		break
	}
	if pick == nil {
		return Desired{}, false
	}
	return Desired{
		Object:      obj.DeepCopy(),
		Environment: pick.env.Name,
		Repo:        pick.repo,
		Ref:         pick.env.Source.Ref,
		Commit:      pick.commit,
		Path:        pick.env.Source.Path,
	}, true
}

// Head reads the commit env's source ref names now (its branch head,
// deployplan.SourceHead: the refs alone, no render) and keeps it in
// Status. A local folder source has none ("").
func (ix *Index) Head(ctx context.Context, env string) (string, error) {
	st := ix.env(env)
	if st == nil {
		return "", fmt.Errorf("envsource: no environment %q", env)
	}
	h, err := ix.head(ctx, st.env)
	if err != nil {
		return "", fmt.Errorf("envsource: %s: branch head: %w", env, err)
	}
	ix.mu.Lock()
	st.status.Head, st.status.HeadRead = h, time.Now()
	ix.mu.Unlock()
	return h, nil
}

// Objects returns copies of env's indexed objects (its last good render,
// Secrets left out), sorted by kind and name; nil before a render.
func (ix *Index) Objects(env string) []*unstructured.Unstructured {
	st := ix.env(env)
	if st == nil {
		return nil
	}
	ix.mu.RLock()
	out := make([]*unstructured.Unstructured, 0, len(st.objects))
	for _, o := range st.objects {
		out = append(out, o.DeepCopy())
	}
	ix.mu.RUnlock()
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		return cmp.Or(strings.Compare(a.GetKind(), b.GetKind()), strings.Compare(a.GetName(), b.GetName()))
	})
	return out
}

// env is the state of the environment named name, nil when none.
func (ix *Index) env(name string) *envState {
	for _, st := range ix.envs {
		if st.env.Name == name {
			return st
		}
	}
	return nil
}

// Status returns every environment's render state, in config order.
func (ix *Index) Status() []EnvStatus {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([]EnvStatus, len(ix.envs))
	for i, st := range ix.envs {
		out[i] = st.status
	}
	return out
}

// sourceLabel reads only fields that never change after New.
func (st *envState) sourceLabel() string {
	if st.repo == "" {
		return st.env.Source.Path
	}
	return st.repo + "@" + st.env.Source.Ref + ":" + st.env.Source.Path
}
