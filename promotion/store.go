package promotion

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/internal/cmstore"
	"github.com/hanzoai/deploy-web/internal/sign"
	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// The ConfigMap of the promotion requests, in deploy-web's own namespace
// (the plan history's).
const (
	ConfigMapName = "deploy-web-promotions"
	// DataKey is the ConfigMap key of the requests' JSON.
	DataKey = "promotions.json"
	// LabelKind marks deploy-web's own ConfigMaps.
	LabelKind = cmstore.LabelKind
	kindValue = "promotions"
)

// Limits of the store: a ConfigMap holds at most 1 MiB. Past MaxRequests
// the oldest decided requests are dropped; pending ones never are.
const (
	MaxRequests   = 100
	MaxStoreBytes = 900 << 10
	// MaxReasonBytes caps a request's reason.
	MaxReasonBytes = 1 << 10
	// MaxPendingPerTarget and MaxPendingPerRequester cap the pending
	// requests into one environment and of one person: past them a new
	// request is a *LimitError, so no one fills the store (900 KiB) and
	// locks everyone else out of asking.
	MaxPendingPerTarget    = 20
	MaxPendingPerRequester = 5
	// PendingTTL is how long a request stays pending: after it, it is
	// expired (StateExpired) and can no longer be decided.
	PendingTTL = 7 * 24 * time.Hour
)

// RequestState is where a request stands.
type RequestState string

// The states: a request is pending until one approver approves or rejects
// it, or until it expires (PendingTTL after it was made); an approved one
// is written (Commit) or failed (Message).
const (
	StatePending  RequestState = "pending"
	StateApproved RequestState = "approved"
	StateRejected RequestState = "rejected"
	StateFailed   RequestState = "failed"
	StateExpired  RequestState = "expired"
)

// AppVersion is one App's exact version as promoted: the source's
// declared image, with its tag and digest.
type AppVersion struct {
	App     string `json:"app"`
	Image   string `json:"image"`
	Version string `json:"version"`
	Digest  string `json:"digest,omitempty"`
}

// Request is a promotion into a protected environment waiting for (or
// given) a second person's decision.
type Request struct {
	ID        string       `json:"id"`
	Target    string       `json:"target"`
	Source    string       `json:"source"`
	Apps      []AppVersion `json:"apps"`
	Requester audit.Actor  `json:"requester"`
	Reason    string       `json:"reason,omitempty"`
	Created   time.Time    `json:"created"`
	State     RequestState `json:"state"`
	// Decider and Decided say who approved or rejected it, and when.
	Decider *audit.Actor `json:"decider,omitempty"`
	Decided time.Time    `json:"decided,omitzero"`
	// Branch, CompareURL and Commit are the review branch an approval
	// wrote; Message why it failed.
	Branch     string `json:"branch,omitempty"`
	CompareURL string `json:"compareURL,omitempty"`
	Commit     string `json:"commit,omitempty"`
	Message    string `json:"message,omitempty"`
}

// ErrNotFound is a request id that is not stored (for that target).
var ErrNotFound = errors.New("promotion: no such request")

// DecidedError refuses a decision on a request that is no longer pending.
type DecidedError struct{ State RequestState }

func (e *DecidedError) Error() string { return "promotion: " + e.Public() }

// Public is the refusal's text for people.
func (e *DecidedError) Public() string {
	if e.State == StateExpired {
		return fmt.Sprintf("the request expired (pending for more than %d days): ask again", int(PendingTTL/(24*time.Hour)))
	}
	return "the request is already " + string(e.State) + ": another person decided it first"
}

// LimitError refuses a new request past MaxPendingPerTarget (Per
// "environment") or MaxPendingPerRequester (Per "requester").
type LimitError struct {
	Per     string
	Pending int
}

func (e *LimitError) Error() string { return "promotion: " + e.Public() }

// Public is the refusal's text for people.
func (e *LimitError) Public() string {
	if e.Per == LimitRequester {
		return fmt.Sprintf("you have %d pending promotion requests, the most one person may have: wait until an approver decides one (or it expires after %d days)", e.Pending, int(PendingTTL/(24*time.Hour)))
	}
	return fmt.Sprintf("this environment has %d pending promotion requests, the most it may have: approvers must decide some first (or they expire after %d days)", e.Pending, int(PendingTTL/(24*time.Hour)))
}

// What a LimitError caps.
const (
	LimitTarget    = "environment"
	LimitRequester = "requester"
)

type stored struct {
	Requests []Request `json:"requests"`
}

// Store keeps the promotion requests in one ConfigMap; every write is a
// signed compare-and-swap (internal/cmstore), so replicas and two
// approvers at once never both decide one request, and requests edited
// by hand read as a *cmstore.TamperedError: none of them can be decided.
type Store struct {
	doc *cmstore.Store[stored]
	now func() time.Time
}

// NewStore returns the store in namespace (deploy-web's own), signed with
// keys (the audit records' key: audit.Store).
func NewStore(cms typedcorev1.ConfigMapsGetter, namespace string, keys sign.Keys) *Store {
	return &Store{now: time.Now, doc: cmstore.New[stored](cms, keys, cmstore.Spec{
		Owner: "promotion", What: "promotion requests", Namespace: namespace, Name: ConfigMapName, Key: DataKey,
		Kind: kindValue, MaxBytes: MaxStoreBytes})}
}

// List returns the requests of target ("" for all), newest first.
func (s *Store) List(ctx context.Context, target string) ([]Request, error) {
	st, _, err := s.doc.Get(ctx)
	if err != nil {
		return nil, err
	}
	all := st.Requests
	expire(all, s.now())
	var out []Request
	for i := len(all) - 1; i >= 0; i-- {
		if target == "" || all[i].Target == target {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// expire marks the pending requests made PendingTTL or more before now
// as StateExpired: a read shows them so, and a write stores them so.
func expire(all []Request, now time.Time) {
	for i := range all {
		if all[i].State == StatePending && !now.Before(all[i].Created.Add(PendingTTL)) {
			all[i].State = StateExpired
		}
	}
}

// checkLimits refuses r past the pending caps of its target and
// requester (all expired already).
func checkLimits(all []Request, r Request) error {
	var target, mine int
	for _, o := range all {
		if o.State != StatePending {
			continue
		}
		if o.Target == r.Target {
			target++
		}
		if SamePerson(o.Requester, r.Requester) {
			mine++
		}
	}
	switch {
	case mine >= MaxPendingPerRequester:
		return &LimitError{Per: LimitRequester, Pending: mine}
	case target >= MaxPendingPerTarget:
		return &LimitError{Per: LimitTarget, Pending: target}
	}
	return nil
}

// Get returns request id of target.
func (s *Store) Get(ctx context.Context, target, id string) (Request, error) {
	all, err := s.List(ctx, target)
	if err != nil {
		return Request{}, err
	}
	for _, r := range all {
		if r.ID == id {
			return r, nil
		}
	}
	return Request{}, ErrNotFound
}

// Create stores r as a new pending request, with a fresh ID and the time.
func (s *Store) Create(ctx context.Context, r Request) (Request, error) {
	r.ID, r.State, r.Created = newID(), StatePending, s.now().UTC()
	r.Decider, r.Decided = nil, time.Time{}
	// Typed text others read (the approver, the commit): without format
	// characters (bidi controls, zero-width).
	r.Reason = textfmt.Clean(r.Reason, true)
	if len(r.Reason) > MaxReasonBytes {
		r.Reason = r.Reason[:MaxReasonBytes]
	}
	err := s.update(ctx, func(all []Request) ([]Request, error) {
		if err := checkLimits(all, r); err != nil {
			return nil, err
		}
		return trim(append(all, r)), nil
	})
	return r, err
}

// Decide moves pending request id of target to approved or rejected by
// decider, in one compare-and-swap: of two deciders at once, one wins and
// the other gets a *DecidedError. check, called with the request as
// stored, may refuse (the requester deciding their own request); its error
// is returned and nothing is written.
func (s *Store) Decide(ctx context.Context, target, id string, state RequestState, decider audit.Actor, check func(Request) error) (Request, error) {
	var out Request
	err := s.update(ctx, func(all []Request) ([]Request, error) {
		i := slices.IndexFunc(all, func(r Request) bool { return r.ID == id && r.Target == target })
		if i < 0 {
			return nil, ErrNotFound
		}
		if all[i].State != StatePending {
			return nil, &DecidedError{State: all[i].State}
		}
		if check != nil {
			if err := check(all[i]); err != nil {
				return nil, err
			}
		}
		all[i].State, all[i].Decider, all[i].Decided = state, &decider, s.now().UTC()
		out = all[i]
		return all, nil
	})
	return out, err
}

// Finish records what the approval of request id wrote (or why it
// failed): branch, compare URL and commit, or a message with StateFailed.
func (s *Store) Finish(ctx context.Context, target, id string, state RequestState, branch, compareURL, commit, message string) error {
	return s.update(ctx, func(all []Request) ([]Request, error) {
		i := slices.IndexFunc(all, func(r Request) bool { return r.ID == id && r.Target == target })
		if i < 0 {
			return nil, ErrNotFound
		}
		all[i].State, all[i].Branch, all[i].CompareURL, all[i].Commit, all[i].Message = state, branch, compareURL, commit, message
		return all, nil
	})
}

// update applies change to the stored requests by a signed
// compare-and-swap; change is called once per attempt.
func (s *Store) update(ctx context.Context, change func([]Request) ([]Request, error)) error {
	err := s.doc.Update(ctx, func(cur stored) (stored, error) {
		expire(cur.Requests, s.now())
		next, err := change(cur.Requests)
		return stored{Requests: next}, err
	})
	if tl, ok := errors.AsType[*cmstore.TooLargeError](err); ok {
		return fmt.Errorf("promotion: the requests would take %d bytes, more than %d: approve or reject pending requests first", tl.Bytes, tl.Max)
	}
	return err
}

// trim drops the oldest decided requests past MaxRequests.
func trim(all []Request) []Request {
	for len(all) > MaxRequests {
		i := slices.IndexFunc(all, func(r Request) bool { return r.State != StatePending })
		if i < 0 {
			break // all pending: the byte cap refuses more
		}
		all = slices.Delete(all, i, i+1)
	}
	return all
}

// newID is a fresh request ID, "pr-" and 8 hex digits.
func newID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return "pr-" + hex.EncodeToString(b)
}
