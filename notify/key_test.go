package notify

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/scope"
)

// inboxKey is the declaration of the tests: the inbox's HMAC key, for a
// webhook to http://127.0.0.1:8080/hook, about Apps of namespace shop in
// dev.
var inboxKey = envconfig.NotificationKey{SecretRef: envconfig.SecretRef{Name: "deploy-web-notify", Key: "inbox"}, Provider: envconfig.ProviderWebhook,
	URLPrefix: "http://127.0.0.1:8080/hook", Scope: scope.Scope{Environments: []string{"dev"}, Namespaces: []string{"shop"}}}

// TestCheckKey is the decision table of a subscription's Secret key:
// undeclared or outside the key's scope is forbidden (403), another
// provider or URL a mismatch (422), checked in that order.
func TestCheckKey(t *testing.T) {
	inDev := scope.Target{Cluster: "c1", Environment: "dev", Namespace: "shop", App: "web"}
	sub := func(edit func(*Subscription)) Subscription {
		s := Subscription{Provider: envconfig.ProviderWebhook, URL: "http://127.0.0.1:8080/hook", SecretRef: &envconfig.SecretRef{Name: "deploy-web-notify", Key: "inbox"}}
		if edit != nil {
			edit(&s)
		}
		return s
	}
	tests := []struct {
		name string
		keys []envconfig.NotificationKey
		sub  Subscription
		t    scope.Target
		// want: "" allowed, "forbidden" or "mismatch".
		want, text string
	}{
		{"declared, in scope", []envconfig.NotificationKey{inboxKey}, sub(nil), inDev, "", ""},
		{"below the prefix", []envconfig.NotificationKey{inboxKey}, sub(func(s *Subscription) { s.URL += "/team-a?x=1" }), inDev, "", ""},
		{"no key named", nil, sub(func(s *Subscription) { s.Provider, s.SecretRef = envconfig.ProviderSlack, nil }), inDev, "", ""},
		{"no declarations", nil, sub(nil), inDev, "forbidden", "is not declared"},
		{"another key of the Secret", []envconfig.NotificationKey{inboxKey}, sub(func(s *Subscription) { s.SecretRef.Key = "other" }), inDev, "forbidden", "Secret deploy-web-notify key other is not declared"},
		{"another Secret", []envconfig.NotificationKey{inboxKey}, sub(func(s *Subscription) { s.SecretRef.Name = "team-b" }), inDev, "forbidden", "is not declared"},
		{"another environment", []envconfig.NotificationKey{inboxKey}, sub(nil), scope.Target{Cluster: "c1", Environment: "prod", Namespace: "shop", App: "web"}, "forbidden", "may not be used for a subscription of cluster=c1 env=prod"},
		{"environment unknown", []envconfig.NotificationKey{inboxKey}, sub(nil), scope.Target{Cluster: "c1", Namespace: "shop", App: "web"}, "forbidden", "may not be used"},
		{"fleet-wide", []envconfig.NotificationKey{inboxKey}, sub(nil), scope.Target{}, "forbidden", "may not be used for a subscription of anywhere"},
		{"out of scope beats a wrong URL", []envconfig.NotificationKey{inboxKey}, sub(func(s *Subscription) { s.URL = "http://127.0.0.1:8080/steal?k=" }), scope.Target{Environment: "prod"}, "forbidden", "may not be used"},
		{"another provider", []envconfig.NotificationKey{inboxKey}, sub(func(s *Subscription) { s.Provider = envconfig.ProviderSlack }), inDev, "mismatch", `declared for provider webhook, not "slack"`},
		{"another path", []envconfig.NotificationKey{inboxKey}, sub(func(s *Subscription) { s.URL = "http://127.0.0.1:8080/steal?k=" }), inDev, "mismatch", "sends only to URLs under http://127.0.0.1:8080/hook"},
		{"a longer name", []envconfig.NotificationKey{inboxKey}, sub(func(s *Subscription) { s.URL = "http://127.0.0.1:8080/hookx" }), inDev, "mismatch", "sends only"},
		{"dot segments", []envconfig.NotificationKey{inboxKey}, sub(func(s *Subscription) { s.URL = "http://127.0.0.1:8080/hook/../steal" }), inDev, "mismatch", "sends only"},
		{"encoded dot segments", []envconfig.NotificationKey{inboxKey}, sub(func(s *Subscription) { s.URL = "http://127.0.0.1:8080/hook/%2e%2e/steal" }), inDev, "mismatch", "sends only"},
		{"another port", []envconfig.NotificationKey{inboxKey}, sub(func(s *Subscription) { s.URL = "http://127.0.0.1:8081/hook" }), inDev, "mismatch", "sends only"},
		{"unrestricted key", []envconfig.NotificationKey{{SecretRef: inboxKey.SecretRef, Provider: envconfig.ProviderWebhook, URLPrefix: inboxKey.URLPrefix}}, sub(nil), scope.Target{}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckKey(tt.keys, tt.sub, tt.t)
			var ke *KeyError
			got := ""
			if errors.As(err, &ke) {
				got = map[bool]string{true: "forbidden", false: "mismatch"}[ke.Forbidden]
			} else if err != nil {
				t.Fatalf("CheckKey = %v, want a *KeyError or nil", err)
			}
			if got != tt.want {
				t.Fatalf("CheckKey = %v (%q), want %q", err, got, tt.want)
			}
			if err != nil && !strings.Contains(ke.Message, tt.text) {
				t.Errorf("CheckKey message = %q, want it to contain %q", ke.Message, tt.text)
			}
		})
	}
}

// TestURLHasPrefix: scheme and host exact (case and default port aside),
// the path and query continuing the prefix's at a boundary, no dot
// segment.
func TestURLHasPrefix(t *testing.T) {
	tests := []struct {
		url, prefix string
		want        bool
	}{
		{"https://hooks.example/a", "https://hooks.example/a", true},
		{"https://HOOKS.example:443/a/b", "https://hooks.example/a", true},
		{"https://hooks.example/a?x=1", "https://hooks.example/a", true},
		{"https://hooks.example/ab", "https://hooks.example/a", false},
		{"https://hooks.example/services/T/B", "https://hooks.example/services/", true},
		{"https://hooks.example/anything", "https://hooks.example", true},
		{"https://hooks.example/a?sig=", "https://hooks.example/a?sig=", true},
		{"https://hooks.example/a?other=", "https://hooks.example/a?sig=", false},
		{"http://hooks.example/a", "https://hooks.example/a", false},
		{"https://evil.example/a", "https://hooks.example/a", false},
		{"https://hooks.example:8443/a", "https://hooks.example/a", false},
		{"https://hooks.example/a/../b", "https://hooks.example/a", false},
		{"https://hooks.example/a/./b", "https://hooks.example/a", false},
		{"https://hooks.example/a%2F..%2Fb", "https://hooks.example/a", false},
		{`https://hooks.example/a\..\b`, "https://hooks.example/a", false},
		{"https://hooks.example/a%2Fb", "https://hooks.example/a", false},
		{"https://u@hooks.example/a", "https://hooks.example/a", false},
		{"https://hooks.example/a#x", "https://hooks.example/a", false},
		{"https://hooks.example/A", "https://hooks.example/a", false},
	}
	for _, tt := range tests {
		if got := URLHasPrefix(tt.url, tt.prefix); got != tt.want {
			t.Errorf("URLHasPrefix(%q, %q) = %v, want %v", tt.url, tt.prefix, got, tt.want)
		}
	}
}

// TestStoreRefusesKeys: Create and Update refuse a subscription its key
// does not allow (a *KeyError), and nothing is stored or changed.
func TestStoreRefusesKeys(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewClientset()
	store := NewStore(kube, testNS, []string{"127.0.0.1:8080"}).WithKeys([]envconfig.NotificationKey{inboxKey}, nil)
	good := Subscription{ID: "inbox", Scope: Scope{Environment: "dev", Namespace: "shop", App: "web"}, Triggers: []Trigger{{Type: TriggerDrift}},
		Provider: envconfig.ProviderWebhook, URL: inboxKey.URLPrefix, SecretRef: &inboxKey.SecretRef, Author: "dee"}
	steal := good
	steal.ID, steal.URL = "steal", "http://127.0.0.1:8080/steal?k="
	var ke *KeyError
	if _, err := store.Create(ctx, steal); !errors.As(err, &ke) || ke.Forbidden {
		t.Fatalf("Create(another path) = %v, want a mismatch *KeyError", err)
	}
	if _, err := NewStore(kube, testNS, []string{"127.0.0.1:8080"}).Create(ctx, good); !errors.As(err, &ke) || !ke.Forbidden {
		t.Fatalf("Create without declarations = %v, want a forbidden *KeyError", err)
	}
	if subs, err := store.List(ctx); err != nil || len(subs) != 0 {
		t.Fatalf("List() = %v, %v; want nothing stored", subs, err)
	}
	if _, err := store.Create(ctx, good); err != nil {
		t.Fatal(err)
	}
	moved := good
	moved.Scope.Environment = "prod"
	if err := store.Update(ctx, moved); !errors.As(err, &ke) || !ke.Forbidden {
		t.Fatalf("Update(to prod) = %v, want a forbidden *KeyError", err)
	}
	if got, err := store.Get(ctx, "inbox"); err != nil || got.Scope.Environment != "dev" {
		t.Errorf("Get(inbox) = %+v, %v; want it unchanged, in dev", got, err)
	}
}

// TestSenderChecksKeyAtDelivery: a subscription written into the
// ConfigMap by hand, naming the inbox's key with another URL, sends
// nothing (neither its test message nor an event), and its delivery log
// says why; the one that matches its declaration is delivered.
func TestSenderChecksKeyAtDelivery(t *testing.T) {
	key := "hmac-key-delivery-check-0123456789"
	rcv := newReceiver(t, []byte(key), nil)
	hosts := []string{rcv.host(t)}
	kube := fake.NewClientset()
	putSecret(t, kube, "deploy-web-notify", map[string]string{"inbox": key})
	decl := envconfig.NotificationKey{SecretRef: envconfig.SecretRef{Name: "deploy-web-notify", Key: "inbox"}, Provider: envconfig.ProviderWebhook, URLPrefix: rcv.URL + "/hook"}
	edited := []Subscription{
		{ID: "good", Triggers: []Trigger{{Type: TriggerDrift}}, Provider: envconfig.ProviderWebhook, URL: rcv.URL + "/hook", SecretRef: &decl.SecretRef, Author: "ada", Created: time.Now()},
		{ID: "steal", Triggers: []Trigger{{Type: TriggerDrift}}, Provider: envconfig.ProviderWebhook, URL: rcv.URL + "/steal?k=", SecretRef: &decl.SecretRef, Author: "ada", Created: time.Now()},
	}
	b, err := json.Marshal(edited)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(testNS).Create(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: SubscriptionsConfigMap, Namespace: testNS},
		Data: map[string]string{subscriptionsKey: string(b)}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s, err := NewSender(kube, NewStore(kube, testNS, hosts).WithKeys([]envconfig.NotificationKey{decl}, nil), Options{Namespace: testNS, Hosts: hosts, Identity: "follower"})
	if err != nil {
		t.Fatal(err)
	}
	entry, err := s.SendTest(context.Background(), "steal")
	if err != nil {
		t.Fatal(err)
	}
	if rcv.count() != 0 || !strings.Contains(entry.Error, `subscription "steal" not sent: Secret deploy-web-notify key inbox sends only to URLs under`) {
		t.Fatalf("SendTest(steal) = %+v, receiver got %d; want nothing sent and the delivery log saying why", entry, rcv.count())
	}
	if entry, err := s.SendTest(context.Background(), "good"); err != nil || entry.Error != "" || rcv.count() != 1 {
		t.Fatalf("SendTest(good) = %+v, %v, receiver got %d; want one delivery", entry, err, rcv.count())
	}
	log, err := s.store.DeliveryLog(context.Background(), "steal")
	if err != nil || len(log) != 1 || !strings.Contains(log[0].Error, "not sent") {
		t.Errorf("DeliveryLog(steal) = %+v, %v; want its refusal", log, err)
	}
}
