// Package platformtest starts what the integration tests share: the real
// local control plane (devcluster) with the App CRD installed, the platform
// namespaces created and, when asked, the reference operator running. Every
// piece stops at the end of the test.
package platformtest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/operator"
)

// Env is a started platform.
type Env struct {
	Cluster *devcluster.Cluster
	Kube    kubernetes.Interface
	Dyn     dynamic.Interface
}

// Options say what to start besides the control plane.
type Options struct {
	// Namespaces are created (the platform namespaces).
	Namespaces []string
	// Operator runs the reference operator on Namespaces.
	Operator bool
	// Cluster configures the control plane.
	Cluster devcluster.Options
}

// Request budget of the tests' admin clients (Env.Kube, Env.Dyn), set on
// purpose instead of inheriting the control plane's 200/s: the same as the
// reference operator's (operator.ClientQPS, ClientBurst), so a test that
// seeds many objects pushes the apiserver no harder than the operator may,
// on a machine whose cores other tests share.
const (
	AdminQPS   = operator.ClientQPS
	AdminBurst = operator.ClientBurst
)

// AdminConfig returns a copy of cfg with the tests' admin request budget
// (AdminQPS, AdminBurst).
func AdminConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.QPS, c.Burst, c.RateLimiter = AdminQPS, AdminBurst, nil
	return c
}

// Start starts the platform for one test; it skips in -short mode.
func Start(t *testing.T, opts Options) *Env {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := devcluster.ForTest(t, opts.Cluster)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := AdminConfig(c.Config)
	e := &Env{Cluster: c, Kube: kubernetes.NewForConfigOrDie(admin), Dyn: dynamic.NewForConfigOrDie(admin)}
	if err := operator.InstallCRD(ctx, apiextensionsclient.NewForConfigOrDie(c.Config)); err != nil {
		t.Fatal(err)
	}
	for _, ns := range opts.Namespaces {
		if _, err := e.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if opts.Operator {
		// The operator's own clients, with its documented rate limits, as
		// the demo builds them: not the test's admin clients.
		opCfg := operator.ClientConfig(c.Config)
		op, err := operator.New(kubernetes.NewForConfigOrDie(opCfg), dynamic.NewForConfigOrDie(opCfg), slog.New(slog.DiscardHandler), operator.Options{Namespaces: opts.Namespaces})
		if err != nil {
			t.Fatal(err)
		}
		opCtx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- op.Run(opCtx) }()
		t.Cleanup(func() {
			stop()
			if err := <-done; err != nil {
				t.Errorf("operator.Run: %v", err)
			}
		})
	}
	return e
}
