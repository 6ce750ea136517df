package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func TestFlagsFromEnv(t *testing.T) {
	env := map[string]string{
		"DEPLOY_WEB_NAMESPACES":     "shop,pay",
		"DEPLOY_WEB_SHUTDOWN_GRACE": "7s",
		"DEPLOY_WEB_ADDR":           ":1",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var cfg serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.register(fs)
	if err := flagsFromEnv(fs, envPrefix, lookup); err != nil {
		t.Fatalf("flagsFromEnv() = %v", err)
	}
	if err := parseFlags(fs, []string{"--addr", ":2"}); err != nil {
		t.Fatalf("parseFlags() = %v", err)
	}
	if cfg.Namespaces != "shop,pay" || cfg.ShutdownGrace != 7*time.Second {
		t.Errorf("from env: namespaces %q, grace %v; want shop,pay and 7s", cfg.Namespaces, cfg.ShutdownGrace)
	}
	if cfg.Addr != ":2" {
		t.Errorf("addr = %q, want the command line's :2 over the environment's :1", cfg.Addr)
	}
	if u := fs.Lookup("metrics-addr").Usage; !strings.Contains(u, "[$DEPLOY_WEB_METRICS_ADDR]") {
		t.Errorf("metrics-addr help = %q, want it to name $DEPLOY_WEB_METRICS_ADDR", u)
	}

	env["DEPLOY_WEB_SESSION_TTL"] = "forever"
	fs = flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.register(fs)
	if err := flagsFromEnv(fs, envPrefix, lookup); err == nil || !strings.Contains(err.Error(), "$DEPLOY_WEB_SESSION_TTL") {
		t.Errorf("flagsFromEnv(bad duration) = %v, want an error naming $DEPLOY_WEB_SESSION_TTL", err)
	}
}

// TestServeHelpExplainsEveryFlag checks that each serve flag has help text.
func TestServeHelpExplainsEveryFlag(t *testing.T) {
	var cfg serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.register(fs)
	fs.VisitAll(func(f *flag.Flag) {
		if len(f.Usage) < 15 {
			t.Errorf("--%s help = %q, want an explanation", f.Name, f.Usage)
		}
	})
	for _, name := range []string{"metrics-addr", "shutdown-grace", "namespaces", "oidc-issuer"} {
		if fs.Lookup(name) == nil {
			t.Errorf("serve has no --%s", name)
		}
	}
}

func TestCheckNamespaces(t *testing.T) {
	cs := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})
	ctx := t.Context()
	if err := checkNamespaces(ctx, cs.CoreV1().Namespaces(), []string{"shop"}); err != nil {
		t.Errorf("checkNamespaces(existing) = %v, want nil", err)
	}
	err := checkNamespaces(ctx, cs.CoreV1().Namespaces(), []string{"shop", "shpo"})
	if err == nil || !strings.Contains(err.Error(), `namespace "shpo" does not exist`) {
		t.Errorf("checkNamespaces(typo) = %v, want namespace \"shpo\" does not exist", err)
	}
	cs.PrependReactor("get", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "shop", errors.New("rbac"))
	})
	if err := checkNamespaces(ctx, cs.CoreV1().Namespaces(), []string{"shop"}); err == nil || !strings.Contains(err.Error(), "may not read namespace") {
		t.Errorf("checkNamespaces(forbidden) = %v, want a forbidden error", err)
	}
}

// TestShutdownFinishesInFlight starts a slow POST, shuts down while it runs,
// and checks that the listener stops accepting at once, the POST finishes
// with its answer, and shutdown returns nil within the grace period.
func TestShutdownFinishesInFlight(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		time.Sleep(500 * time.Millisecond)
		fmt.Fprint(w, "rolled back")
	})}
	go func() { _ = hs.Serve(ln) }()
	url := "http://" + ln.Addr().String() + "/v1/deploy/web/rollback"
	type answer struct {
		body string
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.Post(url, "application/json", strings.NewReader(`{"version":"1.0.0"}`))
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- answer{string(b), err}
	}()
	<-started
	done := make(chan error, 1)
	go func() { done <- shutdown(hs, 5*time.Second, slog.New(slog.DiscardHandler)) }()
	time.Sleep(100 * time.Millisecond)
	if c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Errorf("a new connection was accepted during shutdown")
	}
	if a := <-got; a.err != nil || a.body != "rolled back" {
		t.Errorf("in-flight POST = %q, %v; want its answer", a.body, a.err)
	}
	if err := <-done; err != nil {
		t.Errorf("shutdown() = %v, want nil", err)
	}
}

// TestShutdownGraceOver checks that a request running past the grace period
// is cut off and reported.
func TestShutdownGraceOver(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started, stop := make(chan struct{}), make(chan struct{})
	defer close(stop)
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	})}
	go func() { _ = hs.Serve(ln) }()
	go func() {
		if resp, err := http.Get("http://" + ln.Addr().String()); err == nil {
			resp.Body.Close()
		}
	}()
	<-started
	err = shutdown(hs, 200*time.Millisecond, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "grace period") {
		t.Errorf("shutdown() = %v, want a grace-period error", err)
	}
}

// fakeIssuer serves just enough OIDC discovery for auth.New.
func fakeIssuer(t *testing.T) string {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			_ = json.NewEncoder(w).Encode(map[string]any{
				"issuer": srv.URL, "authorization_endpoint": srv.URL + "/auth", "token_endpoint": srv.URL + "/token",
				"jwks_uri": srv.URL + "/jwks", "id_token_signing_alg_values_supported": []string{"RS256"},
			})
		case "/jwks":
			_, _ = io.WriteString(w, `{"keys":[]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// freeAddr returns a loopback address nothing listens on (for a listener
// that serve opens itself).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
