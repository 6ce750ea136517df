// Package cmcas writes one key of a ConfigMap by compare-and-swap: read,
// change, write on the resourceVersion read, and start over from a fresh
// read when another writer won, after a jittered wait. It is the update
// loop of deploy-web's small ConfigMap stores: the auto-sync pauses, the
// freezes and the notification subscriptions.
package cmcas

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// MaxAttempts bounds the read-change-write rounds of one Update that
// lost to other writers; between rounds the writer waits a random while
// that doubles each round (Wait), so two replicas that keep colliding
// fall out of step instead of losing every round.
const MaxAttempts = 16

// ErrUnchanged, returned by a change, ends Update without a write.
var ErrUnchanged = errors.New("cmcas: unchanged")

// Key names the ConfigMap key a store keeps its data in.
type Key struct {
	// Owner prefixes the errors ("autosync").
	Owner string
	// Namespace and Name of the ConfigMap; Key is its data key.
	Namespace, Name, Key string
	// Labels are set on a ConfigMap Update creates.
	Labels map[string]string
	// FieldManager of the writes.
	FieldManager string
}

// Get returns the key's value; ok is false when there is no ConfigMap or
// no such key.
func Get(ctx context.Context, cms typedcorev1.ConfigMapsGetter, k Key) (value string, ok bool, err error) {
	cm, err := get(ctx, cms, k)
	if err != nil || cm == nil {
		return "", false, err
	}
	value, ok = cm.Data[k.Key]
	return value, ok, nil
}

// Update calls change with the key's value (ok false when there is none)
// and writes what it returns on the resourceVersion it read, creating the
// ConfigMap when there is none. On a conflict it starts over from a fresh
// read, at most MaxAttempts times: change is called once per attempt. An
// error of change ends Update with that error (ErrUnchanged: nil, no
// write).
func Update(ctx context.Context, cms typedcorev1.ConfigMapsGetter, k Key, change func(value string, ok bool) (string, error)) error {
	for attempt := range MaxAttempts {
		if attempt > 0 {
			if err := Wait(ctx, attempt); err != nil {
				return fmt.Errorf("%s: write ConfigMap %s/%s: %w", k.Owner, k.Namespace, k.Name, err)
			}
		}
		cm, err := get(ctx, cms, k)
		if err != nil {
			return err
		}
		var cur string
		var ok bool
		if cm != nil {
			cur, ok = cm.Data[k.Key]
		}
		next, err := change(cur, ok)
		if errors.Is(err, ErrUnchanged) {
			return nil
		}
		if err != nil {
			return err
		}
		if cm == nil {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: k.Name, Namespace: k.Namespace, Labels: k.Labels},
				Data: map[string]string{k.Key: next}}
			_, err = cms.ConfigMaps(k.Namespace).Create(ctx, cm, metav1.CreateOptions{FieldManager: k.FieldManager})
		} else {
			cm = cm.DeepCopy()
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data[k.Key] = next
			_, err = cms.ConfigMaps(k.Namespace).Update(ctx, cm, metav1.UpdateOptions{FieldManager: k.FieldManager})
		}
		switch {
		case err == nil:
			return nil
		case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err):
			continue // another writer won this round: read again
		default:
			return fmt.Errorf("%s: write ConfigMap %s/%s: %w", k.Owner, k.Namespace, k.Name, err)
		}
	}
	return fmt.Errorf("%s: ConfigMap %s/%s changed under %d writes in a row: try again", k.Owner, k.Namespace, k.Name, MaxAttempts)
}

// Wait sleeps before round attempt (1, 2, ...) of a write that lost: a
// random while in [0, 5ms<<attempt), at most 250ms; it ends early with
// the context's error.
func Wait(ctx context.Context, attempt int) error {
	ceil := min(5*time.Millisecond<<min(attempt, 16), 250*time.Millisecond)
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
func get(ctx context.Context, cms typedcorev1.ConfigMapsGetter, k Key) (*corev1.ConfigMap, error) {
	cm, err := cms.ConfigMaps(k.Namespace).Get(ctx, k.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: read ConfigMap %s/%s: %w", k.Owner, k.Namespace, k.Name, err)
	}
	return cm, nil
}
