package notify

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Names the cluster sees.
const (
	// SubscriptionsConfigMap holds every subscription, in deploy-web's
	// namespace.
	SubscriptionsConfigMap = "deploy-web-subscriptions"
	subscriptionsKey       = "subscriptions.json"
	// LabelManagedBy marks the ConfigMaps this package writes.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// LabelComponent tells them apart.
	LabelComponent = "deploy-web.hanzo.ai/component"
	managedBy      = "deploy-web"
	componentSubs  = "notify-subscriptions"
	componentLog   = "notify-log"
	// FieldManager is the field manager of every write.
	FieldManager = "deploy-web-notify"
)

// Limits of the store.
const (
	MaxSubscriptions = 500
	// maxStoreBytes bounds the encoded subscriptions, well under a
	// ConfigMap's 1 MiB.
	maxStoreBytes = 512 << 10
	// maxConflicts bounds the optimistic-concurrency retries of one write.
	maxConflicts = 10
)

// ErrNotFound is a subscription id the store does not hold.
var ErrNotFound = errors.New("notify: no such subscription")

// Store keeps subscriptions in the SubscriptionsConfigMap. Every write
// reads the ConfigMap, changes it and writes it back on its
// resourceVersion, retrying on a conflict, so concurrent writers (two
// replicas, two browser tabs) lose nothing.
type Store struct {
	kube  kubernetes.Interface
	ns    string
	hosts []string
	now   func() time.Time
}

// NewStore returns the store in namespace (deploy-web's own); hosts is
// the delivery allowlist subscriptions are validated against.
func NewStore(kube kubernetes.Interface, namespace string, hosts []string) *Store {
	return &Store{kube: kube, ns: namespace, hosts: slices.Clone(hosts), now: time.Now}
}

// List returns every subscription, sorted by id.
func (s *Store) List(ctx context.Context) ([]Subscription, error) {
	cm, err := s.kube.CoreV1().ConfigMaps(s.ns).Get(ctx, SubscriptionsConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("notify: read ConfigMap %s/%s: %w", s.ns, SubscriptionsConfigMap, err)
	}
	return s.decode(cm)
}

// Get returns the subscription id.
func (s *Store) Get(ctx context.Context, id string) (Subscription, error) {
	subs, err := s.List(ctx)
	if err != nil {
		return Subscription{}, err
	}
	for _, sub := range subs {
		if sub.ID == id {
			return sub, nil
		}
	}
	return Subscription{}, fmt.Errorf("%w %q", ErrNotFound, id)
}

// Create adds sub, giving it an id if it has none and its creation time;
// it validates sub first and refuses an id in use.
func (s *Store) Create(ctx context.Context, sub Subscription) (Subscription, error) {
	if sub.ID == "" {
		var b [5]byte
		_, _ = rand.Read(b[:])
		sub.ID = "s" + hex.EncodeToString(b[:])
	}
	if sub.Created.IsZero() {
		sub.Created = s.now().UTC().Truncate(time.Second)
	}
	if err := sub.Validate(s.hosts); err != nil {
		return Subscription{}, err
	}
	err := s.modify(ctx, func(subs []Subscription) ([]Subscription, error) {
		if slices.ContainsFunc(subs, func(x Subscription) bool { return x.ID == sub.ID }) {
			return nil, fmt.Errorf("notify: subscription id %q is in use: choose another or leave it empty", sub.ID)
		}
		if len(subs) >= MaxSubscriptions {
			return nil, fmt.Errorf("notify: %d subscriptions already, the most there may be: delete one first", len(subs))
		}
		return append(subs, sub), nil
	})
	return sub, err
}

// Update replaces the subscription with sub's id, keeping its Author and
// Created.
func (s *Store) Update(ctx context.Context, sub Subscription) error {
	return s.modify(ctx, func(subs []Subscription) ([]Subscription, error) {
		i := slices.IndexFunc(subs, func(x Subscription) bool { return x.ID == sub.ID })
		if i < 0 {
			return nil, fmt.Errorf("%w %q", ErrNotFound, sub.ID)
		}
		sub.Author, sub.Created = subs[i].Author, subs[i].Created
		if err := sub.Validate(s.hosts); err != nil {
			return nil, err
		}
		subs[i] = sub
		return subs, nil
	})
}

// Delete removes the subscription id and its delivery log.
func (s *Store) Delete(ctx context.Context, id string) error {
	err := s.modify(ctx, func(subs []Subscription) ([]Subscription, error) {
		i := slices.IndexFunc(subs, func(x Subscription) bool { return x.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("%w %q", ErrNotFound, id)
		}
		return slices.Delete(subs, i, i+1), nil
	})
	if err != nil {
		return err
	}
	err = s.kube.CoreV1().ConfigMaps(s.ns).Delete(ctx, logConfigMap(id), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("notify: subscription %q deleted, its delivery log %s/%s not: %w", id, s.ns, logConfigMap(id), err)
	}
	return nil
}

// modify applies fn to the stored list and writes the result on the
// resourceVersion it read, again from a fresh read on a conflict.
func (s *Store) modify(ctx context.Context, fn func([]Subscription) ([]Subscription, error)) error {
	cms := s.kube.CoreV1().ConfigMaps(s.ns)
	for range maxConflicts {
		cm, err := cms.Get(ctx, SubscriptionsConfigMap, metav1.GetOptions{})
		create := apierrors.IsNotFound(err)
		if err != nil && !create {
			return fmt.Errorf("notify: read ConfigMap %s/%s: %w", s.ns, SubscriptionsConfigMap, err)
		}
		var subs []Subscription
		if create {
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: SubscriptionsConfigMap, Namespace: s.ns,
				Labels: map[string]string{LabelManagedBy: managedBy, LabelComponent: componentSubs}}}
		} else if subs, err = s.decode(cm); err != nil {
			return err
		}
		subs, err = fn(subs)
		if err != nil {
			return err
		}
		slices.SortFunc(subs, func(a, b Subscription) int { return strings.Compare(a.ID, b.ID) })
		b, err := marshal(subs)
		if err != nil {
			return err
		}
		if len(b) > maxStoreBytes {
			return fmt.Errorf("notify: the subscriptions would take %d bytes, more than %d: delete some first", len(b), maxStoreBytes)
		}
		cm.Data = map[string]string{subscriptionsKey: string(b)}
		if create {
			_, err = cms.Create(ctx, cm, metav1.CreateOptions{FieldManager: FieldManager})
		} else {
			_, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: FieldManager})
		}
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("notify: write ConfigMap %s/%s: %w", s.ns, SubscriptionsConfigMap, err)
		}
		return nil
	}
	return fmt.Errorf("notify: ConfigMap %s/%s changed under %d writes in a row: try again", s.ns, SubscriptionsConfigMap, maxConflicts)
}

func (s *Store) decode(cm *corev1.ConfigMap) ([]Subscription, error) {
	raw, ok := cm.Data[subscriptionsKey]
	if !ok {
		return nil, nil
	}
	subs, err := decodeSubscriptions([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("notify: ConfigMap %s/%s key %s: %v: fix or delete it", s.ns, SubscriptionsConfigMap, subscriptionsKey, err)
	}
	return subs, nil
}
