package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/notify"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/timeline"
)

// hookLog is a webhook receiver on loopback: what each path got (the
// trigger of each message), and the signatures that did not verify.
type hookLog struct {
	*httptest.Server
	key []byte

	mu      sync.Mutex
	got     map[string][]string // path -> triggers, in order
	seen    map[string][]string // path -> "trigger revision at time", for failure messages
	sigErrs []error
}

func newHookLog(t *testing.T, key []byte, redirectTo string) *hookLog {
	t.Helper()
	h := &hookLog{key: key, got: map[string][]string{}, seen: map[string][]string{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var p struct {
			Event notify.Event `json:"event"`
		}
		_ = json.Unmarshal(body, &p)
		h.mu.Lock()
		h.got[r.URL.Path] = append(h.got[r.URL.Path], string(p.Event.Trigger))
		h.seen[r.URL.Path] = append(h.seen[r.URL.Path], fmt.Sprintf("%s %s at %s (delivery %s)", p.Event.Trigger, p.Event.Revision,
			p.Event.Time.Format(time.StampMilli), r.Header.Get(notify.HeaderDelivery)))
		if h.key != nil && r.URL.Path == "/hook" {
			if err := notify.VerifySignature(h.key, body, r.Header.Get(notify.HeaderSignature), r.Header.Get(notify.HeaderTimestamp), time.Now(), notify.SignatureTolerance); err != nil {
				h.sigErrs = append(h.sigErrs, err)
			}
		}
		h.mu.Unlock()
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, redirectTo, http.StatusTemporaryRedirect)
		}
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookLog) triggers(path string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.got[path]...)
}

func (h *hookLog) detail(path string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen[path]...)
}

func (h *hookLog) requests() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, v := range h.got {
		n += len(v)
	}
	return n
}

// TestNotifyOnRealCluster: on the real control plane, with two replicas
// (two senders contending for the Lease, both fed by the timeline), a
// rollout that fails sends degraded once to a listed webhook receiver,
// signed, and the recovery sends recovered; a receiver whose host is no
// longer listed, and one that a listed receiver redirects to, get no
// request; and only one replica ever sends.
func TestNotifyOnRealCluster(t *testing.T) {
	const ns, own, app = "shop", "deploy-web", "checkout"
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{ns, own}, Operator: true})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)

	key := []byte("0123456789abcdef0123456789abcdef")
	unlisted := newHookLog(t, nil, "")
	listed := newHookLog(t, key, unlisted.URL+"/stolen")
	hostOf := func(h *hookLog) string { return strings.TrimPrefix(h.URL, "http://") }
	if _, err := p.Kube.CoreV1().Secrets(own).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "deploy-web-notify"},
		Data: map[string][]byte{"hook": key}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The subscriptions were saved while the second host was listed; the
	// replicas run with it removed.
	// The hook key is declared for the listed host (the replicas'
	// notifications.keys); the store of then declared it for each host.
	hookKey := func(h *hookLog) []envconfig.NotificationKey {
		return []envconfig.NotificationKey{{SecretRef: envconfig.SecretRef{Name: "deploy-web-notify", Key: "hook"}, Provider: envconfig.ProviderWebhook, URLPrefix: h.URL}}
	}
	then := notify.NewStore(p.Kube, own, []string{hostOf(listed), hostOf(unlisted)})
	thenStore := func(sub notify.Subscription) *notify.Store {
		if strings.HasPrefix(sub.URL, unlisted.URL) {
			return then.WithKeys(hookKey(unlisted), nil)
		}
		return then.WithKeys(hookKey(listed), nil)
	}
	webhook := func(id, url string) notify.Subscription {
		return notify.Subscription{ID: id, Scope: notify.Scope{Cluster: "in-cluster", Namespace: ns, App: app},
			Triggers: []notify.Trigger{{Type: notify.TriggerDegraded}, {Type: notify.TriggerRecovered}}, Provider: envconfig.ProviderWebhook,
			URL: url, SecretRef: &envconfig.SecretRef{Name: "deploy-web-notify", Key: "hook"}, Author: "ada"}
	}
	for _, sub := range []notify.Subscription{webhook("listed", listed.URL+"/hook"), webhook("unlisted", unlisted.URL+"/hook"), webhook("redirect", listed.URL+"/redirect")} {
		if _, err := thenStore(sub).Create(ctx, sub); err != nil {
			t.Fatal(err)
		}
	}

	// The timeline, fed from kubeview's rows as serve feeds it.
	view, err := kubeview.New(p.Kube, p.Dyn, quiet, kubeview.Options{Namespaces: []string{ns}, ProbeInterval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	view.Start(ctx)
	tl, err := timeline.New(p.Kube.CoreV1(), timeline.Options{Namespace: own, IsLeader: func() bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = tl.Run(ctx) }()
	<-tl.Ready()
	go func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if row, ok := view.Row(ns, app); ok {
					tl.Observe(timeline.App{Namespace: ns, Name: app}, timeline.State{Health: string(row.Health.Status),
						HealthMessage: row.Health.Message, Sync: string(row.Sync.Status), Revision: row.Version})
				}
			}
		}
	}()

	hosts := []string{hostOf(listed)}
	var replicas []*notifications
	for _, id := range []string{"replica-1", "replica-2"} {
		n, err := newNotifications(p.Kube, own, id, hosts, hookKey(listed), quiet)
		if err != nil {
			t.Fatal(err)
		}
		n.start(ctx, new(leaseHolders), notifyFeeds{timeline: tl, cluster: "in-cluster", base: "https://deploy.example"}, quiet)
		replicas = append(replicas, n)
	}
	leaders := func() int {
		n := 0
		for _, r := range replicas {
			if r.Leading() {
				n++
			}
		}
		return n
	}
	waitUntil(t, 30*time.Second, "a replica to lead", func() bool { return leaders() == 1 })

	apps := p.Dyn.Resource(appcr.Resource).Namespace(ns)
	spec := func(tag string, crash bool) map[string]any {
		s := map[string]any{"image": "registry.demo.local/shop/checkout:" + tag, "replicas": int64(2), "progressDeadlineSeconds": int64(10)}
		if crash {
			s["podLabels"] = map[string]any{devcluster.BehaviorLabel: devcluster.BehaviorCrashLoop}
		} else {
			s["podLabels"] = nil
		}
		return s
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": appcr.GroupVersion.String(), "kind": appcr.Kind.Kind,
		"metadata": map[string]any{"name": app, "namespace": ns}, "spec": spec("1.2.0", false)}}
	delete(u.Object["spec"].(map[string]any), "podLabels")
	if _, err := apps.Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	health := func() objrules.HealthStatus { row, _ := view.Row(ns, app); return row.Health.Status }
	waitUntil(t, 2*time.Minute, "checkout Healthy", func() bool { return health() == objrules.HealthHealthy })

	patch := func(s map[string]any) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"spec": s})
		if _, err := apps.Patch(ctx, app, types.MergePatchType, b, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A rollout that fails: 1.3.0 crashes on start.
	patch(spec("1.3.0", true))
	waitUntil(t, 3*time.Minute, "degraded at the listed receiver", func() bool { return len(listed.triggers("/hook")) >= 1 })
	if got := health(); got != objrules.HealthDegraded {
		t.Errorf("health when degraded was sent = %s, want Degraded", got)
	}
	// The recovery: back to 1.2.0.
	patch(spec("1.2.0", false))
	waitUntil(t, 3*time.Minute, "recovered at the listed receiver", func() bool { return slices.Contains(listed.triggers("/hook"), "recovered") })

	// The redirecting subscription's own messages went out in the same
	// flow as the listed one's: once recovered reached /hook, its
	// degraded reached /redirect before (the timeline sends in order;
	// wait for its recovered too).
	waitUntil(t, time.Minute, "recovered at /redirect", func() bool { return slices.Contains(listed.triggers("/redirect"), "recovered") })
	if got := listed.triggers("/hook"); strings.Join(got, ",") != "degraded,recovered" {
		t.Errorf("listed /hook got %v, want [degraded recovered]: once each though two replicas see every transition (%q)", got, listed.detail("/hook"))
	}
	if got := listed.triggers("/redirect"); strings.Join(got, ",") != "degraded,recovered" {
		t.Errorf("/redirect got %v, want [degraded recovered] (one attempt each: a 3xx is not followed nor retried) (%q)", got, listed.detail("/redirect"))
	}
	if n := unlisted.requests(); n != 0 {
		t.Errorf("the unlisted receiver got %d requests (%v), want none: neither its own subscription nor the redirect reaches it", n, unlisted.got)
	}
	listed.mu.Lock()
	if len(listed.sigErrs) > 0 {
		t.Errorf("signature errors: %v", listed.sigErrs)
	}
	listed.mu.Unlock()
	if leaders() != 1 {
		t.Errorf("%d replicas lead, want 1", leaders())
	}
	// The delivery log of the unlisted subscription says why nothing went.
	waitUntil(t, 30*time.Second, "the unlisted subscription's log", func() bool {
		log, err := replicas[0].DeliveryLog(ctx, "unlisted")
		return err == nil && len(log) >= 2
	})
	log, _ := replicas[0].DeliveryLog(ctx, "unlisted")
	for _, e := range log {
		if e.Status != 0 || !strings.Contains(e.Error, "not in notifications.hosts") {
			t.Errorf("unlisted log entry %+v, want no status and an error naming notifications.hosts", e)
		}
	}
}

// waitUntil polls cond every 100ms until it holds or d passes.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
