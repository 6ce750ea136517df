package release_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/release"
)

const ns = "platform"

type env struct {
	cs   kubernetes.Interface
	dyn  dynamic.Interface
	view *kubeview.Cache
	rel  *release.Releaser
}

// setup starts the real control plane, the operator and the caches, and
// creates App web with releases 1.0.0 -> 1.1.0 -> 1.2.0 (and a non-semver
// "latest" in between).
func setup(t *testing.T) *env {
	t.Helper()
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{ns}, Operator: true})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e := &env{cs: p.Kube, dyn: p.Dyn}
	log := slog.New(slog.DiscardHandler)
	var err error
	if e.view, err = kubeview.New(e.cs, e.dyn, log, kubeview.Options{Namespaces: []string{ns}}); err != nil {
		t.Fatal(err)
	}
	e.view.Start(ctx)
	e.rel = release.New(e.dyn, e.cs.CoreV1(), appcr.Resource, e.view.HistoryImages, log)

	apps := e.dyn.Resource(appcr.Resource).Namespace(ns)
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hanzo.ai/v1", "kind": "App",
		"metadata": map[string]any{"name": "web", "namespace": ns},
		"spec":     map[string]any{"image": "ghcr.io/acme/web:1.0.0", "replicas": int64(2)},
	}}
	if _, err := apps.Create(ctx, app, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"1.0.0", "latest", "1.1.0", "1.2.0"} {
		patch := `{"spec":{"image":"ghcr.io/acme/web:` + tag + `"}}`
		if _, err := apps.Patch(ctx, "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		e.waitSynced(t, tag)
	}
	return e
}

// waitSynced waits until the cache shows web declaring and running tag,
// Synced.
func (e *env) waitSynced(t *testing.T, tag string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		row, ok := e.view.Row(ns, "web")
		if ok && row.Version == tag && row.Sync.Status == kubeview.SyncSynced && row.RunningSummary() == tag+" (2)" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("web never Synced at %s: %+v", tag, row)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// written returns what a write by the seam would change: the App's
// generation, labels, annotations and spec. Its resourceVersion is no
// measure, since the operator keeps updating the status subresource while
// the rollout settles.
func (e *env) written(t *testing.T) string {
	t.Helper()
	u, err := e.dyn.Resource(appcr.Resource).Namespace(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{"generation": u.GetGeneration(), "labels": u.GetLabels(), "annotations": u.GetAnnotations(), "spec": u.Object["spec"]})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRollbackOnRealCluster rolls back through the seam and follows the loop:
// CR patched, operator updates the Deployment, the old release's pods run
// again, the verdict becomes Synced, an Event names the user; refusals leave
// the CR untouched; a second identical rollback changes nothing.
func TestRollbackOnRealCluster(t *testing.T) {
	e := setup(t)
	ctx := context.Background()

	// Refusals: the CR is untouched (same resourceVersion).
	before := e.written(t)
	for _, v := range []string{"latest", "1.2", "1.2.3-rc1", "v1.2.3+build", " 1.2.3", "1.2.3\n", "9.9.9"} {
		if _, err := e.rel.Rollback(ctx, ns, "web", v, "alice@example.com"); err == nil {
			t.Errorf("Rollback(%q) = nil error, want a refusal", v)
		}
	}
	if _, err := e.rel.Rollback(ctx, ns, "nope", "1.0.0", "alice@example.com"); !errors.Is(err, kubeview.ErrAppNotFound) && !errors.Is(err, release.ErrNotFound) {
		t.Errorf("Rollback(unknown app) = %v, want not found", err)
	}
	if after := e.written(t); after != before {
		t.Errorf("refused rollbacks changed the App:\n%s\n->\n%s", before, after)
	}

	res, err := e.rel.Rollback(ctx, ns, "web", "1.1.0", "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if want := (release.Result{App: "web", Namespace: ns, From: "1.2.0", To: "1.1.0", Changed: true}); res != want {
		t.Errorf("Rollback = %+v, want %+v", res, want)
	}
	e.waitSynced(t, "1.1.0")
	dep, err := e.cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil || dep.Spec.Template.Spec.Containers[0].Image != "ghcr.io/acme/web:1.1.0" {
		t.Fatalf("Deployment image = %v (%v), want 1.1.0", dep.Spec.Template.Spec.Containers[0].Image, err)
	}
	hist, _ := e.view.History(ns, "web")
	if len(hist) == 0 || hist[0].Version != "1.1.0" || !hist[0].Current || hist[0].Ready != 2 {
		t.Errorf("newest release = %+v, want 1.1.0 current with 2 ready pods", hist[0])
	}

	// Idempotent.
	before = e.written(t)
	res, err = e.rel.Rollback(ctx, ns, "web", "1.1.0", "alice@example.com")
	if err != nil || res.Changed {
		t.Errorf("second Rollback = %+v, %v; want changed=false", res, err)
	}
	if after := e.written(t); after != before {
		t.Errorf("idempotent rollback patched the App:\n%s\n->\n%s", before, after)
	}

	// The audit Event names the user and from -> to.
	evs, err := e.cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web,reason=" + release.ReasonRollback})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs.Items) != 1 || !strings.Contains(evs.Items[0].Message, "alice@example.com") || !strings.Contains(evs.Items[0].Message, "1.2.0 to 1.1.0") {
		t.Errorf("rollback events = %v, want one naming alice and 1.2.0 to 1.1.0", evs.Items)
	}

	// Sync: the annotation changes and the operator records it handled it.
	sres, err := e.rel.Sync(ctx, ns, "web", "alice@example.com")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		u, err := e.dyn.Resource(appcr.Resource).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		handled, _, _ := unstructured.NestedString(u.Object, "status", "syncRequestedAt")
		if u.GetAnnotations()[appcr.SyncRequestedAnnotation] == sres.RequestedAt && handled == sres.RequestedAt {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sync %s never handled (annotation %q, status %q)", sres.RequestedAt, u.GetAnnotations()[appcr.SyncRequestedAnnotation], handled)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestConcurrentRollbacks runs two different rollbacks at once: the apiserver
// serialises them through the resourceVersion precondition; each result is
// consistent with the order they landed in, and nothing is lost.
func TestConcurrentRollbacks(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	results := make([]release.Result, 2)
	errs := make([]error, 2)
	for i, v := range []string{"1.0.0", "1.1.0"} {
		wg.Go(func() { results[i], errs[i] = e.rel.Rollback(ctx, ns, "web", v, "user"+v) })
	}
	wg.Wait()
	u, err := e.dyn.Resource(appcr.Resource).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	image, _, _ := unstructured.NestedString(u.Object, "spec", "image")
	final := appcr.ImageTag(image)
	var applied []release.Result
	for i := range results {
		switch {
		case errs[i] == nil && results[i].Changed:
			applied = append(applied, results[i])
		case errors.Is(errs[i], release.ErrConflict):
		default:
			t.Errorf("rollback %d = %+v, %v; want applied or a clean conflict", i, results[i], errs[i])
		}
	}
	switch len(applied) {
	case 1:
		if applied[0].From != "1.2.0" || applied[0].To != final {
			t.Errorf("the one applied rollback %+v does not explain the final version %s", applied[0], final)
		}
	case 2:
		// Both applied in turn: one went first from 1.2.0, the other saw its result.
		first, second := applied[0], applied[1]
		if second.From == "1.2.0" {
			first, second = second, first
		}
		if first.From != "1.2.0" || second.From != first.To || second.To != final {
			t.Errorf("rollbacks %+v then %+v do not chain to the final version %s", first, second, final)
		}
	default:
		t.Fatalf("no rollback applied: %v", errs)
	}
	e.waitSynced(t, final)
}
