package demo

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/notify"
)

// TestInbox: the demo's environments file, with its notifications key
// appended, lists the inbox's host; the inbox keeps a message signed with
// the key of its Secret as verified, and one signed otherwise as not.
func TestInbox(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cs := fake.NewClientset()
	in, err := startInbox(ctx, cs, HistoryNamespace)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	envFile := filepath.Join(dir, EnvironmentsFileName)
	if err := os.WriteFile(envFile, []byte(environmentsYAML("file://"+filepath.Join(dir, manifestRepoDir), filepath.Join(dir, "kubeconfig"), "http://127.0.0.1:9090")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := addNotifications(envFile, in.Host()); err != nil {
		t.Fatal(err)
	}
	cfg, err := envconfig.LoadConfig(envFile)
	if err != nil {
		t.Fatalf("LoadConfig(demo environments) = %v", err)
	}
	if got := cfg.NotificationHosts(); !slices.Equal(got, []string{in.Host()}) {
		t.Errorf("NotificationHosts() = %q, want [%s]", got, in.Host())
	}
	// The inbox's key is bound to its /hook and to webhooks: the demo's
	// deployer (or anyone) cannot send it elsewhere.
	ref := &envconfig.SecretRef{Name: NotifySecret, Key: NotifyKey}
	at := scope.Target{Cluster: "devcluster", Namespace: DeployerNamespace, App: "web"}
	for _, tt := range []struct {
		provider envconfig.Provider
		url      string
		ok       bool
	}{
		{envconfig.ProviderWebhook, in.URL() + "/hook", true},
		{envconfig.ProviderWebhook, in.URL() + "/steal?k=", false},
		{envconfig.ProviderSlack, in.URL() + "/hook", false},
		{envconfig.ProviderSlack, in.URL() + "/steal?k=", false},
	} {
		err := notify.CheckKey(cfg.NotificationKeys(), notify.Subscription{Provider: tt.provider, URL: tt.url, SecretRef: ref}, at)
		var ke *notify.KeyError
		if tt.ok != (err == nil) || err != nil && (!errors.As(err, &ke) || ke.Forbidden) {
			t.Errorf("CheckKey(demo keys, %s %s) = %v, want ok %v (else a mismatch, 422)", tt.provider, tt.url, err, tt.ok)
		}
	}

	sec, err := cs.CoreV1().Secrets(HistoryNamespace).Get(ctx, NotifySecret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	post := func(key []byte, delivery string) {
		t.Helper()
		body := []byte(`{"summary": "checkout is degraded", "event": {"trigger": "degraded", "app": "checkout"}}`)
		sig, ts := notify.Sign(key, body, time.Now())
		req, _ := http.NewRequest(http.MethodPost, in.URL()+"/hook", bytes.NewReader(body))
		req.Header.Set(notify.HeaderSignature, sig)
		req.Header.Set(notify.HeaderTimestamp, ts)
		req.Header.Set(notify.HeaderDelivery, delivery)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("POST /hook = %d, want 204", resp.StatusCode)
		}
	}
	post(sec.Data[NotifyKey], "d-1")
	post([]byte("another key, another key, another"), "d-2")
	got := in.Messages()
	if len(got) != 2 || got[1].Trigger != "degraded" || got[1].App != "checkout" || !got[1].SignatureOK || got[0].SignatureOK {
		t.Errorf("Messages() = %+v, want the signed one verified and the other not, newest first", got)
	}
	if len(got) == 2 && (got[1].Delivery != "d-1" || got[0].Delivery != "d-2") {
		t.Errorf("Messages() deliveries = %q, %q; want d-2, d-1 (each message's %s)", got[0].Delivery, got[1].Delivery, notify.HeaderDelivery)
	}
}
