package operator_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/operator"
)

// TestOperatorOnRealCluster creates an App on the real local control plane
// and follows the whole loop: the operator renders its children, KWOK runs
// its pods, their logs come back through the apiserver, the App reports Ready,
// a sync request is answered, and removing spec.host removes the Ingress.
func TestOperatorOnRealCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := devcluster.ForTest(t, devcluster.Options{})
	cs := kubernetes.NewForConfigOrDie(c.Config)
	dyn := dynamic.NewForConfigOrDie(c.Config)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	if err := operator.InstallCRD(ctx, apiextensionsclient.NewForConfigOrDie(c.Config)); err != nil {
		t.Fatal(err)
	}
	const ns = "platform"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	op, err := operator.New(cs, dyn, slog.New(slog.DiscardHandler), operator.Options{Namespaces: []string{ns}})
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

	apps := dyn.Resource(appcr.Resource).Namespace(ns)
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hanzo.ai/v1", "kind": "App",
		"metadata": map[string]any{"name": "web", "namespace": ns},
		"spec": map[string]any{
			"image": "ghcr.io/acme/web:1.0.0", "replicas": int64(2), "host": "web.example.com",
			"env":          []any{map[string]any{"name": "LOG_LEVEL", "value": "info"}},
			"autoscaling":  map[string]any{"minReplicas": int64(2), "maxReplicas": int64(4)},
			"minAvailable": int64(1),
		},
	}}
	if _, err := apps.Create(ctx, app, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Children: named after the App, labelled, owned, annotated.
	check := func(kind string, get func() (metav1.Object, error)) {
		t.Helper()
		var obj metav1.Object
		waitFor(ctx, t, kind+" web", func() bool {
			o, err := get()
			obj = o
			return err == nil
		})
		if got := obj.GetLabels()[appcr.InstanceLabel]; got != "web" {
			t.Errorf("%s label %s = %q, want web", kind, appcr.InstanceLabel, got)
		}
		if refs := obj.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "App" || refs[0].Name != "web" {
			t.Errorf("%s ownerReferences = %v, want the App web", kind, refs)
		}
		if la := obj.GetAnnotations()[appcr.LastAppliedAnnotation]; !strings.Contains(la, `"name":"web"`) {
			t.Errorf("%s last-applied = %q, want the rendered object", kind, la)
		}
	}
	check("Deployment", func() (metav1.Object, error) { return cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}) })
	check("Service", func() (metav1.Object, error) { return cs.CoreV1().Services(ns).Get(ctx, "web", metav1.GetOptions{}) })
	check("Ingress", func() (metav1.Object, error) {
		return cs.NetworkingV1().Ingresses(ns).Get(ctx, "web", metav1.GetOptions{})
	})
	check("HorizontalPodAutoscaler", func() (metav1.Object, error) {
		return cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{})
	})
	check("PodDisruptionBudget", func() (metav1.Object, error) {
		return cs.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "web", metav1.GetOptions{})
	})
	check("ConfigMap", func() (metav1.Object, error) { return cs.CoreV1().ConfigMaps(ns).Get(ctx, "web", metav1.GetOptions{}) })

	// Pods Running, and their logs readable through the apiserver.
	var pod corev1.Pod
	waitFor(ctx, t, "2 running pods", func() bool {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: appcr.InstanceLabel + "=web"})
		if err != nil {
			return false
		}
		n := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				n++
				pod = p
			}
		}
		return n == 2
	})
	rc, err := cs.CoreV1().Pods(ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: "web"}).Stream(ctx)
	if err != nil {
		t.Fatalf("GetLogs: %v", err)
	}
	logs, _ := io.ReadAll(rc)
	rc.Close()
	if len(strings.TrimSpace(string(logs))) == 0 {
		t.Errorf("GetLogs(%s) returned no lines", pod.Name)
	}

	// Ready, with the observed generation.
	waitFor(ctx, t, "App Ready", func() bool {
		u, err := apps.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false
		}
		og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		return og == u.GetGeneration() && readyReason(u) == "RolloutComplete"
	})

	// A sync request is answered in status.
	stamp := time.Now().UTC().Format(time.RFC3339)
	patch := `{"metadata":{"annotations":{"` + appcr.SyncRequestedAnnotation + `":"` + stamp + `"}}}`
	if _, err := apps.Patch(ctx, "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "syncRequestedAt handled", func() bool {
		u, err := apps.Get(ctx, "web", metav1.GetOptions{})
		got, _, _ := unstructured.NestedString(u.Object, "status", "syncRequestedAt")
		return err == nil && got == stamp
	})

	// A new image rolls the Deployment out; dropping the host removes the Ingress.
	patch = `{"spec":{"image":"ghcr.io/acme/web:1.1.0","host":null}}`
	if _, err := apps.Patch(ctx, "web", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "Deployment at 1.1.0, complete", func() bool {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && d.Spec.Template.Spec.Containers[0].Image == "ghcr.io/acme/web:1.1.0" && rolloutComplete(d)
	})
	waitFor(ctx, t, "Ingress removed", func() bool {
		_, err := cs.NetworkingV1().Ingresses(ns).Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	rss, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: appcr.InstanceLabel + "=web"})
	if err != nil || len(rss.Items) != 2 {
		t.Errorf("ReplicaSets = %d (err %v), want 2 (one per release)", len(rss.Items), err)
	}
}

func readyReason(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			r, _ := m["reason"].(string)
			return r
		}
	}
	return ""
}

func rolloutComplete(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want
}

func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(150 * time.Millisecond):
		}
	}
}
