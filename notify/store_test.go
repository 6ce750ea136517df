package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/envconfig"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestStore(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewClientset()
	store := NewStore(kube, testNS, []string{"hooks.example"})
	sub := Subscription{Scope: Scope{App: "checkout"}, Triggers: []Trigger{{Type: TriggerDrift}}, Provider: envconfig.ProviderSlack, URL: "https://hooks.example/services/", Author: "ada"}

	got, err := store.Create(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	if !validID(got.ID) || got.Created.IsZero() {
		t.Errorf("Create() = %+v, want a generated id and a creation time", got)
	}
	dup := sub
	dup.ID = got.ID
	if _, err := store.Create(ctx, dup); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("Create(same id) = %v, want an id in use", err)
	}
	bad := sub
	bad.URL = "https://evil.example/"
	if _, err := store.Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "url: host") {
		t.Errorf("Create(unlisted host) = %v, want a url error", err)
	}

	upd := got
	upd.Author, upd.Triggers = "mallory", []Trigger{{Type: TriggerRecovered}}
	if err := store.Update(ctx, upd); err != nil {
		t.Fatal(err)
	}
	after, err := store.Get(ctx, got.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Author != "ada" || after.Triggers[0].Type != TriggerRecovered || !after.Created.Equal(got.Created) {
		t.Errorf("after Update: %+v, want new triggers, author and created kept", after)
	}
	if err := store.Update(ctx, Subscription{ID: "nope"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Update(nope) = %v, want ErrNotFound", err)
	}

	if err := store.appendLog(ctx, got.ID, logBatch{entries: []LogEntry{{Trigger: TriggerDrift, Status: 200}}}); err != nil {
		t.Fatal(err)
	}
	if err := store.Delete(ctx, got.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(testNS).Get(ctx, logConfigMap(got.ID), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("delivery log after Delete: %v, want not found", err)
	}
	if _, err := store.Get(ctx, got.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete = %v, want ErrNotFound", err)
	}
}

func TestStoreBounds(t *testing.T) {
	ctx := context.Background()
	var full []Subscription
	for i := range MaxSubscriptions {
		full = append(full, Subscription{ID: fmt.Sprintf("s%03d", i), Triggers: []Trigger{{Type: TriggerDrift}}, Provider: envconfig.ProviderSlack,
			URL: "https://hooks.example/services/", Author: "ada"})
	}
	b, err := marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	kube := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: SubscriptionsConfigMap, Namespace: testNS},
		Data: map[string]string{subscriptionsKey: string(b)}})
	store := NewStore(kube, testNS, []string{"hooks.example"})
	_, err = store.Create(ctx, Subscription{ID: "one-more", Triggers: []Trigger{{Type: TriggerDrift}}, Provider: envconfig.ProviderSlack, URL: "https://hooks.example/services/", Author: "ada"})
	if err == nil || !strings.Contains(err.Error(), "delete one first") {
		t.Errorf("Create beyond %d = %v, want refused", MaxSubscriptions, err)
	}
}

func TestStoreStrictDecode(t *testing.T) {
	ctx := context.Background()
	kube := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: SubscriptionsConfigMap, Namespace: testNS},
		Data: map[string]string{subscriptionsKey: `[{"id":"s1","urll":"https://typo.example"}]`}})
	_, err := NewStore(kube, testNS, nil).List(ctx)
	if err == nil || !strings.Contains(err.Error(), "urll") || !strings.Contains(err.Error(), SubscriptionsConfigMap) {
		t.Errorf("List(unknown field) = %v, want an error naming the field and the ConfigMap", err)
	}
}

func TestDeliveryLogBounded(t *testing.T) {
	ctx := context.Background()
	store := NewStore(fake.NewClientset(), testNS, nil)
	for i := range 3 {
		var b logBatch
		for j := range 60 {
			b.entries = append(b.entries, LogEntry{Trigger: TriggerDrift, Status: 200 + i, Attempts: j})
			b.sent = append(b.sent, sent{Key: fmt.Sprintf("k%d-%d", i, j)}, sent{Key: fmt.Sprintf("x%d-%d", i, j)}, sent{Key: fmt.Sprintf("y%d-%d", i, j)})
		}
		if err := store.appendLog(ctx, "s1", b); err != nil {
			t.Fatal(err)
		}
	}
	log, err := store.DeliveryLog(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != LogEntries || log[0].Status != 202 || log[0].Attempts != 59 {
		t.Errorf("DeliveryLog has %d entries, newest %+v; want %d, newest from the last batch", len(log), log[0], LogEntries)
	}
	keys, err := store.sentKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != sentKeys || keys[len(keys)-1].Key != "y2-59" {
		t.Errorf("sentKeys has %d keys, last %v; want %d, the newest last", len(keys), keys[len(keys)-1], sentKeys)
	}
}

func TestStoreByteBound(t *testing.T) {
	ctx := context.Background()
	long := "https://hooks.example/" + strings.Repeat("a", envconfig.MaxURLLength-len("https://hooks.example/"))
	one := func(i int) Subscription {
		return Subscription{ID: fmt.Sprintf("s%03d", i), Triggers: []Trigger{{Type: TriggerDrift}}, Provider: envconfig.ProviderSlack, URL: long, Author: "ada"}
	}
	size, _ := marshal(one(0))
	// Just under the bound: one more long subscription crosses it.
	var subs []Subscription
	for i := range (maxStoreBytes - len(size)/2) / (len(size) + 1) {
		subs = append(subs, one(i))
	}
	b, err := marshal(subs)
	if err != nil {
		t.Fatal(err)
	}
	kube := fake.NewClientset(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: SubscriptionsConfigMap, Namespace: testNS},
		Data: map[string]string{subscriptionsKey: string(b)}})
	// Another scope and author: the byte bound refuses it, not a cap.
	_, err = NewStore(kube, testNS, []string{"hooks.example"}).Create(ctx, Subscription{ID: "one-more", Scope: Scope{App: "one-more"}, Triggers: []Trigger{{Type: TriggerDrift}},
		Provider: envconfig.ProviderSlack, URL: long, Author: "bea"})
	if err == nil || !strings.Contains(err.Error(), "bytes") {
		t.Errorf("Create beyond %d bytes = %v, want refused", maxStoreBytes, err)
	}
}

// TestStoreCapsPerScopeAndAuthor: one scope holds at most MaxPerScope
// subscriptions and one author at most MaxPerAuthor, well under the
// store's MaxSubscriptions; others still fit.
func TestStoreCapsPerScopeAndAuthor(t *testing.T) {
	ctx := context.Background()
	store := NewStore(fake.NewClientset(), testNS, []string{"hooks.example"})
	sub := func(app, author string) Subscription {
		return Subscription{Scope: Scope{App: app}, Triggers: []Trigger{{Type: TriggerDrift}}, Provider: envconfig.ProviderSlack, URL: "https://hooks.example/services/", Author: author}
	}
	for i := range MaxPerScope {
		if _, err := store.Create(ctx, sub("checkout", fmt.Sprint("p", i))); err != nil {
			t.Fatal(err)
		}
	}
	_, err := store.Create(ctx, sub("checkout", "late"))
	if !errors.Is(err, ErrFull) || !strings.Contains(err.Error(), "this scope has 20") {
		t.Errorf("Create(one more in a full scope) = %v, want ErrFull naming the scope's cap", err)
	}
	// The refusal carries its public text (the handlers send it, never
	// the error's text).
	var fe *FullError
	if want := "no room for another subscription: this scope has 20 subscriptions already, the most one scope may have: delete one first"; !errors.As(err, &fe) || fe.Public() != want {
		t.Errorf("Create(one more in a full scope) = %v, want a *FullError whose Public is %q", err, want)
	}
	if _, err := store.Create(ctx, sub("cart", "late")); err != nil {
		t.Errorf("Create(in another scope) = %v, want it stored", err)
	}
	for i := range MaxPerAuthor - 1 {
		if _, err := store.Create(ctx, sub(fmt.Sprint("app-", i), "mallory")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Create(ctx, sub("app-x", "mallory")); err != nil {
		t.Fatalf("Create(the author's %dth) = %v, want it stored", MaxPerAuthor, err)
	}
	if _, err := store.Create(ctx, sub("app-y", "mallory")); !errors.Is(err, ErrFull) || !strings.Contains(err.Error(), "you have 50") {
		t.Errorf("Create(one more by a full author) = %v, want ErrFull naming the author's cap", err)
	}
}
