package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/textfmt"
	"github.com/hanzoai/deploy-web/notify"
)

// The demo's notification credentials: the key of its inbox's HMAC in the
// Secret the installed RBAC lets deploy-web read (docs/notifications.md).
const (
	NotifySecret = "deploy-web-notify"
	NotifyKey    = "demo-inbox"
)

// Bounds of the inbox.
const (
	inboxKeep     = 100
	inboxMaxBytes = 64 << 10
)

// Inbox is the demo's webhook receiver on loopback: subscriptions made in
// the demo post to its /hook, and GET / lists what came, newest first,
// with whether each signature verified. Its host is the demo's
// notifications.hosts.
type Inbox struct {
	ln  net.Listener
	key []byte

	mu   sync.Mutex
	msgs []InboxMessage
}

// InboxMessage is one message the inbox received.
type InboxMessage struct {
	Time        time.Time `json:"time"`
	Trigger     string    `json:"trigger"`
	App         string    `json:"app"`
	Summary     string    `json:"summary"`
	SignatureOK bool      `json:"signatureOk"`
	// Delivery is the message's delivery id (notify.HeaderDelivery): the
	// same for a message sent twice.
	Delivery string `json:"delivery"`
}

// startInbox stores a fresh HMAC key in the Secret NotifySecret of ns and
// serves the inbox until ctx ends.
func startInbox(ctx context.Context, cs kubernetes.Interface, ns string) (*Inbox, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	key := []byte(hex.EncodeToString(b[:]))
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: NotifySecret, Namespace: ns}, Data: map[string][]byte{NotifyKey: key}}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("demo: notification Secret %s/%s: %w", ns, NotifySecret, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo: notification inbox: %w", err)
	}
	in := &Inbox{ln: ln, key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hook", in.receive)
	mux.HandleFunc("GET /{$}", in.list)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return in, nil
}

// Host is the inbox's host:port, as notifications.hosts lists it.
func (in *Inbox) Host() string { return in.ln.Addr().String() }

// URL is the inbox's base URL; subscriptions post to URL()+"/hook".
func (in *Inbox) URL() string { return "http://" + in.Host() }

// Messages returns what came, newest first.
func (in *Inbox) Messages() []InboxMessage {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make([]InboxMessage, len(in.msgs))
	for i, m := range in.msgs {
		out[len(in.msgs)-1-i] = m
	}
	return out
}

func (in *Inbox) receive(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, inboxMaxBytes))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	var p struct {
		Summary string       `json:"summary"`
		Event   notify.Event `json:"event"`
	}
	_ = json.Unmarshal(body, &p)
	m := InboxMessage{Time: time.Now().UTC(), Trigger: string(p.Event.Trigger), App: p.Event.App, Summary: p.Summary,
		Delivery:    textfmt.Cut(r.Header.Get(notify.HeaderDelivery), 200),
		SignatureOK: notify.VerifySignature(in.key, body, r.Header.Get(notify.HeaderSignature), r.Header.Get(notify.HeaderTimestamp), time.Now(), notify.SignatureTolerance) == nil}
	in.mu.Lock()
	in.msgs = append(in.msgs, m)
	if len(in.msgs) > inboxKeep {
		in.msgs = in.msgs[len(in.msgs)-inboxKeep:]
	}
	in.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// list answers the messages as JSON, newest first.
func (in *Inbox) list(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(in.Messages())
}

// addNotifications lists host in the environments file's
// notifications.hosts.
func addNotifications(envFile, host string) error {
	f, err := os.OpenFile(envFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	_, err = fmt.Fprintf(f, "%s", notificationsYAML(host))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

// notificationsYAML is the demo's notifications key: its inbox alone,
// and the inbox's HMAC key declared for webhooks to its /hook (about any
// App of the demo: the inbox is the whole demo's), so that no login can
// send the key to another path or with another provider.
func notificationsYAML(host string) string {
	return strings.Join([]string{
		"# The only host notifications go to: the demo's inbox (GET / lists what came).",
		"notifications:",
		fmt.Sprintf("  hosts: [%q]", host),
		"  # The only Secret key a subscription may name: the inbox's HMAC key,",
		"  # for webhooks to its /hook (docs/notifications.md).",
		"  keys:",
		fmt.Sprintf("    - secretRef: {name: %s, key: %s}", NotifySecret, NotifyKey),
		"      provider: " + string(envconfig.ProviderWebhook),
		fmt.Sprintf("      urlPrefix: %q", "http://"+host+"/hook"),
		"",
	}, "\n")
}
