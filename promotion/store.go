package promotion

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/internal/cmcas"
	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// The ConfigMap of the promotion requests, in deploy-web's own namespace
// (the plan history's).
const (
	ConfigMapName = "deploy-web-promotions"
	// DataKey is the ConfigMap key of the requests' JSON.
	DataKey = "promotions.json"
	// LabelKind marks deploy-web's own ConfigMaps.
	LabelKind = "deploy-web.hanzo.ai/kind"
	kindValue = "promotions"
)

// Limits of the store: a ConfigMap holds at most 1 MiB. Past MaxRequests
// the oldest decided requests are dropped; pending ones never are.
const (
	MaxRequests   = 100
	MaxStoreBytes = 900 << 10
	// MaxReasonBytes caps a request's reason.
	MaxReasonBytes = 1 << 10
)

// RequestState is where a request stands.
type RequestState string

// The states: a request is pending until one approver approves or rejects
// it; an approved one is written (Commit) or failed (Message).
const (
	StatePending  RequestState = "pending"
	StateApproved RequestState = "approved"
	StateRejected RequestState = "rejected"
	StateFailed   RequestState = "failed"
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

func (e *DecidedError) Error() string {
	return "promotion: the request is already " + string(e.State) + ": another person decided it first"
}

type stored struct {
	Requests []Request `json:"requests"`
}

// Store keeps the promotion requests in one ConfigMap; every write is a
// compare-and-swap (internal/cmcas), so replicas and two approvers at once
// never both decide one request.
type Store struct {
	cms       typedcorev1.ConfigMapsGetter
	namespace string
	now       func() time.Time
}

// NewStore returns the store in namespace (deploy-web's own).
func NewStore(cms typedcorev1.ConfigMapsGetter, namespace string) *Store {
	return &Store{cms: cms, namespace: namespace, now: time.Now}
}

func (s *Store) key() cmcas.Key {
	return cmcas.Key{Owner: "promotion", Namespace: s.namespace, Name: ConfigMapName, Key: DataKey,
		Labels: map[string]string{LabelKind: kindValue}, FieldManager: appcr.FieldManager}
}

// List returns the requests of target ("" for all), newest first.
func (s *Store) List(ctx context.Context, target string) ([]Request, error) {
	raw, ok, err := cmcas.Get(ctx, s.cms, s.key())
	if err != nil {
		return nil, err
	}
	all, err := s.decode(raw, ok)
	if err != nil {
		return nil, err
	}
	var out []Request
	for i := len(all) - 1; i >= 0; i-- {
		if target == "" || all[i].Target == target {
			out = append(out, all[i])
		}
	}
	return out, nil
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

func (s *Store) update(ctx context.Context, change func([]Request) ([]Request, error)) error {
	return cmcas.Update(ctx, s.cms, s.key(), func(raw string, ok bool) (string, error) {
		all, err := s.decode(raw, ok)
		if err != nil {
			return "", err
		}
		next, err := change(all)
		if err != nil {
			return "", err
		}
		data, err := json.Marshal(stored{Requests: next})
		if err != nil {
			return "", fmt.Errorf("promotion: encode: %w", err)
		}
		if len(data) > MaxStoreBytes {
			return "", fmt.Errorf("promotion: the requests would take %d bytes, more than %d: approve or reject pending requests first", len(data), MaxStoreBytes)
		}
		return string(data), nil
	})
}

func (s *Store) decode(raw string, ok bool) ([]Request, error) {
	if !ok {
		return nil, nil
	}
	where := fmt.Sprintf("ConfigMap %s/%s key %s", s.namespace, ConfigMapName, DataKey)
	if len(raw) > MaxStoreBytes+(100<<10) {
		return nil, fmt.Errorf("promotion: %s: %d bytes, more than the store writes", where, len(raw))
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.DisallowUnknownFields()
	var st stored
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("promotion: %s: %w (fix or delete the ConfigMap)", where, err)
	}
	return st.Requests, nil
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
