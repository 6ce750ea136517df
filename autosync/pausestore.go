package autosync

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
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
	// fieldManager is deploy-web's field manager (deployplan.FieldManager).
	fieldManager = "deploy-web"
)

// Bounds of the store. It keeps one entry per environment (the last
// pause, active, lapsed or resumed), so it stays small without pruning.
const (
	MaxPauses       = 500
	maxPausesBytes  = 900 << 10
	maxPauseAttempt = 16
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
	cm, err := s.get(ctx)
	if err != nil || cm == nil {
		return nil, err
	}
	return s.decode(cm)
}

// Pause stops auto-sync of env until until, for reason (one line, at most
// MaxReasonBytes), by by; until must be in the future and at most MaxPause
// from now. It replaces the environment's earlier pause, if any.
func (s *Pauses) Pause(ctx context.Context, env, reason string, until time.Time, by string) (Pause, error) {
	now := s.now()
	p := Pause{Env: env, Reason: reason, Until: until.UTC(), By: by, At: now.UTC().Truncate(time.Second)}
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

// update reads the ConfigMap, applies change to its pauses and writes the
// result on the resourceVersion it read, creating the ConfigMap when there
// is none; a conflict (another writer) starts over after a jittered wait,
// at most maxPauseAttempt times. change is called once per attempt, on a
// fresh read. (The same loop as freeze.Store's update.)
func (s *Pauses) update(ctx context.Context, change func([]Pause) ([]Pause, error)) error {
	where := fmt.Sprintf("ConfigMap %s/%s", s.namespace, PausesConfigMap)
	for attempt := range maxPauseAttempt {
		if attempt > 0 {
			if err := conflictWait(ctx, attempt); err != nil {
				return fmt.Errorf("autosync: write %s: %w", where, err)
			}
		}
		cm, err := s.get(ctx)
		if err != nil {
			return err
		}
		var cur []Pause
		if cm != nil {
			if cur, err = s.decode(cm); err != nil {
				return err
			}
		}
		next, err := change(cur)
		if err != nil {
			return err
		}
		data, err := json.Marshal(pausesJSON{Pauses: next})
		if err != nil {
			return fmt.Errorf("autosync: encode pauses: %w", err)
		}
		if len(next) > MaxPauses || len(data) > maxPausesBytes {
			return fmt.Errorf("autosync: %s is full (%d pauses, %d bytes; at most %d and %d)", where, len(next), len(data), MaxPauses, maxPausesBytes)
		}
		if cm == nil {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Name: PausesConfigMap, Namespace: s.namespace,
				Labels: map[string]string{labelKind: kindPauses},
			}, Data: map[string]string{PausesKey: string(data)}}
			_, err = s.cms.ConfigMaps(s.namespace).Create(ctx, cm, metav1.CreateOptions{FieldManager: fieldManager})
		} else {
			cm = cm.DeepCopy()
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data[PausesKey] = string(data)
			_, err = s.cms.ConfigMaps(s.namespace).Update(ctx, cm, metav1.UpdateOptions{FieldManager: fieldManager})
		}
		switch {
		case err == nil:
			return nil
		case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err):
			continue // another writer won this round: read again
		default:
			return fmt.Errorf("autosync: write %s: %w", where, err)
		}
	}
	return fmt.Errorf("autosync: %s changed under %d writes in a row: try again", where, maxPauseAttempt)
}

// conflictWait sleeps before round attempt (1, 2, ...) of a write that
// lost: a random while in [0, 5ms<<attempt), at most 250ms; it ends early
// with the context's error. (freeze's conflictWait: one to dedupe.)
func conflictWait(ctx context.Context, attempt int) error {
	ceil := min(5*time.Millisecond<<attempt, 250*time.Millisecond)
	t := time.NewTimer(mrand.N(ceil))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// get reads the ConfigMap; nil when there is none.
func (s *Pauses) get(ctx context.Context) (*corev1.ConfigMap, error) {
	cm, err := s.cms.ConfigMaps(s.namespace).Get(ctx, PausesConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("autosync: read ConfigMap %s/%s: %w", s.namespace, PausesConfigMap, err)
	}
	return cm, nil
}

// decode reads the pauses of cm strictly (unknown fields are errors).
func (s *Pauses) decode(cm *corev1.ConfigMap) ([]Pause, error) {
	raw, ok := cm.Data[PausesKey]
	if !ok {
		return nil, nil
	}
	where := fmt.Sprintf("ConfigMap %s/%s key %s", s.namespace, PausesConfigMap, PausesKey)
	if len(raw) > maxPausesBytes+(100<<10) {
		return nil, fmt.Errorf("autosync: %s: %d bytes, more than the store writes: fix it with kubectl edit", where, len(raw))
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	var st pausesJSON
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("autosync: %s: %w (fix it with kubectl edit, or delete the ConfigMap to clear every pause)", where, err)
	}
	return st.Pauses, nil
}
