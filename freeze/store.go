package freeze

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/hanzoai/deploy-web/internal/cmcas"
	"github.com/hanzoai/deploy-web/internal/cmstore"
	"github.com/hanzoai/deploy-web/internal/sign"
	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// The ConfigMap that holds the freezes, in deploy-web's own namespace.
const (
	ConfigMapName = "deploy-web-freezes"
	// DataKey is the ConfigMap key of the freezes' JSON.
	DataKey = "freezes.json"
	// LabelKind marks the ConfigMap (the label planstore and
	// deployplan.ReservedName use for deploy-web's own ConfigMaps).
	LabelKind = cmstore.LabelKind
	kindValue = "freezes"
)

// Limits of the store: a ConfigMap holds at most 1 MiB.
const (
	MaxFreezes    = 200
	MaxStoreBytes = 900 << 10
)

// ErrNotFound is returned by Remove and End for an ID that is not stored.
var ErrNotFound = errors.New("freeze: no such freeze")

// FullError refuses a freeze that would not fit.
type FullError struct {
	Freezes, Bytes int
}

func (e *FullError) Error() string {
	return fmt.Sprintf("freeze: the store is full (%d freezes, %d bytes; at most %d freezes and %d bytes): remove ended or unneeded freezes first",
		e.Freezes, e.Bytes, MaxFreezes, MaxStoreBytes)
}

// stored is the JSON of DataKey.
type stored struct {
	Freezes []Freeze `json:"freezes"`
}

// Store reads and writes the freezes ConfigMap in one namespace. It is
// safe for concurrent use, by one replica or many: every write is a
// compare-and-swap on the ConfigMap's resourceVersion, and signed
// (internal/cmstore): freezes edited by hand read as a
// *cmstore.TamperedError, which every gate treats as "frozen, unknown".
type Store struct {
	doc       *cmstore.Store[stored]
	namespace string
	now       func() time.Time
}

// NewStore returns the store of the freezes ConfigMap in namespace
// (deploy-web's own: the same namespace as the plan history), signed with
// keys (the audit records' key: audit.Store).
func NewStore(cms typedcorev1.ConfigMapsGetter, namespace string, keys sign.Keys) *Store {
	return &Store{namespace: namespace, now: time.Now, doc: cmstore.New[stored](cms, keys, cmstore.Spec{
		Owner: "freeze", What: "deploy freezes", Namespace: namespace, Name: ConfigMapName, Key: DataKey,
		Kind: kindValue, MaxBytes: MaxStoreBytes})}
}

// WithClock returns a copy of s that reads the time from now: the clock
// every decision over its freezes is made at (tests move it to see a
// freeze lapse without waiting for it).
func (s *Store) WithClock(now func() time.Time) *Store {
	c := *s
	c.now = now
	return &c
}

// Namespace is the namespace of the freezes ConfigMap.
func (s *Store) Namespace() string { return s.namespace }

// List returns the stored freezes (lapsed ones too, until pruned), in the
// order they were added. No ConfigMap is no freeze. Freezes that were not
// written by deploy-web as they are (*cmstore.TamperedError) or a stored
// freeze that does not validate (*GarbledError) are an error: the caller
// must then refuse what a freeze would refuse, failing closed.
func (s *Store) List(ctx context.Context) (List, error) {
	st, _, err := s.doc.Get(ctx)
	if err != nil {
		return nil, garbled(err)
	}
	for i := range st.Freezes {
		if err := st.Freezes[i].validate(); err != nil {
			return nil, &GarbledError{fmt.Errorf("freeze: ConfigMap %s/%s key %s: freezes[%d] (id %q): %w", s.namespace, ConfigMapName, DataKey, i, truncate(st.Freezes[i].ID, 40), err)}
		}
	}
	return st.Freezes, nil
}

// Add validates f, gives it an ID, Created and a normalised zone, and
// stores it. It refuses a freeze that has already ended or that would
// not fit (*FullError).
func (s *Store) Add(ctx context.Context, f Freeze) (Freeze, error) {
	now := s.now()
	f.ID, f.Created = newID(), now.UTC().Truncate(time.Second)
	// Typed text others read, without format characters (bidi controls,
	// zero-width); a line break stays, for Validate to refuse.
	for _, p := range []*string{&f.Reason, &f.Ticket, &f.Author.Email, &f.Author.Subject} {
		*p = textfmt.Clean(*p, true)
	}
	if err := f.Validate(); err != nil {
		return Freeze{}, err
	}
	if !f.End.After(now) {
		return Freeze{}, fmt.Errorf("freeze: end: %s is in the past", Stamp(f.End))
	}
	err := s.update(ctx, func(l List) (List, error) {
		for slices.ContainsFunc(l, func(o Freeze) bool { return o.ID == f.ID }) {
			f.ID = newID()
		}
		return append(l, f), nil
	})
	if err != nil {
		return Freeze{}, err
	}
	return f, nil
}

// Remove deletes the freeze with the given ID and returns it; ErrNotFound
// when there is none. Other stored freezes are kept as they are.
func (s *Store) Remove(ctx context.Context, id string) (Freeze, error) {
	var removed Freeze
	err := s.update(ctx, func(l List) (List, error) {
		i := slices.IndexFunc(l, func(f Freeze) bool { return f.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		removed = l[i]
		return slices.Delete(l, i, i+1), nil
	})
	return removed, err
}

// End ends the freeze with the given ID at now, as a person's End now
// does, and returns it as stored. A freeze some window of which started
// before now keeps what was frozen: it stays, its End cut to now, so that
// its windows (what a timeline draws) end at now and the pages list it as
// past; the Edge returned is then the end of the window it was in (nil
// when it was between windows), the edge a freeze-end record would be.
// One that has not started is removed. ErrNotFound when there is none, or
// it is over already.
func (s *Store) End(ctx context.Context, id string, now time.Time) (Freeze, *Edge, error) {
	now = now.UTC()
	var f Freeze
	var ended *Edge
	err := s.update(ctx, func(l List) (List, error) {
		i := slices.IndexFunc(l, func(f Freeze) bool { return f.ID == id })
		if i < 0 {
			return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		f, ended = l[i], nil
		if f.Lapsed(now) {
			return nil, fmt.Errorf("%w: %q is over already", ErrNotFound, id)
		}
		if !f.startedBefore(now) {
			return slices.Delete(l, i, i+1), nil
		}
		w, in := f.WindowAt(now)
		f.End = now
		l[i] = f
		if in {
			ended = &Edge{Freeze: f, Window: Window{Start: w.Start, End: now}, End: true}
		}
		return l, nil
	})
	return f, ended, err
}

// startedBefore reports whether a window of f starts before t.
func (f *Freeze) startedBefore(t time.Time) bool {
	for w := range f.Windows() {
		return w.Start.Before(t)
	}
	return false
}

// Prune removes the freezes that have lapsed at now (nothing of them is
// frozen at or after now) and returns them. Run it from one replica, under
// a Lease; it is safe, only wasteful, if two run at once.
func (s *Store) Prune(ctx context.Context, now time.Time) ([]Freeze, error) {
	var pruned []Freeze
	err := s.update(ctx, func(l List) (List, error) {
		pruned = pruned[:0]
		kept := l[:0:0]
		for _, f := range l {
			if f.Lapsed(now) {
				pruned = append(pruned, f)
			} else {
				kept = append(kept, f)
			}
		}
		if len(pruned) == 0 {
			return nil, errUnchanged
		}
		return kept, nil
	})
	if errors.Is(err, errUnchanged) {
		return nil, nil
	}
	return pruned, err
}

// errUnchanged tells update that change has nothing to write.
var errUnchanged = cmcas.ErrUnchanged

// update applies change to the stored freezes by a signed
// compare-and-swap (internal/cmstore); change is called once per attempt.
// It refuses more than the store holds (*FullError).
func (s *Store) update(ctx context.Context, change func(List) (List, error)) error {
	var n int
	err := s.doc.Update(ctx, func(cur stored) (stored, error) {
		next, err := change(cur.Freezes)
		if err != nil {
			return stored{}, err
		}
		if next == nil {
			next = List{}
		}
		n = len(next)
		if n > MaxFreezes {
			return stored{}, &FullError{Freezes: n}
		}
		return stored{Freezes: next}, nil
	})
	if tl, ok := errors.AsType[*cmstore.TooLargeError](err); ok {
		return &FullError{Freezes: n, Bytes: tl.Bytes}
	}
	return garbled(err)
}

// garbled is err with a store that is signed but does not decode as a
// *GarbledError.
func garbled(err error) error {
	if g, ok := errors.AsType[*cmstore.GarbledError](err); ok {
		return &GarbledError{fmt.Errorf("freeze: %w", g)}
	}
	return err
}

// GarbledError is stored freezes that do not decode or do not validate;
// its text names the ConfigMap's key.
type GarbledError struct{ err error }

func (e *GarbledError) Error() string { return e.err.Error() }
func (e *GarbledError) Unwrap() error { return e.err }

// newID returns a fresh freeze ID, "fz-" and 8 hex digits.
func newID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return "fz-" + hex.EncodeToString(b)
}
