package promotion

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hanzoai/deploy-web/audit"
)

func TestStoreRequestAndDecide(t *testing.T) {
	ctx := context.Background()
	s := NewStore(fake.NewClientset().CoreV1(), "deploy-web")
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
	s := NewStore(casClientset().CoreV1(), "deploy-web")
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
	s := NewStore(fake.NewClientset().CoreV1(), "deploy-web")
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

// casClientset is a fake clientset whose ConfigMap updates compare the
// resourceVersion as the apiserver does (the plain fake takes every
// update, so concurrent writers would all "win"): a stale update gets a
// Conflict, a fresh one a new resourceVersion.
func casClientset() *fake.Clientset {
	cs := fake.NewClientset()
	var mu sync.Mutex
	gvr := corev1.SchemeGroupVersion.WithResource("configmaps")
	cs.PrependReactor("update", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		cm := a.(k8stesting.UpdateAction).GetObject().(*corev1.ConfigMap).DeepCopy()
		cur, err := cs.Tracker().Get(gvr, cm.Namespace, cm.Name)
		if err != nil {
			return true, nil, err
		}
		if rv := cur.(*corev1.ConfigMap).ResourceVersion; rv != cm.ResourceVersion {
			return true, nil, apierrors.NewConflict(corev1.Resource("configmaps"), cm.Name, fmt.Errorf("resourceVersion %q, stored %q", cm.ResourceVersion, rv))
		}
		n, _ := strconv.Atoi(cm.ResourceVersion)
		cm.ResourceVersion = strconv.Itoa(n + 1)
		if err := cs.Tracker().Update(gvr, cm, cm.Namespace); err != nil {
			return true, nil, err
		}
		return true, cm, nil
	})
	return cs
}

// TestStoreCreateCleansReason: a request's reason, which the approver and
// the commit read, is stored without format characters.
func TestStoreCreateCleansReason(t *testing.T) {
	ctx := context.Background()
	s := NewStore(fake.NewClientset().CoreV1(), "deploy-web")
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
