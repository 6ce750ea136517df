package promotion

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/internal/cmstore"
	"github.com/hanzoai/deploy-web/internal/cmstore/cmstoretest"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
)

func TestStoreRequestAndDecide(t *testing.T) {
	ctx := context.Background()
	s := NewStore(fake.NewClientset().CoreV1(), "deploy-web", signtest.Keys())
	alice := audit.Actor{Email: "alice@example.com", Subject: "a"}
	bob := audit.Actor{Email: "bob@example.com", Subject: "b"}
	r, err := s.Create(ctx, Request{Target: "prod", Source: "staging", Apps: []AppVersion{{App: "api", Image: "reg/api:1.5.0", Version: "1.5.0"}}, Requester: alice})
	if err != nil {
		t.Fatal(err)
	}
	if r.State != StatePending || r.ID == "" {
		t.Fatalf("Create() = %+v, want a pending request with an id", r)
	}
	notSelf := func(req Request) error {
		if SamePerson(req.Requester, alice) {
			return errors.New("own request")
		}
		return nil
	}
	// The requester's own approval is refused by check, and nothing is written.
	if _, err := s.Decide(ctx, "prod", r.ID, StateApproved, alice, notSelf); err == nil {
		t.Fatalf("Decide(by the requester) = nil error, want the check's refusal")
	}
	if got, _ := s.Get(ctx, "prod", r.ID); got.State != StatePending {
		t.Fatalf("after a refused decision the request is %s, want pending", got.State)
	}
	// Another target does not find it.
	if _, err := s.Decide(ctx, "staging", r.ID, StateApproved, bob, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("Decide(another target) = %v, want ErrNotFound", err)
	}
	got, err := s.Decide(ctx, "prod", r.ID, StateApproved, bob, nil)
	if err != nil || got.State != StateApproved || got.Decider == nil || got.Decider.Email != "bob@example.com" {
		t.Fatalf("Decide(bob) = %+v, %v; want approved by bob", got, err)
	}
	var de *DecidedError
	if _, err := s.Decide(ctx, "prod", r.ID, StateRejected, bob, nil); !errors.As(err, &de) || de.State != StateApproved {
		t.Errorf("a second Decide = %v, want a *DecidedError (approved)", err)
	}
	if err := s.Finish(ctx, "prod", r.ID, StateApproved, "deploy-web/promote-api-1.5.0", "", "abc", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, "prod", r.ID); got.Branch != "deploy-web/promote-api-1.5.0" {
		t.Errorf("after Finish the branch is %q", got.Branch)
	}
}

// TestStoreOneDecisionUnderRace: approvers deciding one request at once
// (as two replicas would) leave exactly one decision.
func TestStoreOneDecisionUnderRace(t *testing.T) {
	ctx := context.Background()
	s := NewStore(cmstoretest.CASClientset().CoreV1(), "deploy-web", signtest.Keys())
	r, err := s.Create(ctx, Request{Target: "prod", Source: "staging", Requester: audit.Actor{Subject: "req"}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.Decide(ctx, "prod", r.ID, StateApproved, audit.Actor{Subject: fmt.Sprint("approver-", i)}, nil)
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		var de *DecidedError
		switch {
		case err == nil:
			won++
		case errors.As(err, &de):
		default:
			t.Errorf("Decide = %v, want nil or a *DecidedError", err)
		}
	}
	if won != 1 {
		t.Errorf("%d approvers won the decision, want exactly 1", won)
	}
}

func TestStoreTrimKeepsPending(t *testing.T) {
	ctx := context.Background()
	s := NewStore(fake.NewClientset().CoreV1(), "deploy-web", signtest.Keys())
	first, err := s.Create(ctx, Request{Target: "prod", Source: "staging", Requester: audit.Actor{Subject: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	for range MaxRequests + 5 {
		r, err := s.Create(ctx, Request{Target: "prod", Source: "staging", Requester: audit.Actor{Subject: "x"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Decide(ctx, "prod", r.ID, StateRejected, audit.Actor{Subject: "y"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) > MaxRequests+1 {
		t.Errorf("List() has %d requests, want at most %d", len(all), MaxRequests+1)
	}
	if got, err := s.Get(ctx, "prod", first.ID); err != nil || got.State != StatePending {
		t.Errorf("the oldest pending request = %+v, %v; want it kept", got, err)
	}
}

// TestStorePendingExpires: a request pending for PendingTTL reads as
// expired and can no longer be decided; it no longer counts against the
// caps.
func TestStorePendingExpires(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	s := NewStore(fake.NewClientset().CoreV1(), "deploy-web", signtest.Keys())
	s.now = func() time.Time { return now }
	alice := audit.Actor{Email: "alice@example.com"}
	r, err := s.Create(ctx, Request{Target: "prod", Source: "staging", Requester: alice})
	if err != nil {
		t.Fatal(err)
	}
	now = t0.Add(PendingTTL - time.Second)
	if got, _ := s.Get(ctx, "prod", r.ID); got.State != StatePending {
		t.Errorf("a request a second short of %s: state %s, want pending", PendingTTL, got.State)
	}
	now = t0.Add(PendingTTL)
	if got, _ := s.Get(ctx, "prod", r.ID); got.State != StateExpired {
		t.Errorf("a request %s old: state %s, want expired", PendingTTL, got.State)
	}
	_, err = s.Decide(ctx, "prod", r.ID, StateApproved, audit.Actor{Email: "bob@example.com"}, nil)
	if de := (*DecidedError)(nil); !errors.As(err, &de) || de.State != StateExpired || !strings.Contains(err.Error(), "expired") {
		t.Errorf("Decide(an expired request) = %v, want a *DecidedError saying it expired", err)
	}
	for range MaxPendingPerRequester {
		if _, err := s.Create(ctx, Request{Target: "prod", Source: "staging", Requester: alice}); err != nil {
			t.Fatalf("Create() with only an expired request of the requester = %v, want it stored", err)
		}
	}
}

// TestStorePendingCaps: a requester has at most MaxPendingPerRequester
// pending requests, an environment at most MaxPendingPerTarget; decided
// requests do not count.
func TestStorePendingCaps(t *testing.T) {
	ctx := context.Background()
	s := NewStore(fake.NewClientset().CoreV1(), "deploy-web", signtest.Keys())
	alice := audit.Actor{Email: "alice@example.com"}
	var ids []string
	for range MaxPendingPerRequester {
		r, err := s.Create(ctx, Request{Target: "prod", Source: "staging", Requester: alice})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	_, err := s.Create(ctx, Request{Target: "prod", Source: "staging", Requester: audit.Actor{Email: "ALICE@example.com"}})
	if le := (*LimitError)(nil); !errors.As(err, &le) || le.Per != LimitRequester || !strings.Contains(le.Public(), "you have 5 pending") {
		t.Fatalf("Create(requester over the cap) = %v, want a *LimitError of the requester", err)
	}
	if _, err := s.Decide(ctx, "prod", ids[0], StateRejected, audit.Actor{Email: "bob@example.com"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, Request{Target: "prod", Source: "staging", Requester: alice}); err != nil {
		t.Errorf("Create() after one was decided = %v, want it stored", err)
	}
	// Others fill the environment to its cap.
	for i := MaxPendingPerRequester; i < MaxPendingPerTarget; i++ {
		if _, err := s.Create(ctx, Request{Target: "prod", Source: "staging", Requester: audit.Actor{Subject: fmt.Sprint("p", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = s.Create(ctx, Request{Target: "prod", Source: "staging", Requester: audit.Actor{Subject: "late"}})
	if le := (*LimitError)(nil); !errors.As(err, &le) || le.Per != LimitTarget {
		t.Errorf("Create(environment over the cap) = %v, want a *LimitError of the environment", err)
	}
	if _, err := s.Create(ctx, Request{Target: "staging", Source: "dev", Requester: audit.Actor{Subject: "late"}}); err != nil {
		t.Errorf("Create(into another environment) = %v, want it stored", err)
	}
}

// TestStoreHandEditCannotBeApproved: a pending request edited through
// the API (another version put in) reads as tampered: it cannot be
// decided, and the list says why.
func TestStoreHandEditCannotBeApproved(t *testing.T) {
	ctx := context.Background()
	cs := cmstoretest.CASClientset()
	s := NewStore(cs.CoreV1(), "deploy-web", signtest.Keys())
	r, err := s.Create(ctx, Request{Target: "prod", Source: "staging", Requester: audit.Actor{Subject: "req"},
		Apps: []AppVersion{{App: "api", Image: "reg/api:1.5.0", Version: "1.5.0"}}})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps("deploy-web").Get(ctx, ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data[DataKey] = strings.ReplaceAll(cm.Data[DataKey], "1.5.0", "6.6.6")
	if _, err := cs.CoreV1().ConfigMaps("deploy-web").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decide(ctx, "prod", r.ID, StateApproved, audit.Actor{Subject: "approver"}, nil); !errors.As(err, new(*cmstore.TamperedError)) {
		t.Errorf("Decide(an edited request) = %v, want a *cmstore.TamperedError", err)
	}
	if _, err := s.List(ctx, "prod"); !errors.As(err, new(*cmstore.TamperedError)) {
		t.Errorf("List() over an edit = %v, want a *cmstore.TamperedError", err)
	}
}

// TestStoreCreateCleansReason: a request's reason, which the approver and
// the commit read, is stored without format characters.
func TestStoreCreateCleansReason(t *testing.T) {
	ctx := context.Background()
	s := NewStore(fake.NewClientset().CoreV1(), "deploy-web", signtest.Keys())
	r, err := s.Create(ctx, Request{Target: "prod", Source: "staging", Apps: []AppVersion{{App: "api", Image: "reg/api:1.5.0", Version: "1.5.0"}},
		Requester: audit.Actor{Email: "alice@example.com", Subject: "a"}, Reason: "fix \u202egnp.exe\u202c\nsee INC-1"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "prod", r.ID)
	if err != nil || got.Reason != "fix gnp.exe\nsee INC-1" {
		t.Fatalf("Get() = %+v, %v; want the reason without its bidi override", got, err)
	}
}
