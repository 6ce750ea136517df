package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/operator"
)

// TestServeOnRealCluster runs serve against the local control plane: a
// platform namespace that does not exist fails start-up; otherwise the
// dashboard serves, /metrics answers on its own listener with the informer
// and request series (and not on the site, where it needs a login), and a
// cancel (SIGTERM) shuts it down cleanly.
func TestServeOnRealCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := devcluster.ForTest(t, devcluster.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if err := operator.InstallCRD(ctx, apiextensionsclient.NewForConfigOrDie(c.Config)); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(c.Config)
	for _, ns := range []string{"shop", "deploy-web"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := auth.GenerateSessionKeys()
	if err != nil {
		t.Fatal(err)
	}
	issuer := fakeIssuer(t)
	cfg := serveConfig{
		Namespaces: "shop,nope", AppResource: "apps.v1.hanzo.ai",
		IssuerURL: issuer, ClientID: "deploy-web", RedirectURL: "http://127.0.0.1/auth/callback",
		AdminClaim: auth.DefaultAdminClaim, AdminValue: auth.DefaultAdminValue, SessionTTL: time.Hour,
		InsecureCookies: true, PerPage: 100, MetricsAddr: freeAddr(t), ShutdownGrace: 5 * time.Second,
		HistoryNamespace: "deploy-web", AuditKeep: audit.DefaultKeep, AuditMaxAge: audit.DefaultMaxAge,
	}
	quiet := slog.New(slog.DiscardHandler)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	err = serve(ctx, cfg, c.Config, "secret", keys, ln, quiet, nil)
	if err == nil || !strings.Contains(err.Error(), `namespace "nope" does not exist`) {
		t.Fatalf("serve(--namespaces shop,nope) = %v, want a start-up failure naming nope", err)
	}

	cfg.Namespaces = "shop"
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	site := "http://" + ln.Addr().String()
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- serve(sctx, cfg, c.Config, "secret", keys, ln, quiet, func() { close(ready) }) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("serve() = %v before it was ready", err)
	}

	get := func(url string) (int, string) {
		t.Helper()
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if code, _ := get(site + "/readyz"); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never ready")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The audit trail runs: its retention replica took the Lease.
	for {
		l, err := cs.CoordinationV1().Leases("deploy-web").Get(ctx, audit.RetentionLeaseName, metav1.GetOptions{})
		if err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the audit retention Lease was never taken: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, _ := get(site + "/metrics"); code != http.StatusUnauthorized && code != http.StatusFound && code != http.StatusSeeOther {
		t.Errorf("GET /metrics on the site = %d, want a denial (it is not served there)", code)
	}
	code, body := get("http://" + cfg.MetricsAddr + "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics = %d", code)
	}
	for _, want := range []string{
		`deploy_web_informer_synced{cluster="in-cluster",kind="Deployment",namespace="shop"} 1`,
		`deploy_web_informer_synced{cluster="in-cluster",kind="App",namespace="shop"} 1`,
		`deploy_web_informer_forbidden{cluster="in-cluster",kind="Pod",namespace="shop"} 0`,
		`deploy_web_http_request_duration_seconds_count{code="2xx",route="GET /readyz"}`,
		`deploy_web_sse_streams_open 0`,
		`deploy_web_operations_total{operation="rollback",outcome="accepted"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve() after SIGTERM = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve() did not return within 10s of SIGTERM")
	}
	if _, err := net.DialTimeout("tcp", cfg.MetricsAddr, time.Second); err == nil {
		t.Errorf("the metrics listener is still open after shutdown")
	}
}
