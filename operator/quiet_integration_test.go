package operator_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/operator"
)

// writeCounter counts the requests that change something (every verb but
// GET, HEAD and OPTIONS: watches and lists are GETs) and remembers the last
// few, to name them when a test fails.
type writeCounter struct {
	n    atomic.Int64
	mu   sync.Mutex
	last []string
}

func (w *writeCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			w.n.Add(1)
			w.mu.Lock()
			w.last = append(w.last, r.Method+" "+r.URL.Path)
			if len(w.last) > 10 {
				w.last = w.last[1:]
			}
			w.mu.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

func (w *writeCounter) recent() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.last...)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestResyncOfUnchangedAppsWritesNothing creates a fleet of Apps with every
// kind of child, waits until each one is Ready, and then lets the informers
// resync the whole fleet twice: the operator reconciles every App again and
// sends no write at all (no apply, no delete, no status update). Its client
// is wrapped with a counting transport, so any request it sends is seen.
func TestResyncOfUnchangedAppsWritesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	const apps = 60
	const resync = 3 * time.Second
	c := devcluster.ForTest(t, devcluster.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	admin := kubernetes.NewForConfigOrDie(c.Config)
	adminDyn := dynamic.NewForConfigOrDie(c.Config)
	if err := operator.InstallCRD(ctx, apiextensionsclient.NewForConfigOrDie(c.Config)); err != nil {
		t.Fatal(err)
	}
	const ns = "quiet"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var writes writeCounter
	cfg := operator.ClientConfig(c.Config)
	if cfg.QPS != operator.ClientQPS || cfg.Burst != operator.ClientBurst || c.Config.QPS == cfg.QPS {
		t.Errorf("ClientConfig QPS/Burst = %v/%d, want %v/%d (and the caller's config untouched)", cfg.QPS, cfg.Burst, operator.ClientQPS, operator.ClientBurst)
	}
	cfg.Wrap(writes.wrap)
	op, err := operator.New(kubernetes.NewForConfigOrDie(cfg), dynamic.NewForConfigOrDie(cfg), slog.New(slog.DiscardHandler),
		operator.Options{Namespaces: []string{ns}, Resync: resync})
	if err != nil {
		t.Fatal(err)
	}
	opCtx, stopOp := context.WithCancel(ctx)
	opDone := make(chan error, 1)
	go func() { opDone <- op.Run(opCtx) }()
	t.Cleanup(func() {
		stopOp()
		if err := <-opDone; err != nil {
			t.Errorf("operator.Run: %v", err)
		}
	})

	client := adminDyn.Resource(appcr.Resource).Namespace(ns)
	for i := range apps {
		spec := map[string]any{"image": fmt.Sprintf("ghcr.io/acme/svc%d:1.0.%d", i, i%3), "replicas": int64(1 + i%2)}
		// Every optional child kind is present on some Apps and absent on
		// others, so both "apply" and "delete" decisions are exercised.
		switch i % 4 {
		case 1:
			spec["host"] = fmt.Sprintf("svc%d.example.com", i)
			spec["env"] = []any{map[string]any{"name": "LOG_LEVEL", "value": "info"}}
		case 2:
			spec["autoscaling"] = map[string]any{"minReplicas": int64(1), "maxReplicas": int64(3)}
			spec["minAvailable"] = int64(1)
		}
		app := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hanzo.ai/v1", "kind": "App",
			"metadata": map[string]any{"name": fmt.Sprintf("svc%d", i), "namespace": ns},
			"spec":     spec,
		}}
		if _, err := client.Create(ctx, app, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(ctx, t, fmt.Sprintf("%d Apps Ready", apps), func() bool {
		list, err := client.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		ready := 0
		for i := range list.Items {
			u := &list.Items[i]
			og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
			if og == u.GetGeneration() && readyReason(u) == "RolloutComplete" {
				ready++
			}
		}
		return ready == apps
	})
	if st := op.Stats(); st.Applies < 2*apps || st.StatusWrites < apps {
		t.Fatalf("operator stats after the fleet converged = %+v, want at least %d applies and %d status writes", st, 2*apps, apps)
	}
	// The reconcile that creates an App's Deployment leaves the status to
	// the one the Deployment's add event brings (a write saved per new App).
	if st := op.Stats(); st.StatusDeferred != apps {
		t.Errorf("status writes deferred to the new Deployment's event = %d, want %d (one per App); stats %+v", st.StatusDeferred, apps, st)
	}

	// Let one resync pass after convergence (late Deployment status events
	// may still be in flight), then watch two more.
	waitReconciles := func(n int64) {
		t.Helper()
		from := op.Stats().Reconciles
		waitFor(ctx, t, fmt.Sprintf("%d more reconciles", n), func() bool { return op.Stats().Reconciles >= from+n })
	}
	waitReconciles(apps)
	before, statsBefore := writes.n.Load(), op.Stats()
	waitReconciles(2 * apps)
	after, statsAfter := writes.n.Load(), op.Stats()
	if got := after - before; got != 0 {
		t.Errorf("writes during two resyncs of %d unchanged Apps = %d, want 0; last writes: %v", apps, got, writes.recent())
	}
	if got := statsAfter.Unchanged - statsBefore.Unchanged; got < 2*2*apps {
		t.Errorf("children found unchanged during two resyncs = %d, want at least %d (Deployment and Service of each App, twice)", got, 4*apps)
	}

	// A sync request is the way to force a re-apply: it writes again.
	before = writes.n.Load()
	stamp := time.Now().UTC().Format(time.RFC3339)
	patch := `{"metadata":{"annotations":{"` + appcr.SyncRequestedAnnotation + `":"` + stamp + `"}}}`
	if _, err := client.Patch(ctx, "svc1", "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "sync request answered", func() bool {
		u, err := client.Get(ctx, "svc1", metav1.GetOptions{})
		got, _, _ := unstructured.NestedString(u.Object, "status", "syncRequestedAt")
		return err == nil && got == stamp
	})
	// svc1 has a Deployment, Service, Ingress and ConfigMap: 4 applies and
	// the status update.
	if got := writes.n.Load() - before; got < 5 {
		t.Errorf("writes for a sync request = %d, want at least 5 (every child applied, status written); last: %v", got, writes.recent())
	}
}
