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

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/cmcas"
	"github.com/hanzoai/deploy-web/internal/scope"
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
	// MaxPerScope and MaxPerAuthor cap the subscriptions of one scope
	// and of one author, so that no one team or person takes the room
	// of all (ErrFull past them too).
	MaxPerScope  = 20
	MaxPerAuthor = 50
	// maxStoreBytes bounds the encoded subscriptions, well under a
	// ConfigMap's 1 MiB.
	maxStoreBytes = 512 << 10
	// maxConflicts bounds the optimistic-concurrency retries of one write.
	maxConflicts = 10
)

// ErrNotFound is a subscription id the store does not hold.
var ErrNotFound = errors.New("notify: no such subscription")

// ErrFull is a subscription refused because the store holds the most it
// may (MaxSubscriptions, or its bytes): every such refusal is a
// *FullError, which errors.Is matches to ErrFull.
var ErrFull = errors.New("notify: no room for another subscription")

// FullError is a subscription refused for want of room: which cap, and
// what to do.
type FullError struct{ public string }

// full is the refusal of a store that holds the most it may; format and
// args say which cap and what to do.
func full(format string, args ...any) *FullError {
	return &FullError{public: "no room for another subscription: " + fmt.Sprintf(format, args...)}
}

func (e *FullError) Error() string { return "notify: " + e.public }

// Public is the refusal's text a user may read.
func (e *FullError) Public() string { return e.public }

// Is matches ErrFull.
func (e *FullError) Is(target error) bool { return target == ErrFull }

// Store keeps subscriptions in the SubscriptionsConfigMap. Every write
// reads the ConfigMap, changes it and writes it back on its
// resourceVersion, retrying on a conflict, so concurrent writers (two
// replicas, two browser tabs) lose nothing.
type Store struct {
	kube  kubernetes.Interface
	ns    string
	hosts []string
	// keys are the Secret keys subscriptions may name (CheckKey), target
	// the roles target of a subscription's scope.
	keys   []envconfig.NotificationKey
	target func(Scope) scope.Target
	now    func() time.Time
}

// NewStore returns the store in namespace (deploy-web's own); hosts is
// the delivery allowlist subscriptions are validated against.
func NewStore(kube kubernetes.Interface, namespace string, hosts []string) *Store {
	return &Store{kube: kube, ns: namespace, hosts: slices.Clone(hosts), now: time.Now}
}

// WithKeys returns s deciding the Secret keys subscriptions may name by
// keys (notifications.keys) and target, the roles target of a
// subscription's scope (handlers.Server.SubscriptionTarget; nil: the
// scope's own fields). Without it no key may be named.
func (s *Store) WithKeys(keys []envconfig.NotificationKey, target func(Scope) scope.Target) *Store {
	c := *s
	c.keys, c.target = slices.Clone(keys), target
	return &c
}

// CheckKey is CheckKey of sub against the store's keys, at the target of
// sub's scope: Create and Update ask it, and the sender before every
// delivery, so a subscription edited in the ConfigMap by hand sends
// nothing with a key it may not use.
func (s *Store) CheckKey(sub Subscription) error {
	t := scope.Target{Cluster: sub.Scope.Cluster, Environment: sub.Scope.Environment, Namespace: sub.Scope.Namespace, App: sub.Scope.App}
	if s.target != nil {
		t = s.target(sub.Scope)
	}
	return CheckKey(s.keys, sub, t)
}

// Hosts returns the delivery allowlist (notifications.hosts): empty, no
// subscription can be saved and nothing is sent.
func (s *Store) Hosts() []string { return slices.Clone(s.hosts) }

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
// it validates sub first, checks the Secret key it names (CheckKey) and
// refuses an id in use.
func (s *Store) Create(ctx context.Context, sub Subscription) (Subscription, error) {
	if sub.ID == "" {
		var b [5]byte
		_, _ = rand.Read(b[:])
		sub.ID = "s" + hex.EncodeToString(b[:])
	}
	if sub.Created.IsZero() {
		sub.Created = s.now().UTC().Truncate(time.Second)
	}
	// A refused sub is returned too, for the record of the refusal.
	if err := sub.Validate(s.hosts); err != nil {
		return sub, err
	}
	if err := s.CheckKey(sub); err != nil {
		return sub, err
	}
	err := s.modify(ctx, func(subs []Subscription) ([]Subscription, error) {
		if slices.ContainsFunc(subs, func(x Subscription) bool { return x.ID == sub.ID }) {
			return nil, &FieldError{Field: "id", Message: fmt.Sprintf("%q is in use: choose another or leave it empty", sub.ID)}
		}
		if len(subs) >= MaxSubscriptions {
			return nil, full("%d subscriptions already, the most there may be: delete one first", len(subs))
		}
		if err := checkCaps(subs, sub); err != nil {
			return nil, err
		}
		return append(subs, sub), nil
	})
	return sub, err
}

// checkCaps refuses sub past MaxPerScope subscriptions of its scope or
// MaxPerAuthor of its author.
func checkCaps(subs []Subscription, sub Subscription) error {
	var scope, author int
	for _, x := range subs {
		if x.Scope == sub.Scope {
			scope++
		}
		if x.Author == sub.Author {
			author++
		}
	}
	switch {
	case scope >= MaxPerScope:
		return full("this scope has %d subscriptions already, the most one scope may have: delete one first", scope)
	case author >= MaxPerAuthor:
		return full("you have %d subscriptions already, the most one person may have: delete one first", author)
	}
	return nil
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
		if err := s.CheckKey(sub); err != nil {
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
	key := cmcas.Key{Owner: "notify", Namespace: s.ns, Name: SubscriptionsConfigMap, Key: subscriptionsKey,
		Labels: map[string]string{LabelManagedBy: managedBy, LabelComponent: componentSubs}, FieldManager: FieldManager}
	return cmcas.Update(ctx, s.kube.CoreV1(), key, func(raw string, ok bool) (string, error) {
		var subs []Subscription
		if ok {
			var err error
			if subs, err = decodeSubscriptions([]byte(raw)); err != nil {
				return "", s.decodeError(err)
			}
		}
		subs, err := fn(subs)
		if err != nil {
			return "", err
		}
		slices.SortFunc(subs, func(a, b Subscription) int { return strings.Compare(a.ID, b.ID) })
		b, err := marshal(subs)
		if err != nil {
			return "", err
		}
		if len(b) > maxStoreBytes {
			return "", full("the subscriptions would take %d bytes, more than %d: delete some first", len(b), maxStoreBytes)
		}
		return string(b), nil
	})
}

func (s *Store) decode(cm *corev1.ConfigMap) ([]Subscription, error) {
	raw, ok := cm.Data[subscriptionsKey]
	if !ok {
		return nil, nil
	}
	subs, err := decodeSubscriptions([]byte(raw))
	if err != nil {
		return nil, s.decodeError(err)
	}
	return subs, nil
}

// decodeError names the stored subscriptions that do not decode.
func (s *Store) decodeError(err error) error {
	return fmt.Errorf("notify: ConfigMap %s/%s key %s: %v: fix or delete it", s.ns, SubscriptionsConfigMap, subscriptionsKey, err)
}
