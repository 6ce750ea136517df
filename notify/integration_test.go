package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/platformtest"
)

// TestOnControlPlane runs the store and the sender against the real
// control plane: optimistic concurrency of two writers, and two replicas
// of which exactly one delivers each event.
func TestOnControlPlane(t *testing.T) {
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{testNS}})
	client := func() kubernetes.Interface {
		return kubernetes.NewForConfigOrDie(platformtest.AdminConfig(p.Cluster.Config))
	}

	t.Run("two writers lose nothing", func(t *testing.T) {
		hosts := []string{"hooks.example"}
		a, b := NewStore(client(), testNS, hosts), NewStore(client(), testNS, hosts)
		const each = 10 // 20 in all: the most one scope may hold
		var wg sync.WaitGroup
		errs := make(chan error, 2*each)
		for w, store := range []*Store{a, b} {
			wg.Go(func() {
				for i := range each {
					_, err := store.Create(context.Background(), Subscription{ID: fmt.Sprintf("w%d-%02d", w, i), Triggers: []Trigger{{Type: TriggerDrift}},
						Provider: envconfig.ProviderSlack, URL: "https://hooks.example/services/", Author: fmt.Sprintf("writer-%d", w)})
					if err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("Create: %v", err)
		}
		got, err := a.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2*each {
			t.Errorf("List() has %d subscriptions, want %d: a write was lost", len(got), 2*each)
		}
		// Clean up for the next subtest.
		for _, s := range got {
			if err := b.Delete(context.Background(), s.ID); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("two replicas, one delivery", func(t *testing.T) {
		key := "hmac-key-two-replicas"
		rcv := newReceiver(t, []byte(key), nil)
		hosts := []string{rcv.host(t)}
		admin := client()
		putSecret(t, admin, "notify-keys", map[string]string{"checkout": key})
		createSub(t, NewStore(admin, testNS, hosts), Subscription{ID: "checkout", Scope: Scope{App: "checkout"},
			Triggers: []Trigger{{Type: TriggerDegraded}, {Type: TriggerRecovered}}, Provider: envconfig.ProviderWebhook, URL: rcv.URL + "/hook",
			SecretRef: &envconfig.SecretRef{Name: "notify-keys", Key: "checkout"}, Author: "ada"})
		r1, stop1 := startSender(t, client(), hosts, "replica-1", nil, nil)
		r2, stop2 := startSender(t, client(), hosts, "replica-2", nil, nil)
		waitFor(t, "a leader", func() bool { return r1.Leading() || r2.Leading() })
		if r1.Leading() && r2.Leading() {
			t.Fatal("both replicas lead")
		}
		ev := Event{Trigger: TriggerDegraded, App: "checkout", Cluster: "c1", Namespace: "shop", Revision: "r1", Message: "CrashLoopBackOff"}
		// Both replicas see the transition, as both watch the cluster.
		r1.Notify(ev)
		r2.Notify(ev)
		waitFor(t, "the delivery", func() bool { return rcv.count() >= 1 })
		rec := ev
		rec.Trigger = TriggerRecovered
		r1.Notify(rec)
		r2.Notify(rec)
		waitFor(t, "recovered", func() bool { return rcv.count() >= 2 })
		// A marker after them: once it arrived, the leader has handled
		// every event before it.
		marker := ev
		marker.Revision = "marker"
		r1.Notify(marker)
		r2.Notify(marker)
		waitFor(t, "the marker", func() bool { return rcv.got(t, "marker") })
		if got := rcv.revisions(t); !slices.Equal(got, []string{"r1", "r1", "marker"}) {
			t.Fatalf("received %q, want r1 degraded once, recovered once, then the marker", got)
		}

		// The leader goes away; the other takes over and, having read the
		// delivery log, does not send r1 again.
		leader, follower, stopLeader := r1, r2, stop1
		if r2.Leading() {
			leader, follower, stopLeader = r2, r1, stop2
		}
		stopLeader()
		if leader.Leading() {
			t.Fatal("a stopped replica still leads")
		}
		waitFor(t, "the other replica to take over", follower.Leading)
		follower.Notify(ev)
		next := ev
		next.Revision = "r2"
		follower.Notify(next)
		// r2, notified after r1, is the marker: once it arrived, r1 was
		// handled (and not sent again, read from the delivery log).
		waitFor(t, "r2", func() bool { return rcv.got(t, "r2") })
		if got := rcv.revisions(t); !slices.Equal(got, []string{"r1", "r1", "marker", "r2"}) {
			t.Errorf("received %q, want r1 not sent again after the handover, then r2", got)
		}
		if errs := rcv.signatureErrors(); len(errs) > 0 {
			t.Errorf("signature errors: %v", errs)
		}
		var triggers []string
		for _, b := range rcv.bodies {
			var p webhookPayload
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatal(err)
			}
			triggers = append(triggers, string(p.Event.Trigger)+"@"+p.Event.Revision)
		}
		if fmt.Sprint(triggers) != "[degraded@r1 recovered@r1 degraded@marker degraded@r2]" {
			t.Errorf("deliveries = %v, want [degraded@r1 recovered@r1 degraded@marker degraded@r2]", triggers)
		}
	})
}
