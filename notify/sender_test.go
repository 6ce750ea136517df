package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hanzoai/deploy-web/envconfig"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
)

const testNS = "deploy-web"

// syncBuffer is a log sink tests read while senders write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func putSecret(t *testing.T, kube kubernetes.Interface, name string, data map[string]string) {
	t.Helper()
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS}, StringData: data, Data: map[string][]byte{}}
	for k, v := range data {
		sec.Data[k] = []byte(v)
	}
	if _, err := kube.CoreV1().Secrets(testNS).Create(context.Background(), sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// startSender runs a sender until the returned stop is called; stop waits
// for Run to end (which writes the delivery logs).
func startSender(t *testing.T, kube kubernetes.Interface, hosts []string, identity string, log *slog.Logger, onLead func(context.Context)) (*Sender, func()) {
	t.Helper()
	s, err := NewSender(kube, declareStored(t, NewStore(kube, testNS, hosts)), Options{
		Namespace: testNS, Hosts: hosts, Identity: identity, Workers: 1, MaxAttempts: 2, Backoff: time.Millisecond,
		FlushInterval: 200 * time.Millisecond, LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 100 * time.Millisecond,
		Log: log, OnLead: onLead,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return s, stop
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func createSub(t *testing.T, store *Store, sub Subscription) Subscription {
	t.Helper()
	got, err := store.WithKeys(declare(sub), nil).Create(context.Background(), sub)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// declare is the notifications.keys of a test whose subscriptions are
// subs: each Secret key a subscription names declared for its provider
// and URL, anywhere (the first subscription naming a key wins).
func declare(subs ...Subscription) []envconfig.NotificationKey {
	var keys []envconfig.NotificationKey
	for _, sub := range subs {
		if sub.SecretRef != nil && !slices.ContainsFunc(keys, func(k envconfig.NotificationKey) bool { return k.SecretRef == *sub.SecretRef }) {
			keys = append(keys, envconfig.NotificationKey{SecretRef: *sub.SecretRef, Provider: sub.Provider, URLPrefix: sub.URL})
		}
	}
	return keys
}

// declareStored returns store with the keys of the subscriptions it holds
// now declared (declare): the configuration of a test's sender.
func declareStored(t *testing.T, store *Store) *Store {
	t.Helper()
	subs, err := store.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return store.WithKeys(declare(subs...), nil)
}

// TestSenderDedupAcrossRestart: one message per (subscription, App,
// trigger, revision), also after the sender restarts.
func TestSenderDedupAcrossRestart(t *testing.T) {
	key := "hmac-key-d3dup-0123456789"
	rcv := newReceiver(t, []byte(key), nil)
	hosts := []string{rcv.host(t)}
	kube := fake.NewClientset()
	putSecret(t, kube, "notify-keys", map[string]string{"checkout": key})
	store := NewStore(kube, testNS, hosts)
	createSub(t, store, Subscription{ID: "s1", Scope: Scope{App: "checkout"}, Triggers: []Trigger{{Type: TriggerApplyFailed}},
		Provider: envconfig.ProviderWebhook, URL: rcv.URL + "/hook", SecretRef: &envconfig.SecretRef{Name: "notify-keys", Key: "checkout"}, Author: "ada"})

	ev := Event{Trigger: TriggerApplyFailed, App: "checkout", Cluster: "c1", Namespace: "shop", Revision: "r1", Message: "apply failed"}
	s1, stop1 := startSender(t, kube, hosts, "replica-a", nil, nil)
	waitFor(t, "replica-a to lead", s1.Leading)
	s1.Notify(ev)
	s1.Notify(ev)
	other := ev
	other.App = "cart" // outside the scope
	s1.Notify(other)
	marker := ev
	marker.Revision = "r2"
	s1.Notify(marker)
	waitFor(t, "2 deliveries", func() bool { return rcv.count() >= 2 })
	stop1()
	if errs := rcv.signatureErrors(); len(errs) > 0 {
		t.Errorf("signature errors: %v", errs)
	}
	log, err := store.DeliveryLog(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0].Status != 200 || log[0].Trigger != TriggerApplyFailed || log[0].Attempts != 1 {
		t.Errorf("DeliveryLog = %+v, want 2 entries, status 200 after 1 attempt", log)
	}

	// A new sender (a restart): r1 and r2 went out before; r3 is new.
	// On OnLead the wiring replays the current state: here, both events.
	led := make(chan struct{}, 1)
	s2, _ := startSender(t, kube, hosts, "replica-b", nil, func(context.Context) { led <- struct{}{} })
	select {
	case <-led:
	case <-time.After(20 * time.Second):
		t.Fatal("OnLead was not called")
	}
	if !s2.Leading() {
		t.Fatal("OnLead called while not leading")
	}
	s2.Notify(ev)
	s2.Notify(marker)
	third := ev
	third.Revision = "r3"
	s2.Notify(third)
	// r3, notified last, is the marker: once it arrived, r1 and r2 were
	// handled.
	waitFor(t, "the third delivery", func() bool { return rcv.got(t, "r3") })
	if n := rcv.count(); n != 3 {
		t.Fatalf("receiver got %d requests, want 3 (r1, r2, then r3 after the restart)", n)
	}
	var revs []string
	for _, b := range rcv.bodies {
		var p webhookPayload
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		revs = append(revs, p.Event.Revision)
	}
	if strings.Join(revs, ",") != "r1,r2,r3" {
		t.Errorf("revisions delivered = %v, want r1,r2,r3", revs)
	}
}

// TestSenderNotLeadingDrops: a replica without the Lease sends nothing.
func TestSenderNotLeadingDrops(t *testing.T) {
	rcv := newReceiver(t, nil, nil)
	hosts := []string{rcv.host(t)}
	kube := fake.NewClientset()
	store := NewStore(kube, testNS, hosts)
	createSub(t, store, Subscription{ID: "s1", Triggers: []Trigger{{Type: TriggerDrift}}, Provider: envconfig.ProviderSlack, URL: rcv.URL, Author: "ada"})
	s, err := NewSender(kube, store, Options{Namespace: testNS, Hosts: hosts, Identity: "idle"})
	if err != nil {
		t.Fatal(err)
	}
	s.Notify(Event{Trigger: TriggerDrift, App: "checkout"})
	if len(s.queue) != 0 || rcv.count() != 0 {
		t.Errorf("a sender that never led queued %d events, receiver got %d; want 0 and 0", len(s.queue), rcv.count())
	}
}

// TestSenderDebounceAndRecovered: degraded waits its "for"; a recovery
// before then sends neither degraded nor recovered.
func TestSenderDebounceAndRecovered(t *testing.T) {
	rcv := newReceiver(t, nil, nil)
	hosts := []string{rcv.host(t)}
	kube := fake.NewClientset()
	store := NewStore(kube, testNS, hosts)
	createSub(t, store, Subscription{ID: "s1", Triggers: []Trigger{{Type: TriggerDegraded, For: 1}, {Type: TriggerRecovered}},
		Provider: envconfig.ProviderSlack, URL: rcv.URL, Author: "ada"})
	s, _ := startSender(t, kube, hosts, "replica-a", nil, nil)
	waitFor(t, "lead", s.Leading)
	app := Event{App: "checkout", Cluster: "c1", Namespace: "shop", Revision: "r1"}
	deg, rec := app, app
	deg.Trigger, rec.Trigger = TriggerDegraded, TriggerRecovered
	s.Notify(deg)
	s.Notify(rec) // within the second: nothing at all
	// Both routed, nothing held or on its way: the blip can send nothing
	// any more (an explicit signal, not a wait).
	waitFor(t, "the blip routed, nothing held", func() bool { return s.idle(2) })
	if n := rcv.count(); n != 0 {
		t.Fatalf("after a blip: receiver got %d requests, want 0", n)
	}
	deg.Revision, rec.Revision = "r2", "r2"
	s.Notify(deg)
	waitFor(t, "degraded after its for", func() bool { return rcv.count() == 1 })
	s.Notify(rec)
	waitFor(t, "recovered", func() bool { return rcv.count() == 2 })
	// checkout degrades, then leaves Degraded (settled) before its for:
	// its message is dropped, and its recovery later is not announced.
	// Orders, not times, tell: cart degrades just after, so checkout's
	// held message would have come first.
	deg.Revision, rec.Revision = "r3", "r3"
	settled := deg
	settled.Trigger = triggerSettled
	cartDeg, cartRec := deg, rec
	cartDeg.App, cartRec.App = "cart", "cart"
	s.Notify(deg)
	s.Notify(settled)
	s.Notify(cartDeg)
	waitFor(t, "cart's degraded", func() bool { return rcv.count() == 3 })
	s.Notify(rec)
	s.Notify(cartRec)
	waitFor(t, "cart's recovered", func() bool { return rcv.count() == 4 })
	for i, want := range []string{"checkout is degraded", "checkout recovered", "cart is degraded", "cart recovered"} {
		if !strings.Contains(string(rcv.bodies[i]), want) {
			t.Errorf("message %d = %s, want %q", i, rcv.bodies[i], want)
		}
	}
}

// TestSecretNeverShown: the Secret's value (a Slack URL's secret path, a
// webhook's HMAC key) appears in no log line, error, delivery log or JSON,
// whatever goes wrong.
func TestSecretNeverShown(t *testing.T) {
	const slackSecret = "T0SECRET/B0SECRET/xoxSECRETtoken"
	const hmacKey = "hmacSECRETkey-0123456789"
	bad := newReceiver(t, nil, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusBadRequest) })
	hosts := []string{bad.host(t), "127.0.0.1:1"}
	kube := fake.NewClientset()
	putSecret(t, kube, "notify-keys", map[string]string{"slack": slackSecret + "\n", "hmac": hmacKey, "slack2": slackSecret, "hop": "@evil.example/" + slackSecret, "weak": "SECRETshort"})
	store := NewStore(kube, testNS, hosts)
	subs := []Subscription{
		{ID: "rejected", Provider: envconfig.ProviderSlack, URL: bad.URL + "/services/", SecretRef: &envconfig.SecretRef{Name: "notify-keys", Key: "slack"}},
		{ID: "refused", Provider: envconfig.ProviderSlack, URL: "http://127.0.0.1:1/services/", SecretRef: &envconfig.SecretRef{Name: "notify-keys", Key: "slack2"}},
		{ID: "hop", Provider: envconfig.ProviderSlack, URL: bad.URL, SecretRef: &envconfig.SecretRef{Name: "notify-keys", Key: "hop"}},
		{ID: "webhook", Provider: envconfig.ProviderWebhook, URL: bad.URL + "/hook", SecretRef: &envconfig.SecretRef{Name: "notify-keys", Key: "hmac"}},
		{ID: "nokey", Provider: envconfig.ProviderWebhook, URL: bad.URL + "/hook", SecretRef: &envconfig.SecretRef{Name: "notify-keys", Key: "absent"}},
		{ID: "weak", Provider: envconfig.ProviderWebhook, URL: bad.URL + "/hook", SecretRef: &envconfig.SecretRef{Name: "notify-keys", Key: "weak"}},
	}
	for _, sub := range subs {
		sub.Triggers, sub.Author = []Trigger{{Type: TriggerDrift}}, "ada"
		createSub(t, store, sub)
	}
	var logs syncBuffer
	s, stop := startSender(t, kube, hosts, "replica-a", slog.New(slog.NewJSONHandler(&logs, nil)), nil)
	waitFor(t, "lead", s.Leading)
	var outputs []string
	for _, sub := range subs {
		entry, err := s.SendTest(context.Background(), sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		if entry.Error == "" {
			t.Errorf("SendTest(%s) = %+v, want an error", sub.ID, entry)
		}
		outputs = append(outputs, entry.Error)
	}
	s.Notify(Event{Trigger: TriggerDrift, App: "checkout"})
	waitFor(t, "the drift deliveries", func() bool { return strings.Count(logs.String(), `"trigger":"drift"`) >= len(subs) })
	stop()
	if n := bad.count(); n != 4 {
		// rejected and webhook: test + drift; refused: no server; hop and
		// nokey and weak: never sent.
		t.Errorf("receiver got %d requests, want 4", n)
	}
	if got := bad.bodies; len(got) > 0 && !strings.Contains(bad.headers[0].Get("User-Agent"), "deploy-web") {
		t.Errorf("User-Agent = %q", bad.headers[0].Get("User-Agent"))
	}
	outputs = append(outputs, logs.String())
	cms, err := kube.CoreV1().ConfigMaps(testNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		b, _ := json.Marshal(cm)
		outputs = append(outputs, string(b))
	}
	all, err := store.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(all)
	outputs = append(outputs, string(b))
	for _, id := range []string{"rejected", "refused", "hop", "webhook", "nokey", "weak"} {
		l, err := store.DeliveryLog(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(l) != 2 {
			t.Errorf("DeliveryLog(%s) has %d entries, want 2 (test, drift)", id, len(l))
		}
		b, _ := json.Marshal(l)
		outputs = append(outputs, string(b))
	}
	joined := strings.Join(outputs, "\n")
	for _, secret := range []string{slackSecret, "xoxSECRETtoken", hmacKey, "T0SECRET", "SECRETshort"} {
		if strings.Contains(joined, secret) {
			t.Errorf("output holds the secret %q:\n%s", secret, joined)
		}
	}
	for _, want := range []string{"answered 400", "connection refused", "does not make a URL on host", "no such key", "shorter than 16 bytes"} {
		if !strings.Contains(joined, want) {
			t.Errorf("outputs lack %q (the failures must still be explained):\n%s", want, joined)
		}
	}
}

// TestSendTest: the "send test" button works from any replica, leading
// or not, signs like any delivery and is logged at once.
func TestSendTest(t *testing.T) {
	key := "hmac-key-test-button"
	rcv := newReceiver(t, []byte(key), nil)
	hosts := []string{rcv.host(t)}
	kube := fake.NewClientset()
	putSecret(t, kube, "notify-keys", map[string]string{"k": key})
	store := NewStore(kube, testNS, hosts)
	createSub(t, store, Subscription{ID: "s1", Scope: Scope{App: "checkout", Environment: "prod"}, Triggers: []Trigger{{Type: TriggerDrift}},
		Provider: envconfig.ProviderWebhook, URL: rcv.URL, SecretRef: &envconfig.SecretRef{Name: "notify-keys", Key: "k"}, Author: "ada"})
	s, err := NewSender(kube, declareStored(t, store), Options{Namespace: testNS, Hosts: hosts, Identity: "follower"})
	if err != nil {
		t.Fatal(err)
	}
	entry, err := s.SendTest(context.Background(), "s1")
	if err != nil || entry.Status != 200 || entry.Error != "" || entry.Trigger != TriggerTest {
		t.Fatalf("SendTest = %+v, %v; want status 200, trigger test", entry, err)
	}
	if rcv.count() != 1 || len(rcv.signatureErrors()) > 0 {
		t.Errorf("receiver got %d requests, signature errors %v; want 1, none", rcv.count(), rcv.signatureErrors())
	}
	if !strings.Contains(string(rcv.bodies[0]), `"environment":"prod"`) {
		t.Errorf("test message %s does not carry the subscription's scope", rcv.bodies[0])
	}
	log, err := store.DeliveryLog(context.Background(), "s1")
	if err != nil || len(log) != 1 || log[0].Trigger != TriggerTest {
		t.Errorf("DeliveryLog = %+v, %v; want the test entry", log, err)
	}
	if _, err := s.SendTest(context.Background(), "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SendTest(nope) = %v, want ErrNotFound", err)
	}
}

// TestSenderOneDegradedPerEpisode: an App that flaps between Degraded
// and another unhealthy state, with its revision changing meanwhile (a
// rollback while still degraded), gets one degraded message until it
// recovers; after the recovery a new degradation is told again. A
// receiver that fails is tried (its attempts) once per episode too.
func TestSenderOneDegradedPerEpisode(t *testing.T) {
	rcv := newReceiver(t, nil, nil)
	failing := newReceiver(t, nil, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	hosts := []string{rcv.host(t), failing.host(t)}
	kube := fake.NewClientset()
	store := NewStore(kube, testNS, hosts)
	both := []Trigger{{Type: TriggerDegraded}, {Type: TriggerRecovered}}
	createSub(t, store, Subscription{ID: "ok", Triggers: both, Provider: envconfig.ProviderSlack, URL: rcv.URL, Author: "ada"})
	createSub(t, store, Subscription{ID: "down", Triggers: both, Provider: envconfig.ProviderSlack, URL: failing.URL, Author: "ada"})
	s, _ := startSender(t, kube, hosts, "replica-a", nil, nil)
	waitFor(t, "lead", s.Leading)
	ev := func(tr TriggerType, rev string) Event {
		return Event{Trigger: tr, App: "checkout", Cluster: "c1", Namespace: "shop", Revision: rev}
	}
	s.Notify(ev(TriggerDegraded, "1.3.0"))
	waitFor(t, "the first degraded", func() bool { return rcv.count() == 1 })
	s.Notify(ev(triggerSettled, "1.3.0"))
	s.Notify(ev(TriggerDegraded, "1.3.0"))
	s.Notify(ev(TriggerDegraded, "1.2.0")) // rolled back, still degraded
	s.Notify(ev(TriggerRecovered, "1.2.0"))
	waitFor(t, "recovered", func() bool { return rcv.count() == 2 })
	s.Notify(ev(TriggerDegraded, "1.4.0"))
	waitFor(t, "the next degradation", func() bool { return rcv.count() == 3 })
	for i, want := range []string{"checkout is degraded", "checkout recovered", "checkout is degraded"} {
		if !strings.Contains(string(rcv.bodies[i]), want) {
			t.Errorf("message %d = %s, want %q", i, rcv.bodies[i], want)
		}
	}
	// The failing receiver: the first degradation's attempts (2), the
	// recovered's (2), the next degradation's (2); the flaps in between
	// tried nothing.
	waitFor(t, "the failing receiver's attempts", func() bool { return failing.count() >= 6 })
	if n := failing.count(); n != 6 {
		t.Errorf("failing receiver got %d requests, want 6 (2 attempts for each of degraded, recovered, degraded)", n)
	}
}

// TestSenderForgetsEpisodesOfAnEarlierTerm: what a replica told in an
// earlier term is stale when it leads again (another replica may have
// sent recovered meanwhile), so a new term starts with no episode held
// open, and a degraded message is not held back by it.
func TestSenderForgetsEpisodesOfAnEarlierTerm(t *testing.T) {
	kube := fake.NewClientset()
	s, err := NewSender(kube, NewStore(kube, testNS, nil), Options{Namespace: testNS, Identity: "replica-a"})
	if err != nil {
		t.Fatal(err)
	}
	ep := episode{"ops", appKey{"c1", "shop", "checkout"}}
	s.told[ep] = true // told in an earlier term
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.lead(ctx); close(done) }()
	waitFor(t, "the term to start", s.Leading)
	s.mu.Lock()
	held := s.told[ep]
	s.mu.Unlock()
	cancel()
	<-done
	if held {
		t.Errorf("a new term still holds the episode %v from an earlier term, want it forgotten", ep)
	}
}
