package deployplan

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
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

// DefaultHolder names this process: user@host pid N.
func DefaultHolder() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s@%s pid %d", name, host, os.Getpid())
}

// lease is a held lock.
type lease struct {
	kube     kubernetes.Interface
	ns       string
	holder   string
	duration time.Duration
	uid      types.UID
	rv       string
}

// acquireLock creates the Lease, or takes over one that expired; a live one
// held by someone else is a *LockHeldError.
func acquireLock(ctx context.Context, kube kubernetes.Interface, ns, holder string, d time.Duration, now time.Time) (*lease, error) {
	secs := int32(d / time.Second)
	if secs < 1 {
		secs = 1
	}
	mt := metav1.NewMicroTime(now)
	want := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: LockName, Namespace: ns, Labels: map[string]string{"app.kubernetes.io/managed-by": "deploy-web"}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &mt, RenewTime: &mt},
	}
	leases := kube.CoordinationV1().Leases(ns)
	got, err := leases.Create(ctx, want, metav1.CreateOptions{FieldManager: FieldManager})
	if err == nil {
		return &lease{kube: kube, ns: ns, holder: holder, duration: d, uid: got.UID, rv: got.ResourceVersion}, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("deployplan: take the lock: %w", err)
	}
	cur, err := leases.Get(ctx, LockName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("deployplan: read the lock: %w", err)
	}
	held := heldBy(cur, ns)
	if now.Before(held.Expires) {
		return nil, held
	}
	// Expired: take it over; a concurrent taker loses on the resourceVersion.
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
	return &lease{kube: kube, ns: ns, holder: holder, duration: d, uid: got.UID, rv: got.ResourceVersion}, nil
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

// renew extends the lease; it fails if someone else took it.
func (l *lease) renew(ctx context.Context, now time.Time) error {
	leases := l.kube.CoordinationV1().Leases(l.ns)
	cur, err := leases.Get(ctx, LockName, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("deployplan: renew the lock: %w", err)
	}
	if cur.UID != l.uid || cur.Spec.HolderIdentity == nil || *cur.Spec.HolderIdentity != l.holder {
		return fmt.Errorf("deployplan: the lock was taken by %q", deref(cur.Spec.HolderIdentity))
	}
	mt := metav1.NewMicroTime(now)
	cur.Spec.RenewTime = &mt
	got, err := leases.Update(ctx, cur, metav1.UpdateOptions{FieldManager: FieldManager})
	if err != nil {
		return fmt.Errorf("deployplan: renew the lock: %w", err)
	}
	l.rv = got.ResourceVersion
	return nil
}

// release deletes the lease if it is still ours.
func (l *lease) release(ctx context.Context) error {
	uid := l.uid
	err := l.kube.CoordinationV1().Leases(l.ns).Delete(ctx, LockName, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deployplan: release the lock: %w", err)
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
