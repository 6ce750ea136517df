package notify

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/timeline"
)

// TestSenderHandoverReplaysDegraded: two replicas, each with its own
// timeline feed fed what it observes. replica-a leads and announces
// checkout's degradation; it stops, and while no replica leads cart
// degrades (both replicas see it; neither sends). replica-b takes the
// Lease and replays the Apps degraded now: cart is announced, checkout
// (delivered by replica-a, in its delivery log) is not announced again.
func TestSenderHandoverReplaysDegraded(t *testing.T) {
	key := "hmac-key-h4nd0ver-0123456789"
	rcv := newReceiver(t, []byte(key), nil)
	hosts := []string{rcv.host(t)}
	kube := fake.NewClientset()
	putSecret(t, kube, "notify-keys", map[string]string{"ops": key})
	store := NewStore(kube, testNS, hosts)
	createSub(t, store, Subscription{ID: "ops", Triggers: []Trigger{{Type: TriggerDegraded}, {Type: TriggerDrift}},
		Provider: envconfig.ProviderWebhook, URL: rcv.URL + "/hook", SecretRef: &envconfig.SecretRef{Name: "notify-keys", Key: "ops"}, Author: "ada"})
	at := time.Now().Add(-time.Minute)
	degrade := func(app string, after time.Duration) timeline.Entry {
		return timeline.Entry{Time: at.Add(after), App: timeline.App{Cluster: "c1", Namespace: "shop", Name: app},
			Kind: timeline.KindHealth, From: "Healthy", To: "Degraded", Revision: "1.4.0"}
	}
	var feedA, feedB TimelineFeed
	// observe is a transition both replicas see: each feed hands its
	// events to its replica's sender, which drops them unless it leads.
	observe := func(e timeline.Entry, a, b *Sender) {
		for _, ev := range feedA.Events(e) {
			a.Notify(ev)
		}
		for _, ev := range feedB.Events(e) {
			b.Notify(ev)
		}
	}

	a, stopA := startSender(t, kube, hosts, "replica-a", nil, func(context.Context) {})
	waitFor(t, "replica-a to lead", a.Leading)
	b, err := NewSender(kube, declareStored(t, NewStore(kube, testNS, hosts)), Options{Namespace: testNS, Hosts: hosts, Identity: "replica-b",
		Workers: 1, MaxAttempts: 2, Backoff: time.Millisecond, FlushInterval: 200 * time.Millisecond,
		LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 100 * time.Millisecond,
		OnLead: func(context.Context) {}})
	if err != nil {
		t.Fatal(err)
	}
	observe(degrade("checkout", 0), a, b)
	waitFor(t, "checkout's degraded from replica-a", func() bool { return rcv.count() == 1 })
	stopA() // releases the Lease and writes the delivery log

	observe(degrade("cart", time.Second), a, b) // nobody leads
	if b.Leading() || rcv.count() != 1 {
		t.Fatalf("during the handover: replica-b leads = %v, receiver got %d; want false, 1", b.Leading(), rcv.count())
	}

	// replica-b takes over; the wiring's OnLead replays its feed.
	replayed := make(chan struct{})
	b.o.OnLead = func(context.Context) {
		feedB.Replay(b.Notify)
		close(replayed)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-replayed:
	case <-time.After(20 * time.Second):
		t.Fatal("replica-b did not take the Lease over")
	}
	// A marker after the replay: one worker delivers in queue order, so
	// once it arrives, every replayed event has been delivered or dropped.
	b.Notify(Event{Trigger: TriggerDrift, App: "marker", Cluster: "c1", Namespace: "shop", Revision: "1"})
	waitFor(t, "the marker", func() bool { return rcv.count() >= 3 })

	var got []string
	rcv.mu.Lock()
	for _, body := range rcv.bodies {
		var p webhookPayload
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatal(err)
		}
		got = append(got, string(p.Event.Trigger)+" "+p.Event.App+" "+p.Event.Revision)
	}
	rcv.mu.Unlock()
	want := []string{"degraded checkout 1.4.0", "degraded cart 1.4.0", "drift marker 1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages across the handover (-want +got):\n%s", diff)
	}
	if errs := rcv.signatureErrors(); len(errs) > 0 {
		t.Errorf("signature errors: %v", errs)
	}
}

// TestTimelineFeedReplay: Replay hands on the Apps degraded or drifted
// now, oldest first, with the event that said so; an App that recovered,
// only left Degraded, or is clean again is not one of them.
func TestTimelineFeedReplay(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	health := func(app string, min int, from, to string) timeline.Entry {
		return timeline.Entry{Time: at.Add(time.Duration(min) * time.Minute), App: timeline.App{Cluster: "c1", Namespace: "shop", Name: app},
			Kind: timeline.KindHealth, From: from, To: to, Revision: "r" + app}
	}
	drift := func(app string, min int, from, to string) timeline.Entry {
		e := health(app, min, from, to)
		e.Kind = timeline.KindDrift
		return e
	}
	var f TimelineFeed
	for _, e := range []timeline.Entry{
		health("web", 0, "Healthy", "Degraded"),
		health("checkout", 1, "Healthy", "Degraded"),
		health("cart", 2, "Healthy", "Degraded"), health("cart", 3, "Degraded", "Healthy"),
		health("api", 4, "Healthy", "Degraded"), health("api", 5, "Degraded", "Progressing"),
		health("web", 6, "Degraded", "Progressing"), health("web", 7, "Progressing", "Degraded"),
		drift("db", 8, timeline.DriftClean, timeline.DriftDrifted),
		drift("queue", 9, timeline.DriftClean, timeline.DriftDrifted), drift("queue", 10, timeline.DriftDrifted, timeline.DriftClean),
	} {
		f.Events(e)
	}
	var got []string
	f.Replay(func(ev Event) {
		got = append(got, string(ev.Trigger)+" "+ev.App+" "+ev.Revision+" "+ev.Time.Format("15:04"))
	})
	want := []string{"degraded checkout rcheckout 10:01", "degraded web rweb 10:07", "drift db rdb 10:08"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Replay (-want +got):\n%s", diff)
	}
}
