// Package cmcas writes one key of a ConfigMap by compare-and-swap: read,
// change, write on the resourceVersion read, and start over from a fresh
// read when another writer won, after a jittered wait. It is the update
// loop of deploy-web's small ConfigMap stores: the notification
// subscriptions, and (through internal/cmstore, which signs what it
// writes) the auto-sync pauses, the freezes and the promotion requests.
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
	// MACAnnotation, when set, is the ConfigMap annotation written with
	// the key's value in the same update (Entry.MAC): its signature.
	MACAnnotation string
}

// Entry is a key's value as stored: OK is false when there is no
// ConfigMap or no such key; MAC is the ConfigMap's annotation
// Key.MACAnnotation ("" without one).
type Entry struct {
	Value string
	OK    bool
	MAC   string
}

// Get returns the key's value; ok is false when there is no ConfigMap or
// no such key.
func Get(ctx context.Context, cms typedcorev1.ConfigMapsGetter, k Key) (value string, ok bool, err error) {
	e, err := GetEntry(ctx, cms, k)
	return e.Value, e.OK, err
}

// GetEntry returns the key's value with its MAC annotation.
func GetEntry(ctx context.Context, cms typedcorev1.ConfigMapsGetter, k Key) (Entry, error) {
	cm, err := get(ctx, cms, k)
	if err != nil || cm == nil {
		return Entry{}, err
	}
	return entryOf(cm, k), nil
}

// entryOf is k's entry in cm.
func entryOf(cm *corev1.ConfigMap, k Key) Entry {
	e := Entry{}
	e.Value, e.OK = cm.Data[k.Key]
	if k.MACAnnotation != "" {
		e.MAC = cm.Annotations[k.MACAnnotation]
	}
	return e
}

// Update calls change with the key's value (ok false when there is none)
// and writes what it returns on the resourceVersion it read, creating the
// ConfigMap when there is none. On a conflict it starts over from a fresh
// read, at most MaxAttempts times: change is called once per attempt. An
// error of change ends Update with that error (ErrUnchanged: nil, no
// write).
func Update(ctx context.Context, cms typedcorev1.ConfigMapsGetter, k Key, change func(value string, ok bool) (string, error)) error {
	return UpdateEntry(ctx, cms, k, func(e Entry) (Entry, error) {
		next, err := change(e.Value, e.OK)
		return Entry{Value: next, OK: true}, err
	})
}

// UpdateEntry is Update of the key's value and its MAC annotation (set
// when k.MACAnnotation is), written together in one update.
func UpdateEntry(ctx context.Context, cms typedcorev1.ConfigMapsGetter, k Key, change func(Entry) (Entry, error)) error {
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
		var cur Entry
		if cm != nil {
			cur = entryOf(cm, k)
		}
		next, err := change(cur)
		if errors.Is(err, ErrUnchanged) {
			return nil
		}
		if err != nil {
			return err
		}
		create := cm == nil
		if create {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: k.Name, Namespace: k.Namespace, Labels: k.Labels}}
		} else {
			cm = cm.DeepCopy()
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[k.Key] = next.Value
		if k.MACAnnotation != "" {
			if cm.Annotations == nil {
				cm.Annotations = map[string]string{}
			}
			cm.Annotations[k.MACAnnotation] = next.MAC
		}
		if create {
			_, err = cms.ConfigMaps(k.Namespace).Create(ctx, cm, metav1.CreateOptions{FieldManager: k.FieldManager})
		} else {
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
