package deployplan

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/user"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/appcr"
)

// LockName is the Lease that serialises applies in an environment's namespace.
const LockName = "deploy-web-apply"

// DefaultLockDuration is how long a lock outlives its last renewal, so a
// crashed apply (kill -9) holds it at most this long.
const DefaultLockDuration = 2 * time.Minute

// LockHeldError says who holds the lock and since when.
type LockHeldError struct {
	Namespace string
	Holder    string
	Since     time.Time
	Expires   time.Time
}

func (e *LockHeldError) Error() string {
	return fmt.Sprintf("another apply holds the lock (Lease %s/%s): holder %q since %s; it expires at %s unless renewed",
		e.Namespace, LockName, e.Holder, e.Since.UTC().Format(time.RFC3339), e.Expires.UTC().Format(time.RFC3339))
}

// LockLostError says the apply's lock was taken over (after it expired,
// while this apply stalled) or removed: the apply stopped before its next
// write.
type LockLostError struct {
	Namespace string
	// Holder is this apply's holder id; Now is who holds the Lease now
	// ("" when it is gone).
	Holder, Now string
}

func (e *LockLostError) Error() string {
	now := "nobody (the Lease is gone)"
	if e.Now != "" {
		now = fmt.Sprintf("%q", e.Now)
	}
	return fmt.Sprintf("deployplan: this apply (holder %q) lost the lock (Lease %s/%s), now held by %s: it stopped before its next write and released nothing; check the other apply's report",
		e.Holder, e.Namespace, LockName, now)
}

// uniqueHolder makes the holder id of one apply: the caller's name and a
// random suffix, so two applies of the same process or user never share an
// identity and one can never renew or release the other's lock.
func uniqueHolder(base string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return base + " [apply " + hex.EncodeToString(b) + "]"
}

// DefaultHolder names this process: user@host pid N.
func DefaultHolder() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s@%s pid %d", name, host, os.Getpid())
}

// lease is a held lock. Every write to the Lease after it was taken is
// conditional on the resourceVersion this apply last wrote: if anyone else
// wrote the Lease since (a takeover after expiry), the write fails and the
// lock is lost for good.
type lease struct {
	kube     kubernetes.Interface
	ns       string
	holder   string
	duration time.Duration

	mu       sync.Mutex
	cur      *coordinationv1.Lease // as this apply last wrote it
	lost     *LockLostError
	released bool

	// The callers of renewFresh waiting for the next renewal, and
	// whether one of them is renewing for all (shared).
	sharedMu sync.Mutex
	waiting  []chan error
	renewing bool
}

// acquireLock creates the Lease, or takes over one that expired; a live one
// held by someone else is a *LockHeldError. holder must be unique to this
// apply (uniqueHolder).
func acquireLock(ctx context.Context, kube kubernetes.Interface, ns, holder string, d time.Duration, now time.Time) (*lease, error) {
	secs := int32(d / time.Second)
	if secs < 1 {
		secs = 1
	}
	mt := metav1.NewMicroTime(now)
	want := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: LockName, Namespace: ns, Labels: map[string]string{appcr.ManagedByLabel: appcr.FieldManager}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &mt, RenewTime: &mt},
	}
	leases := kube.CoordinationV1().Leases(ns)
	got, err := leases.Create(ctx, want, metav1.CreateOptions{FieldManager: FieldManager})
	if err == nil {
		return &lease{kube: kube, ns: ns, holder: holder, duration: d, cur: got}, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("deployplan: take the lock: %w", err)
	}
	cur, err := leases.Get(ctx, LockName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("deployplan: read the lock: %w", err)
	}
	held := heldBy(cur, ns)
	if held.HeldAt(now) {
		return nil, held
	}
	// Expired: take it over. The update carries the resourceVersion just
	// read, so a concurrent taker, or the old holder renewing meanwhile,
	// makes it fail.
	cur.Spec = want.Spec
	got, err = leases.Update(ctx, cur, metav1.UpdateOptions{FieldManager: FieldManager})
	if apierrors.IsConflict(err) {
		if again, gerr := leases.Get(ctx, LockName, metav1.GetOptions{}); gerr == nil {
			return nil, heldBy(again, ns)
		}
		return nil, held
	}
	if err != nil {
		return nil, fmt.Errorf("deployplan: take over the expired lock: %w", err)
	}
	return &lease{kube: kube, ns: ns, holder: holder, duration: d, cur: got}, nil
}

// HeldAt reports whether the lock is still held at now: its last renewal
// plus its duration has not passed. An expired lock is taken over by the
// next apply (acquireLock), so it holds nobody back.
func (e *LockHeldError) HeldAt(now time.Time) bool { return now.Before(e.Expires) }

// LockStatus reads the apply lock of namespace ns: who holds it, since
// when and until when; nil when nobody holds it at now (no Lease, or one
// that expired).
func LockStatus(ctx context.Context, kube kubernetes.Interface, ns string, now time.Time) (*LockHeldError, error) {
	cur, err := kube.CoordinationV1().Leases(ns).Get(ctx, LockName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("deployplan: read the lock: %w", err)
	}
	if held := heldBy(cur, ns); held.HeldAt(now) {
		return held, nil
	}
	return nil, nil
}

func heldBy(l *coordinationv1.Lease, ns string) *LockHeldError {
	e := &LockHeldError{Namespace: ns, Holder: "(unknown)"}
	if l.Spec.HolderIdentity != nil {
		e.Holder = *l.Spec.HolderIdentity
	}
	if l.Spec.AcquireTime != nil {
		e.Since = l.Spec.AcquireTime.Time
	}
	renew := e.Since
	if l.Spec.RenewTime != nil {
		renew = l.Spec.RenewTime.Time
	}
	d := DefaultLockDuration
	if l.Spec.LeaseDurationSeconds != nil {
		d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	e.Expires = renew.Add(d)
	return e
}

// renew extends the lease with an update conditional on the resourceVersion
// this apply last wrote. Any other write since (a takeover) makes it a
// *LockLostError, and every later renew says the same without asking the
// server. Another failure (the API server did not answer) is returned as
// is: the caller cannot prove it holds the lock and must not write.
func (l *lease) renew(ctx context.Context, now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost != nil {
		return l.lost
	}
	if l.released {
		return fmt.Errorf("deployplan: the lock was released")
	}
	next := l.cur.DeepCopy()
	mt := metav1.NewMicroTime(now)
	next.Spec.RenewTime = &mt
	got, err := l.kube.CoordinationV1().Leases(l.ns).Update(ctx, next, metav1.UpdateOptions{FieldManager: FieldManager})
	switch {
	case err == nil:
		l.cur = got
		return nil
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		lost := &LockLostError{Namespace: l.ns, Holder: l.holder}
		if cur, gerr := l.kube.CoordinationV1().Leases(l.ns).Get(ctx, LockName, metav1.GetOptions{}); gerr == nil {
			lost.Now = deref(cur.Spec.HolderIdentity)
			if lost.Now == "" {
				lost.Now = "(no holder)"
			}
		}
		l.lost = lost
		return lost
	default:
		return fmt.Errorf("deployplan: renew the lock: %w", err)
	}
}

// renewFresh returns the result of a renewal that started after it was
// called: the writes of one step of an apply, made in parallel, each wait
// for such a renewal, and the callers waiting together share one. The
// first caller renews for everyone queued, again and again until nobody
// waits, so every write still follows a renewal made after it was asked
// for (the fence of renew), at the cost of one renewal per round of
// parallel writes instead of one per write.
func (l *lease) renewFresh(ctx context.Context, now func() time.Time) error {
	me := make(chan error, 1)
	l.sharedMu.Lock()
	l.waiting = append(l.waiting, me)
	lead := !l.renewing
	l.renewing = true
	l.sharedMu.Unlock()
	if lead {
		for {
			l.sharedMu.Lock()
			batch := l.waiting
			l.waiting = nil
			if len(batch) == 0 {
				l.renewing = false
				l.sharedMu.Unlock()
				break
			}
			l.sharedMu.Unlock()
			err := l.renew(ctx, now())
			for _, c := range batch {
				c <- err
			}
		}
	}
	return <-me
}

// lostErr is the loss recorded by renew, nil while the lock is held.
func (l *lease) lostErr() *LockLostError {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// release deletes the Lease only if it is still exactly as this apply last
// wrote it (uid and resourceVersion preconditions): a lock taken over by
// another apply is never deleted. A lost lock is not touched at all.
func (l *lease) release(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost != nil || l.released {
		return nil
	}
	uid, rv := l.cur.UID, l.cur.ResourceVersion
	err := l.kube.CoordinationV1().Leases(l.ns).Delete(ctx, LockName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
	switch {
	case err == nil:
		l.released = true
		return nil
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		return nil // not ours any more
	default:
		return fmt.Errorf("deployplan: release the lock: %w", err)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
