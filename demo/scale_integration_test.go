package demo

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/operator"
)

// TestSeedFleetOnRealCluster seeds a small fleet on the real control plane
// with the reference operator and checks that SeedFleet waits for every App
// to reach the state it is built for (healthy, progressing, degraded, and a
// second release) and says so.
func TestSeedFleetOnRealCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := devcluster.ForTest(t, devcluster.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(c.Config)
	dyn := dynamic.NewForConfigOrDie(c.Config)
	if err := operator.InstallCRD(ctx, apiextensionsclient.NewForConfigOrDie(c.Config)); err != nil {
		t.Fatal(err)
	}
	namespaces := []string{"storefront", "payments"}
	for _, ns := range namespaces {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	opCfg := operator.ClientConfig(c.Config)
	op, err := operator.New(kubernetes.NewForConfigOrDie(opCfg), dynamic.NewForConfigOrDie(opCfg), slog.New(slog.DiscardHandler), operator.Options{Namespaces: namespaces})
	if err != nil {
		t.Fatal(err)
	}
	opCtx, stopOp := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- op.Run(opCtx) }()
	t.Cleanup(func() {
		stopOp()
		if err := <-done; err != nil {
			t.Errorf("operator.Run: %v", err)
		}
	})

	var progress bytes.Buffer
	res, err := SeedFleet(ctx, dyn, FleetOptions{Apps: 30, Namespaces: namespaces, Batch: 10, Progress: &progress})
	if err != nil {
		t.Fatalf("SeedFleet: %v\n%s", err, progress.String())
	}
	if res.Apps != 30 || res.Healthy != 17 || res.Progressing != 6 || res.Degraded != 7 || res.WithHistory == 0 {
		t.Errorf("SeedFleet result = %+v, want 30 apps: 17 healthy, 6 progressing, 7 degraded, some with history", res)
	}
	if !strings.Contains(progress.String(), "fleet converged: 30 apps") {
		t.Errorf("progress lacks the convergence line:\n%s", progress.String())
	}
	// An App with a second release has two ReplicaSets.
	for i := range 30 {
		a := fleetSpec(i, namespaces)
		if a.next == "" {
			continue
		}
		rss, err := cs.AppsV1().ReplicaSets(a.namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + a.name})
		if err != nil || len(rss.Items) != 2 {
			t.Errorf("%s/%s ReplicaSets = %d (err %v), want 2", a.namespace, a.name, len(rss.Items), err)
		}
		break
	}
	// A second run adds nothing and converges at once.
	res2, err := SeedFleet(ctx, dyn, FleetOptions{Apps: 30, Namespaces: namespaces})
	if err != nil || res2.Apps != 30 {
		t.Errorf("second SeedFleet = %+v, %v; want the same 30 apps, no error", res2, err)
	}
}
