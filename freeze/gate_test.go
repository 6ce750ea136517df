package freeze

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/internal/cmstore"
)

// TestGate: the gate refuses a write in a freeze with the freeze's words
// and opening time, lets a plan through, lets a superadmin's break-glass
// through with an Override, refuses anyone else's, opens when the clock
// passes the end (nothing written), and refuses every write when the
// freezes cannot be read.
func TestGate(t *testing.T) {
	ctx := context.Background()
	s, cs := newTestStore(t)
	clock := at(t, "", "2026-12-03T09:00")
	s = s.WithClock(func() time.Time { return clock })
	g := NewGate(s)
	f, err := s.Add(ctx, validOneOff(t)) // prod, 08:00 to 18:00
	if err != nil {
		t.Fatal(err)
	}
	prod, dev := Target{Environment: "prod"}, Target{Environment: "dev"}
	by := Author{Subject: "root", Email: "root@example.com"}

	for _, tc := range []struct {
		name   string
		a      Action
		t      Target
		bg     *BreakGlass
		frozen bool
		denied bool
		over   bool
	}{
		{name: "apply in prod", a: Apply, t: prod, frozen: true},
		{name: "sync in prod", a: Sync, t: prod, frozen: true},
		{name: "rollback in prod", a: Rollback, t: prod, frozen: true},
		{name: "auto-sync in prod", a: AutoSync, t: prod, frozen: true},
		{name: "plan in prod", a: Plan, t: prod},
		{name: "apply in dev", a: Apply, t: dev},
		{name: "break-glass by a superadmin", a: Apply, t: prod, bg: &BreakGlass{Reason: "hotfix CVE", Superadmin: true, By: by}, over: true},
		{name: "break-glass by a deployer", a: Apply, t: prod, bg: &BreakGlass{Reason: "hotfix", By: by}, frozen: true, denied: true},
		{name: "break-glass without a reason", a: Apply, t: prod, bg: &BreakGlass{Superadmin: true, By: by}, frozen: true},
		{name: "break-glass where nothing is frozen", a: Apply, t: dev, bg: &BreakGlass{Reason: "x", Superadmin: true, By: by}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := g.Check(ctx, tc.a, tc.t, tc.bg)
			var fe *FrozenError
			if got := errors.As(err, &fe); got != tc.frozen {
				t.Fatalf("Check(%s, %s) = %v, want frozen %v", tc.a, tc.t, err, tc.frozen)
			}
			if tc.frozen && (!fe.OpensAt.Equal(f.End) || fe.Freeze.ID != f.ID) {
				t.Errorf("Check(%s, %s) = opens %s by %s, want %s by %s", tc.a, tc.t, fe.OpensAt, fe.Freeze.ID, f.End, f.ID)
			}
			if got := errors.Is(err, ErrBreakGlassDenied); got != tc.denied {
				t.Errorf("Check(%s, %s) = %v, want denied %v", tc.a, tc.t, err, tc.denied)
			}
			if got := o != nil; got != tc.over {
				t.Fatalf("Check(%s, %s) override = %+v, want one %v", tc.a, tc.t, o, tc.over)
			}
			if tc.over && (o.Reason != tc.bg.Reason || o.By != by || o.Freeze.ID != f.ID || !o.At.Equal(clock)) {
				t.Errorf("Check() override = %+v, want reason %q by %v of %s at %s", o, tc.bg.Reason, by, f.ID, clock)
			}
		})
	}

	if fe, err := g.Status(ctx, Target{Environment: "prod", App: "web"}); err != nil || fe == nil || !fe.OpensAt.Equal(f.End) {
		t.Errorf("Status(prod/web) = %v, %v, want frozen until %s", fe, err, f.End)
	}
	before, _ := cs.CoreV1().ConfigMaps(testNamespace).Get(ctx, ConfigMapName, metav1.GetOptions{})
	clock = f.End // the end is exclusive: open from then on
	if _, err := g.Check(ctx, Apply, prod, nil); err != nil {
		t.Errorf("Check(apply, prod) at the end = %v, want open", err)
	}
	if fe, err := g.Status(ctx, prod); fe != nil || err != nil {
		t.Errorf("Status(prod) at the end = %v, %v, want open", fe, err)
	}
	after, _ := cs.CoreV1().ConfigMaps(testNamespace).Get(ctx, ConfigMapName, metav1.GetOptions{})
	if before.ResourceVersion != after.ResourceVersion {
		t.Errorf("the freeze lapsing wrote the ConfigMap (resourceVersion %s -> %s), want nothing written", before.ResourceVersion, after.ResourceVersion)
	}
}

// TestGateFailsClosed: a hand-edited ConfigMap that does not read refuses
// every write (and no plan).
func TestGateFailsClosed(t *testing.T) {
	ctx := context.Background()
	bad := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: testNamespace},
		Data: map[string]string{DataKey: `{"freezes": [{"id": "x"}]}`}}
	s, _ := newTestStore(t, bad)
	g := NewGate(s)
	if _, err := g.Check(ctx, Apply, Target{Environment: "dev"}, nil); !errors.Is(err, ErrUnreadable) {
		t.Errorf("Check(apply) over an unreadable store = %v, want ErrUnreadable", err)
	}
	if _, err := g.Check(ctx, Plan, Target{Environment: "dev"}, nil); err != nil {
		t.Errorf("Check(plan) over an unreadable store = %v, want nil (a plan writes nothing)", err)
	}
	if _, err := g.Status(ctx, Target{Environment: "dev"}); !errors.Is(err, ErrUnreadable) {
		t.Errorf("Status() over an unreadable store = %v, want ErrUnreadable", err)
	}
}

// TestGateTamperedFailsClosed: freezes edited through the API as a
// person would (kubectl edit: here a freeze's reason rewritten) read as tampered: every write is refused
// as if frozen, the page's snapshot says so, and no freeze can be added
// or ended on top of the edit.
func TestGateTamperedFailsClosed(t *testing.T) {
	ctx := context.Background()
	s, cs := newTestStore(t)
	if _, err := s.Add(ctx, validOneOff(t)); err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps(testNamespace).Get(ctx, ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data[DataKey] = strings.Replace(cm.Data[DataKey], "release week", "nothing to see", 1)
	if _, err := cs.CoreV1().ConfigMaps(testNamespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	g := NewGate(s)
	_, err = g.Check(ctx, Apply, Target{Environment: "prod"}, nil)
	if _, ok := cmstore.IsTampered(err); !ok || !errors.Is(err, ErrUnreadable) {
		t.Errorf("Check(apply) over an edited store = %v, want ErrUnreadable and a *cmstore.TamperedError", err)
	}
	if _, _, err := g.Snapshot(ctx); !errors.As(err, new(*cmstore.TamperedError)) {
		t.Errorf("Snapshot() over an edited store = %v, want a *cmstore.TamperedError for the page", err)
	}
	if _, err := s.Add(ctx, validOneOff(t)); !errors.As(err, new(*cmstore.TamperedError)) {
		t.Errorf("Add() over an edited store = %v, want a *cmstore.TamperedError", err)
	}
}

// TestGateSnapshot: pages see a change after SnapshotTTL or Forget, not
// on every request.
func TestGateSnapshot(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t)
	clock := at(t, "", "2026-12-02T00:00")
	s = s.WithClock(func() time.Time { return clock })
	g := NewGate(s)
	if l, _, err := g.Snapshot(ctx); err != nil || len(l) != 0 {
		t.Fatalf("Snapshot() = %v, %v, want none", l, err)
	}
	if _, err := s.Add(ctx, validOneOff(t)); err != nil {
		t.Fatal(err)
	}
	if l, _, _ := g.Snapshot(ctx); len(l) != 0 {
		t.Errorf("Snapshot() within the TTL = %d freezes, want the cached 0", len(l))
	}
	g.Forget()
	if l, _, _ := g.Snapshot(ctx); len(l) != 1 {
		t.Errorf("Snapshot() after Forget = %d freezes, want 1", len(l))
	}
	if _, err := s.Add(ctx, validRecurring(t)); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(SnapshotTTL)
	if l, _, _ := g.Snapshot(ctx); len(l) != 2 {
		t.Errorf("Snapshot() after the TTL = %d freezes, want 2", len(l))
	}
}
