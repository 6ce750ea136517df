package autosync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/hanzoai/deploy-web/internal/cmstore"
	"github.com/hanzoai/deploy-web/internal/sign"
	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// The ConfigMap that holds the pauses, in deploy-web's own namespace.
const (
	PausesConfigMap = "deploy-web-autosync-pauses"
	// PausesKey is the ConfigMap key of the pauses' JSON.
	PausesKey  = "pauses.json"
	kindPauses = "autosync-pauses"
)

// Bounds of the store. It keeps one entry per environment (the last
// pause, active, lapsed or resumed), so it stays small without pruning.
const (
	MaxPauses      = 500
	maxPausesBytes = 900 << 10
)

// ErrNotPaused is returned by Resume for an environment with no active
// pause.
var ErrNotPaused = errors.New("autosync: the environment is not paused")

// pausesJSON is the JSON of PausesKey.
type pausesJSON struct {
	Pauses []Pause `json:"pauses"`
}

// Pauses reads and writes the pauses ConfigMap in one namespace. It is
// safe for concurrent use by many replicas: every write is a signed
// compare-and-swap on the ConfigMap's resourceVersion (internal/cmstore).
type Pauses struct {
	doc *cmstore.Store[pausesJSON]
	now func() time.Time
}

// NewPauses returns the store of the pauses ConfigMap in namespace
// (deploy-web's own), signed with keys (the audit records' key:
// audit.Store); now is the clock (time.Now when nil).
func NewPauses(cms typedcorev1.ConfigMapsGetter, namespace string, keys sign.Keys, now func() time.Time) *Pauses {
	if now == nil {
		now = time.Now
	}
	return &Pauses{now: now, doc: cmstore.New[pausesJSON](cms, keys, cmstore.Spec{
		Owner: "autosync", What: "auto-sync pauses", Namespace: namespace, Name: PausesConfigMap, Key: PausesKey,
		Kind: kindPauses, MaxBytes: maxPausesBytes})}
}

// List returns the stored pauses, one per environment, active or not. No
// ConfigMap is no pause; pauses edited by hand (*cmstore.TamperedError)
// are an error, and the loop then acts on no environment: auto-sync stays
// paused everywhere until an operator mends the store.
func (s *Pauses) List(ctx context.Context) ([]Pause, error) {
	st, _, err := s.doc.Get(ctx)
	return st.Pauses, err
}

// Pause stops auto-sync of env until until, for reason (one line, at most
// MaxReasonBytes), by by; until must be in the future and at most MaxPause
// from now. It replaces the environment's earlier pause, if any.
func (s *Pauses) Pause(ctx context.Context, env, reason string, until time.Time, by string) (Pause, error) {
	now := s.now()
	// Typed text others read, without format characters (bidi controls,
	// zero-width); a line break stays, for validate to refuse.
	p := Pause{Env: env, Reason: textfmt.Clean(reason, true), Until: until.UTC(), By: textfmt.Clean(by, false), At: now.UTC().Truncate(time.Second)}
	if err := p.validate(now); err != nil {
		return Pause{}, err
	}
	err := s.update(ctx, func(ps []Pause) ([]Pause, error) {
		ps = slices.DeleteFunc(ps, func(o Pause) bool { return o.Env == env })
		return append(ps, p), nil
	})
	if err != nil {
		return Pause{}, err
	}
	return p, nil
}

// Resume ends env's active pause now, recording by, and returns it;
// ErrNotPaused when env has none.
func (s *Pauses) Resume(ctx context.Context, env, by string) (Pause, error) {
	if by == "" || len(by) > maxByBytes || !oneLine(by) {
		return Pause{}, pauseErrorf("resume %q: who resumes must be named (one line, at most %d bytes)", env, maxByBytes)
	}
	var resumed Pause
	err := s.update(ctx, func(ps []Pause) ([]Pause, error) {
		now := s.now()
		i := slices.IndexFunc(ps, func(p Pause) bool { return p.Env == env && p.Active(now) })
		if i < 0 {
			return nil, fmt.Errorf("%w: %q", ErrNotPaused, env)
		}
		ps[i].ResumedBy, ps[i].ResumedAt = by, now.UTC().Truncate(time.Second)
		resumed = ps[i]
		return ps, nil
	})
	return resumed, err
}

// update applies change to the stored pauses by a signed
// compare-and-swap (a conflict starts over from a fresh read).
func (s *Pauses) update(ctx context.Context, change func([]Pause) ([]Pause, error)) error {
	return s.doc.Update(ctx, func(cur pausesJSON) (pausesJSON, error) {
		next, err := change(cur.Pauses)
		if err != nil {
			return pausesJSON{}, err
		}
		if len(next) > MaxPauses {
			return pausesJSON{}, fmt.Errorf("autosync: the pauses are full (%d; at most %d)", len(next), MaxPauses)
		}
		return pausesJSON{Pauses: next}, nil
	})
}
