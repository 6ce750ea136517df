package freeze

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Gate is the one place writes ask "may this go ahead despite the
// freezes?": every write path of deploy-web (envrun's applies and deploy
// runs, the release seam's rollbacks and syncs, the promotion gate) calls
// Check or Status with the same Store, so a freeze refuses all of them the
// same way.
//
// Check and Status read the ConfigMap afresh, so a freeze created on
// another replica refuses the very next write; a read that fails refuses
// the write (fail closed). Snapshot serves pages (banners, chips, the
// fleet filter) from a copy at most SnapshotTTL old.
type Gate struct {
	store *Store

	mu      sync.Mutex
	cached  List
	readAt  time.Time
	readErr error
}

// SnapshotTTL is how old the freezes a page shows may be.
const SnapshotTTL = 5 * time.Second

// NewGate returns the gate over s.
func NewGate(s *Store) *Gate { return &Gate{store: s} }

// Store returns the gate's store (the /freezes page adds and ends freezes
// through it).
func (g *Gate) Store() *Store { return g.store }

// Now is the store's clock: the instant every decision of the gate is made
// at (tests move it with Store.WithClock).
func (g *Gate) Now() time.Time { return g.store.now() }

// ErrUnreadable wraps a refusal made because the freezes could not be
// read: a write is not let through a freeze nobody could check.
var ErrUnreadable = errors.New("freeze: the freezes could not be read, so writes are refused until they can")

// Check is the decision for action a at t now, read fresh: nil when it may
// go ahead (and nil, nil for an action no freeze refuses), a
// *FrozenError when a freeze refuses it. With bg, a frozen action is let
// through when List.BreakGlass allows it, and the returned Override is
// what the caller must record with the action; a denied break-glass is
// the refusal (wrapping ErrBreakGlassDenied). Without a freeze in the
// way, bg is ignored: nothing is overridden, nothing to record.
func (g *Gate) Check(ctx context.Context, a Action, t Target, bg *BreakGlass) (*Override, error) {
	if !a.Refused() {
		return nil, nil
	}
	l, err := g.store.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	now := g.store.now()
	if bg == nil {
		return nil, l.Check(now, a, t)
	}
	return l.BreakGlass(now, a, t, *bg)
}

// Status answers "is target t frozen now, why, until when" for gates that
// show it before a button (promotion, auto-sync): the *FrozenError of a
// write at t (Action Promote's wording aside, the same refusal every write
// gets), or nil when t is open. It reads fresh, like Check.
func (g *Gate) Status(ctx context.Context, t Target) (*FrozenError, error) {
	_, err := g.Check(ctx, Apply, t, nil)
	var fe *FrozenError
	if errors.As(err, &fe) {
		return fe, nil
	}
	return nil, err
}

// Snapshot returns the stored freezes as read at most SnapshotTTL ago and
// the current time, for pages; a read error is returned (the page says the
// freezes are unknown) and retried after SnapshotTTL.
func (g *Gate) Snapshot(ctx context.Context) (List, time.Time, error) {
	now := g.store.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.readAt.IsZero() || now.Sub(g.readAt) >= SnapshotTTL || now.Before(g.readAt) {
		g.cached, g.readErr = g.store.List(ctx)
		g.readAt = now
	}
	return g.cached, now, g.readErr
}

// Forget drops the snapshot, so the next page after a change on this
// replica shows it.
func (g *Gate) Forget() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.readAt = time.Time{}
}
