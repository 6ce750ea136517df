package handlers

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/notify"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/web/paths"
)

// testNotify is the notification seam of the tests: the real store and
// sender over a fake clientset, delivering to a receiver on loopback.
type testNotify struct {
	*notify.Store
	*notify.Sender
	cs *fake.Clientset
}

// hookReceiver counts the requests it gets.
type hookReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func (h *hookReceiver) got() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.paths...)
}

// newTestNotify returns the seam, listing the receiver's host, with the
// Secret deploy-web-notify holding an HMAC key under "hook", "apps-hook"
// and "infra-hook", declared (notifications.keys) as testKeys says, at
// the targets of target (the server's SubscriptionTarget).
func newTestNotify(t *testing.T, target func(notify.Scope) roles.Target) (*testNotify, *hookReceiver) {
	t.Helper()
	rcv := &hookReceiver{}
	rcv.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		rcv.mu.Lock()
		rcv.paths = append(rcv.paths, r.URL.Path)
		rcv.mu.Unlock()
	}))
	t.Cleanup(rcv.Close)
	key := []byte("0123456789abcdef0123456789abcdef")
	cs := fake.NewClientset(&corev1.Secret{ObjectMeta: v1.ObjectMeta{Name: "deploy-web-notify", Namespace: testAuditNS},
		Data: map[string][]byte{"hook": key, "apps-hook": key, "infra-hook": key}})
	hosts := []string{strings.TrimPrefix(rcv.URL, "http://")}
	store := notify.NewStore(cs, testAuditNS, hosts).WithKeys(testKeys(rcv.URL), target)
	sender, err := notify.NewSender(cs, store, notify.Options{Namespace: testAuditNS, Hosts: hosts, Identity: "test", MaxAttempts: 1, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return &testNotify{Store: store, Sender: sender, cs: cs}, rcv
}

// testKeys are the tests' notifications.keys for a receiver at base:
// "hook" for webhooks anywhere on it, "apps-hook" for webhooks to its
// /hook about namespace apps, "infra-hook" the same about infra.
func testKeys(base string) []envconfig.NotificationKey {
	ref := func(k string) envconfig.SecretRef { return envconfig.SecretRef{Name: "deploy-web-notify", Key: k} }
	return []envconfig.NotificationKey{
		{SecretRef: ref("hook"), Provider: envconfig.ProviderWebhook, URLPrefix: base},
		{SecretRef: ref("apps-hook"), Provider: envconfig.ProviderWebhook, URLPrefix: base + "/hook", Scope: scope.Scope{Namespaces: []string{"apps"}}},
		{SecretRef: ref("infra-hook"), Provider: envconfig.ProviderWebhook, URLPrefix: base + "/hook", Scope: scope.Scope{Namespaces: []string{"infra"}}},
	}
}

// notifyServer is the walk's server (roles, App web in apps and infra)
// with notifications and an audit trail, signed in as persona.
func notifyServer(t *testing.T, persona string) (*testServer, *testNotify, *hookReceiver, *audit.Store) {
	t.Helper()
	store, _ := newTestAudit(t)
	ts := walkServer(t)
	n, rcv := newTestNotify(t, ts.srv.SubscriptionTarget)
	ts.srv.opts.Notify, ts.srv.opts.Audit = n, store
	ts.srv.ops = ts.srv.newWorkflows() // the workflows see the options changed above
	ts.handler = ts.srv.Handler()
	for _, p := range walkPersonas() {
		if p.name == persona {
			id := p.id
			ts.auth.id = &id
		}
	}
	return ts, n, rcv, store
}

// formPost is an authenticated form POST.
func formPost(target string, form url.Values) request {
	return request{method: http.MethodPost, target: target, admin: true, body: form.Encode(),
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}
}

func webScope(ns string) notify.Scope {
	return notify.Scope{Cluster: "in-cluster", Namespace: ns, App: "web"}
}

// TestNotifyFormCreates: the app page's form creates a subscription in
// the page's own scope, by the person signed in, with an audit record;
// the page then shows it with its URL redacted and its Secret by name.
func TestNotifyFormCreates(t *testing.T) {
	ts, n, rcv, store := notifyServer(t, "deployer (scoped)")
	form := url.Values{"csrf_token": {testCSRF}, "trigger": {"degraded", "recovered"}, "degraded_for": {"120"}, "provider": {"webhook"},
		"url": {rcv.URL + "/hooks/T0SECRET/B1SECRET"}, "secret_name": {"deploy-web-notify"}, "secret_key": {"hook"},
		// Not fields of the form: ignored, the scope is the page's.
		"scope.app": {"other"}, "app": {"other"}}
	w := ts.do(t, formPost(paths.AppNotifications("in-cluster", "apps", "web"), form))
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != paths.App("in-cluster", "apps", "web")+"#notifications" {
		t.Fatalf("POST form = %d %s, want 303 to the app page: %s", w.Code, w.Header().Get("Location"), w.Body)
	}
	subs, err := n.List(t.Context())
	if err != nil || len(subs) != 1 {
		t.Fatalf("List() = %v, %v; want one subscription", subs, err)
	}
	sub := subs[0]
	want := notify.Subscription{ID: sub.ID, Scope: webScope("apps"), Triggers: []notify.Trigger{{Type: notify.TriggerDegraded, For: 120}, {Type: notify.TriggerRecovered}},
		Provider: envconfig.ProviderWebhook, URL: rcv.URL + "/hooks/T0SECRET/B1SECRET", SecretRef: &envconfig.SecretRef{Name: "deploy-web-notify", Key: "hook"},
		Author: "dee@example.com (sub dee)", Created: sub.Created}
	if diff := cmp.Diff(want, sub); diff != "" {
		t.Errorf("stored subscription mismatch (-want +got):\n%s", diff)
	}
	recs := records(t, store)
	if len(recs) != 1 || recs[0].Verb != audit.VerbSubscription || recs[0].App != "web" || recs[0].Namespace != "apps" || recs[0].Outcome != audit.OutcomeSucceeded ||
		!strings.Contains(recs[0].Message, "created") || strings.Contains(recs[0].Message, "SECRET") {
		t.Errorf("audit records = %+v, want one succeeded subscription record of web naming no URL secret", recs)
	}

	page := ts.get(t, paths.App("in-cluster", "apps", "web"), nil)
	body := page.Body.String()
	if strings.Contains(body, "T0SECRET") || strings.Contains(body, "B1SECRET") {
		t.Errorf("app page shows the URL's path past its first segment: %s", body)
	}
	doc := parseHTML(t, body)
	if got, want := text(oneByTestID(t, doc, "subscription-url")), rcv.URL+"/hooks/…"; got != want {
		t.Errorf("subscription-url = %q, want %q", got, want)
	}
	if got := text(oneByTestID(t, doc, "subscription-triggers")); got != "degraded for 120s, recovered" {
		t.Errorf("subscription-triggers = %q, want %q", got, "degraded for 120s, recovered")
	}
	if len(byTestID(doc, "subscription-form")) != 1 || len(byTestID(doc, "subscription-test")) != 1 {
		t.Errorf("a deployer in scope sees no form or no Send test button")
	}
}

// TestNotifyPagesDeniedOutOfScope: a deployer scoped to namespace apps
// may not add a subscription to infra/web (403, nothing stored), and a
// viewer sees the section without form or buttons.
func TestNotifyPagesDeniedOutOfScope(t *testing.T) {
	ts, n, rcv, _ := notifyServer(t, "deployer (scoped)")
	form := url.Values{"csrf_token": {testCSRF}, "trigger": {"drift"}, "provider": {"slack"}, "url": {rcv.URL + "/services/"}}
	if w := ts.do(t, formPost(paths.AppNotifications("in-cluster", "infra", "web"), form)); w.Code != http.StatusForbidden {
		t.Errorf("POST infra/web form by a deployer of apps = %d, want 403", w.Code)
	}
	if subs, _ := n.List(t.Context()); len(subs) != 0 {
		t.Errorf("stored %v after a refusal, want nothing", subs)
	}
	viewer, _, _, _ := notifyServer(t, "viewer")
	doc := parseHTML(t, viewer.get(t, paths.App("in-cluster", "apps", "web"), nil).Body.String())
	if len(byTestID(doc, "notifications")) != 1 || len(byTestID(doc, "subscription-form")) != 0 {
		t.Errorf("viewer's app page: notifications %d, form %d; want the section without a form",
			len(byTestID(doc, "notifications")), len(byTestID(doc, "subscription-form")))
	}
}

// TestNotifyButtonsActOnTheirPageOnly: the id in a page's test or delete
// URL must be a subscription of that page's App; another App's id (one
// the person may not touch) is a 404, nothing is sent and nothing deleted.
func TestNotifyButtonsActOnTheirPageOnly(t *testing.T) {
	ts, n, rcv, store := notifyServer(t, "deployer (scoped)")
	other, err := n.Create(t.Context(), notify.Subscription{ID: "infra-web", Scope: webScope("infra"), Triggers: []notify.Trigger{{Type: notify.TriggerDrift}},
		Provider: envconfig.ProviderWebhook, URL: rcv.URL + "/infra", SecretRef: &envconfig.SecretRef{Name: "deploy-web-notify", Key: "hook"}, Author: "sam"})
	if err != nil {
		t.Fatal(err)
	}
	csrf := url.Values{"csrf_token": {testCSRF}}
	for _, target := range []string{paths.AppNotificationTest("in-cluster", "apps", "web", other.ID), paths.AppNotificationDelete("in-cluster", "apps", "web", other.ID)} {
		if w := ts.do(t, formPost(target, csrf)); w.Code != http.StatusNotFound {
			t.Errorf("POST %s = %d, want 404", target, w.Code)
		}
	}
	if got := rcv.got(); len(got) != 0 {
		t.Errorf("receiver got %v, want nothing", got)
	}
	if _, err := n.Get(t.Context(), other.ID); err != nil {
		t.Errorf("Get(%s) after the refused delete = %v, want it kept", other.ID, err)
	}
	if recs := records(t, store); len(recs) != 0 {
		t.Errorf("audit records = %+v, want none for refused ids", recs)
	}
}

// TestNotifySendTestShowsLogRow: "Send test" posts to the receiver once,
// signed, and the delivery log row (status 200) is on the page after.
func TestNotifySendTestShowsLogRow(t *testing.T) {
	ts, n, rcv, store := notifyServer(t, "deployer (scoped)")
	sub, err := n.Create(t.Context(), notify.Subscription{ID: "apps-web", Scope: webScope("apps"), Triggers: []notify.Trigger{{Type: notify.TriggerDegraded}},
		Provider: envconfig.ProviderWebhook, URL: rcv.URL + "/hook", SecretRef: &envconfig.SecretRef{Name: "deploy-web-notify", Key: "hook"}, Author: "dee"})
	if err != nil {
		t.Fatal(err)
	}
	w := ts.do(t, formPost(paths.AppNotificationTest("in-cluster", "apps", "web", sub.ID), url.Values{"csrf_token": {testCSRF}}))
	if w.Code != http.StatusSeeOther {
		t.Fatalf("POST test = %d, want 303: %s", w.Code, w.Body)
	}
	if got := rcv.got(); len(got) != 1 || got[0] != "/hook" {
		t.Errorf("receiver got %v, want one POST /hook", got)
	}
	doc := parseHTML(t, ts.get(t, paths.App("in-cluster", "apps", "web"), nil).Body.String())
	rows := byTestID(doc, "delivery-row")
	if len(rows) != 1 || text(oneByTestID(t, rows[0], "delivery-status")) != "200" {
		t.Errorf("delivery rows = %d, want one with status 200", len(rows))
	}
	if recs := records(t, store); len(recs) != 1 || !strings.Contains(recs[0].Message, "tested") {
		t.Errorf("audit records = %+v, want one naming the test", recs)
	}
}

// TestNotifyAPI: create, read (URL redacted), list by visibility, refuse
// a body key in another spelling and a scope out of the person's.
func TestNotifyAPI(t *testing.T) {
	ts, _, rcv, _ := notifyServer(t, "deployer (scoped)")
	post := func(body string) *httptest.ResponseRecorder {
		return ts.do(t, request{method: http.MethodPost, target: paths.APISubscriptions(nil), admin: true, body: body,
			header: map[string]string{"Content-Type": "application/json"}})
	}
	good := `{"id": "apps-web", "scope": {"cluster": "in-cluster", "namespace": "apps", "app": "web"}, "triggers": [{"type": "recovered"}],
		"provider": "slack", "url": "` + rcv.URL + `/services/T0SECRET"}`
	tests := []struct {
		name, body string
		want       int
	}{
		{"out of scope", strings.Replace(good, `"namespace": "apps"`, `"namespace": "infra"`, 1), http.StatusForbidden},
		{"fleet-wide", `{"triggers": [{"type": "drift"}], "provider": "slack", "url": "` + rcv.URL + `/s"}`, http.StatusForbidden},
		{"key in another case", strings.Replace(good, `"scope"`, `"Scope"`, 1), http.StatusBadRequest},
		{"unlisted host", strings.Replace(good, rcv.URL, "https://evil.example", 1), http.StatusBadRequest},
		{"good", good, http.StatusCreated},
		{"id in use", good, http.StatusBadRequest},
	}
	for _, tt := range tests {
		w := post(tt.body)
		if w.Code != tt.want {
			t.Errorf("%s: POST = %d, want %d: %s", tt.name, w.Code, tt.want, w.Body)
		}
		if tt.name == "unlisted host" && !strings.Contains(w.Body.String(), "url: host") {
			t.Errorf("%s: body %s, want the url field named", tt.name, w.Body)
		}
	}
	w := ts.get(t, paths.APISubscription("apps-web"), nil)
	var got subscriptionResponse
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusOK {
		t.Fatalf("GET = %d %s", w.Code, w.Body)
	}
	if got.Subscription.URL != rcv.URL+"/services/…" || strings.Contains(w.Body.String(), "T0SECRET") {
		t.Errorf("GET url = %q (body %s), want %q and no secret", got.Subscription.URL, w.Body, rcv.URL+"/services/…")
	}
	// The viewer sees it; the approver too (view everywhere); nobody
	// without a role gets a 404 for it.
	for persona, want := range map[string]int{"viewer": 1, "no role": -1} {
		for _, p := range walkPersonas() {
			if p.name == persona {
				id := p.id
				ts.auth.id = &id
			}
		}
		w := ts.get(t, paths.APISubscriptions(url.Values{"app": {"web"}}), nil)
		var list subscriptionsResponse
		_ = json.Unmarshal(w.Body.Bytes(), &list)
		switch {
		case want < 0 && w.Code != http.StatusForbidden:
			t.Errorf("%s: GET list = %d, want 403", persona, w.Code)
		case want >= 0 && len(list.Subscriptions) != want:
			t.Errorf("%s: GET list = %d %s, want %d subscriptions", persona, w.Code, w.Body, want)
		}
	}
}

// TestSubscriptionForm: what a page's form asks for, before the store
// validates it.
func TestSubscriptionForm(t *testing.T) {
	sc := notify.Scope{Environment: "dev"}
	tests := []struct {
		name    string
		form    url.Values
		want    notify.Subscription
		wantErr string
	}{
		{"webhook with degraded for", url.Values{"trigger": {"degraded", "drift"}, "degraded_for": {"60"}, "provider": {"webhook"}, "url": {" https://h.example/x "}, "secret_name": {"deploy-web-notify"}, "secret_key": {"k"}},
			notify.Subscription{Scope: sc, Triggers: []notify.Trigger{{Type: "degraded", For: 60}, {Type: "drift"}}, Provider: "webhook", URL: "https://h.example/x", SecretRef: &envconfig.SecretRef{Name: "deploy-web-notify", Key: "k"}, Author: "ada"}, ""},
		{"no secret", url.Values{"trigger": {"recovered"}, "provider": {"slack"}, "url": {"https://h.example/x"}, "degraded_for": {""}},
			notify.Subscription{Scope: sc, Triggers: []notify.Trigger{{Type: "recovered"}}, Provider: "slack", URL: "https://h.example/x", Author: "ada"}, ""},
		{"for without degraded", url.Values{"trigger": {"drift"}, "degraded_for": {"30"}}, notify.Subscription{}, "check degraded too"},
		{"for not a number", url.Values{"trigger": {"degraded"}, "degraded_for": {"1e3"}}, notify.Subscription{}, `"1e3": a number of seconds`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := subscriptionForm(tt.form, sc, "ada")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("subscriptionForm(%v) = %v, want an error containing %q", tt.form, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("subscriptionForm(%v) = %v", tt.form, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("subscriptionForm(%v) mismatch (-want +got):\n%s", tt.form, diff)
			}
		})
	}
}

// TestNotifyHTMLInjection: a delivery log edited in the cluster (its
// ConfigMap is data) comes back escaped on the app page.
func TestNotifyHTMLInjection(t *testing.T) {
	for _, payload := range injectionPayloads {
		t.Run(payload, func(t *testing.T) {
			ts, n, rcv, _ := notifyServer(t, "superadmin (group)")
			sub, err := n.Create(t.Context(), notify.Subscription{ID: "apps-web", Scope: webScope("apps"), Triggers: []notify.Trigger{{Type: notify.TriggerDrift}},
				Provider: envconfig.ProviderSlack, URL: rcv.URL + "/services/", Author: "sam"})
			if err != nil {
				t.Fatal(err)
			}
			entries, _ := json.Marshal([]map[string]any{{"time": testNow, "trigger": payload, "app": payload, "status": 500, "latencyMs": 3, "attempts": 1, "error": payload}})
			if _, err := n.cs.CoreV1().ConfigMaps(testAuditNS).Create(t.Context(), &corev1.ConfigMap{ObjectMeta: v1.ObjectMeta{Name: "deploy-web-notify-log-" + sub.ID,
				Labels: map[string]string{notify.LabelSubscription: sub.ID}}, Data: map[string]string{"log.json": string(entries)}}, v1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			body := ts.get(t, paths.App("in-cluster", "apps", "web"), nil).Body.String()
			doc := assertInert(t, "app page", body, payload)
			if rows := byTestID(doc, "delivery-row"); len(rows) != 1 {
				t.Errorf("delivery rows = %d, want the edited one", len(rows))
			}
		})
	}
}

// TestNotifyKeysBoundInConfig: a deployer of namespace apps may name only
// the keys declared for apps/web, with their provider and URL prefix: an
// undeclared key or one declared for infra is a 403, another provider or
// path (the inbox's HMAC key sent to /steal?k=) a 422, from the API and
// from the page's form alike; each refusal stores nothing, sends nothing
// and is recorded as refused.
func TestNotifyKeysBoundInConfig(t *testing.T) {
	ts, n, rcv, store := notifyServer(t, "deployer (scoped)")
	body := func(provider, url, key string) string {
		return `{"scope": {"cluster": "in-cluster", "namespace": "apps", "app": "web"}, "triggers": [{"type": "drift"}],
			"provider": "` + provider + `", "url": "` + url + `", "secretRef": {"name": "deploy-web-notify", "key": "` + key + `"}}`
	}
	tests := []struct {
		name, body string
		want       int
		text       string
	}{
		{"undeclared key", body("webhook", rcv.URL+"/hook", "demo-inbox"), http.StatusForbidden, "Secret deploy-web-notify key demo-inbox is not declared"},
		{"key of another namespace", body("webhook", rcv.URL+"/hook", "infra-hook"), http.StatusForbidden, "key infra-hook may not be used for a subscription of cluster=in-cluster"},
		{"another provider", body("slack", rcv.URL+"/hook", "apps-hook"), http.StatusUnprocessableEntity, `declared for provider webhook, not \"slack\"`},
		{"another path", body("webhook", rcv.URL+"/steal?k=", "apps-hook"), http.StatusUnprocessableEntity, "sends only to URLs under " + rcv.URL + "/hook"},
		{"a path around the prefix", body("webhook", rcv.URL+"/hook/../steal", "apps-hook"), http.StatusUnprocessableEntity, "sends only to URLs under"},
	}
	for _, tt := range tests {
		w := ts.do(t, request{method: http.MethodPost, target: paths.APISubscriptions(nil), admin: true, body: tt.body,
			header: map[string]string{"Content-Type": "application/json"}})
		if w.Code != tt.want || !strings.Contains(w.Body.String(), tt.text) {
			t.Errorf("%s: POST = %d %s, want %d naming %q", tt.name, w.Code, w.Body, tt.want, tt.text)
		}
	}
	form := url.Values{"csrf_token": {testCSRF}, "trigger": {"drift"}, "provider": {"slack"}, "url": {rcv.URL + "/hook"},
		"secret_name": {"deploy-web-notify"}, "secret_key": {"apps-hook"}}
	if w := ts.do(t, formPost(paths.AppNotifications("in-cluster", "apps", "web"), form)); w.Code != http.StatusUnprocessableEntity {
		t.Errorf("POST form with another provider = %d, want 422: %s", w.Code, w.Body)
	}
	form.Set("secret_key", "infra-hook")
	form.Set("provider", "webhook")
	if w := ts.do(t, formPost(paths.AppNotifications("in-cluster", "apps", "web"), form)); w.Code != http.StatusForbidden {
		t.Errorf("POST form with infra's key = %d, want 403: %s", w.Code, w.Body)
	}
	if subs, err := n.List(t.Context()); err != nil || len(subs) != 0 {
		t.Errorf("List() = %v, %v after refusals, want nothing stored", subs, err)
	}
	if got := rcv.got(); len(got) != 0 {
		t.Errorf("receiver got %v, want nothing", got)
	}
	recs := records(t, store)
	for _, r := range recs {
		if r.Outcome != audit.OutcomeRefused {
			t.Errorf("audit record %+v, want refused", r)
		}
	}
	if len(recs) != len(tests)+2 {
		t.Errorf("audit records = %d, want %d (one per refusal)", len(recs), len(tests)+2)
	}

	// The declared key, as declared: created, and its test message sent.
	w := ts.do(t, request{method: http.MethodPost, target: paths.APISubscriptions(nil), admin: true, body: body("webhook", rcv.URL+"/hook", "apps-hook"),
		header: map[string]string{"Content-Type": "application/json"}})
	if w.Code != http.StatusCreated {
		t.Fatalf("POST declared key = %d %s, want 201", w.Code, w.Body)
	}
}

// TestNotifyErrorFull: a subscription refused for want of room is a 409
// whose text is the store's typed refusal (which cap, what to do), not
// the error's text, however it was wrapped.
func TestNotifyErrorFull(t *testing.T) {
	store := notify.NewStore(fake.NewClientset(), "deploy-web", []string{"hooks.example"})
	sub := func(author string) notify.Subscription {
		return notify.Subscription{Scope: notify.Scope{App: "checkout"}, Triggers: []notify.Trigger{{Type: notify.TriggerDrift}},
			Provider: envconfig.ProviderSlack, URL: "https://hooks.example/services/", Author: author}
	}
	var err error
	for i := 0; err == nil && i <= notify.MaxPerScope; i++ {
		_, err = store.Create(t.Context(), sub("p"+string(rune('a'+i))))
	}
	he, ok := notifyError(fmt.Errorf("wrapped by a caller: %w", err)).(*httpError)
	want := "no room for another subscription: this scope has 20 subscriptions already, the most one scope may have: delete one first"
	if !ok || he.Status != http.StatusConflict || he.Public != want {
		t.Fatalf("notifyError(full scope) = %#v, want a 409 saying %q", he, want)
	}
}
