package autosync

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/internal/cmcas"
	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// The ConfigMap that holds the pauses, in deploy-web's own namespace.
const (
	PausesConfigMap = "deploy-web-autosync-pauses"
	// PausesKey is the ConfigMap key of the pauses' JSON.
	PausesKey = "pauses.json"
	// labelKind marks the ConfigMap (freeze.LabelKind, the label of
	// deploy-web's own ConfigMaps).
	labelKind  = "deploy-web.hanzo.ai/kind"
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
// safe for concurrent use by many replicas: every write is a
// compare-and-swap on the ConfigMap's resourceVersion.
type Pauses struct {
	cms       typedcorev1.ConfigMapsGetter
	namespace string
	now       func() time.Time
}

// NewPauses returns the store of the pauses ConfigMap in namespace
// (deploy-web's own); now is the clock (time.Now when nil).
func NewPauses(cms typedcorev1.ConfigMapsGetter, namespace string, now func() time.Time) *Pauses {
	if now == nil {
		now = time.Now
	}
	return &Pauses{cms: cms, namespace: namespace, now: now}
}

// List returns the stored pauses, one per environment, active or not. No
// ConfigMap is no pause; a ConfigMap that does not decode (an edit by
// hand) is an error, and the loop then acts on no environment.
func (s *Pauses) List(ctx context.Context) ([]Pause, error) {
	raw, ok, err := cmcas.Get(ctx, s.cms, s.key())
	if err != nil || !ok {
		return nil, err
	}
	return s.decode(raw)
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
		return Pause{}, fmt.Errorf("autosync: resume %q: who resumes must be named (one line, at most %d bytes)", env, maxByBytes)
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

// update applies change to the stored pauses by compare-and-swap on the
// ConfigMap (cmcas.Update: a conflict starts over from a fresh read).
func (s *Pauses) update(ctx context.Context, change func([]Pause) ([]Pause, error)) error {
	where := fmt.Sprintf("ConfigMap %s/%s", s.namespace, PausesConfigMap)
	return cmcas.Update(ctx, s.cms, s.key(), func(raw string, ok bool) (string, error) {
		var cur []Pause
		if ok {
			var err error
			if cur, err = s.decode(raw); err != nil {
				return "", err
			}
		}
		next, err := change(cur)
		if err != nil {
			return "", err
		}
		data, err := json.Marshal(pausesJSON{Pauses: next})
		if err != nil {
			return "", fmt.Errorf("autosync: encode pauses: %w", err)
		}
		if len(next) > MaxPauses || len(data) > maxPausesBytes {
			return "", fmt.Errorf("autosync: %s is full (%d pauses, %d bytes; at most %d and %d)", where, len(next), len(data), MaxPauses, maxPausesBytes)
		}
		return string(data), nil
	})
}

// key is where the pauses are stored.
func (s *Pauses) key() cmcas.Key {
	return cmcas.Key{Owner: "autosync", Namespace: s.namespace, Name: PausesConfigMap, Key: PausesKey,
		Labels: map[string]string{labelKind: kindPauses}, FieldManager: appcr.FieldManager}
}

// decode reads the stored pauses strictly (unknown fields are errors).
func (s *Pauses) decode(raw string) ([]Pause, error) {
	where := fmt.Sprintf("ConfigMap %s/%s key %s", s.namespace, PausesConfigMap, PausesKey)
	if len(raw) > maxPausesBytes+(100<<10) {
		return nil, fmt.Errorf("autosync: %s: %d bytes, more than the store writes: fix it with kubectl edit", where, len(raw))
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	var st pausesJSON
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("autosync: %s: %w (fix it with kubectl edit, or delete the ConfigMap to clear every pause)", where, err)
	}
	return st.Pauses, nil
}
