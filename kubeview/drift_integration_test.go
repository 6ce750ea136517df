package kubeview_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/operator"
)

// TestHandDriftOnRealCluster makes each kind of hand change on the real
// control plane and checks that exactly the expected drift entries appear,
// and disappear again when the change is undone. The operator's writes are
// made the way the reference operator makes them (server-side apply of its
// rendering with its field manager), without its reconcile loop, so that
// nothing reverts a hand change behind the test's back. The HPA and the
// deployment controller are the real kube-controller-manager.
func TestHandDriftOnRealCluster(t *testing.T) {
	const ns = "handdrift"
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{ns}})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cs, dyn := p.Kube, p.Dyn
	asOperator := metav1.ApplyOptions{FieldManager: appcr.OperatorManager, Force: true}

	// render applies an App's children as the operator does.
	render := func(app *unstructured.Unstructured) {
		t.Helper()
		spec, err := operator.ParseSpec(app)
		if err != nil {
			t.Fatal(err)
		}
		r, err := operator.Render(app, spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.AppsV1().Deployments(ns).Apply(ctx, r.Deployment, asOperator); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().Services(ns).Apply(ctx, r.Service, asOperator); err != nil {
			t.Fatal(err)
		}
		if r.ConfigMap != nil {
			if _, err := cs.CoreV1().ConfigMaps(ns).Apply(ctx, r.ConfigMap, asOperator); err != nil {
				t.Fatal(err)
			}
		}
		if r.HPA != nil {
			if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Apply(ctx, r.HPA, asOperator); err != nil {
				t.Fatal(err)
			}
		}
	}
	newApp := func(name string, spec map[string]any) *unstructured.Unstructured {
		t.Helper()
		app, err := dyn.Resource(appcr.Resource).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hanzo.ai/v1", "kind": "App",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"spec":     spec,
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		render(app)
		return app
	}
	web := newApp("web", map[string]any{"image": "ghcr.io/acme/web:1.0.0", "replicas": int64(2),
		"env": []any{map[string]any{"name": "MODE", "value": "fast"}}})
	newApp("auto", map[string]any{"image": "ghcr.io/acme/auto:1.0.0",
		"autoscaling": map[string]any{"minReplicas": int64(3), "maxReplicas": int64(5)}})

	view, err := kubeview.New(cs, dyn, slog.New(slog.DiscardHandler), kubeview.Options{Namespaces: []string{ns}})
	if err != nil {
		t.Fatal(err)
	}
	view.Start(ctx)
	if err := view.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}

	// The HPA's controller scales "auto" up to its minimum through the
	// scale subresource: that is not drift. (On this Kubernetes the scale
	// write leaves spec.replicas with no manager at all; kubeview's rules
	// also cover a server that records kube-controller-manager for it.)
	waitFor(t, ctx, "the HPA to scale auto to 3", func() bool {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "auto", metav1.GetOptions{})
		return err == nil && d.Spec.Replicas != nil && *d.Spec.Replicas == 3
	})
	// A rollout (a new image, applied by the operator) and a reconcile
	// that changes nothing leave no drift either.
	web.Object["spec"].(map[string]any)["image"] = "ghcr.io/acme/web:1.1.0"
	render(web)
	render(web)
	waitFor(t, ctx, "the rollout's second ReplicaSet", func() bool {
		rs, err := cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		n := 0
		for _, r := range rs.Items {
			if strings.HasPrefix(r.Name, "web-") {
				n++
			}
		}
		return err == nil && n == 2
	})

	uid := func(kind, name string) string {
		t.Helper()
		var m metav1.Object
		var err error
		switch kind {
		case "Deployment":
			m, err = cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		case "Service":
			m, err = cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		case "ConfigMap":
			m, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(m.GetUID())
	}
	objects := map[string]string{
		"Deployment/web": uid("Deployment", "web"), "Service/web": uid("Service", "web"), "ConfigMap/web": uid("ConfigMap", "web"),
		"Deployment/auto": uid("Deployment", "auto"),
	}
	// expect waits until every object's drift is exactly want (paths,
	// managers, operations and live values; times are the server's).
	expect := func(step string, want map[string][]objrules.DriftField) {
		t.Helper()
		n := 0 // drifted objects of web
		for key := range want {
			if strings.HasSuffix(key, "/web") && len(want[key]) > 0 {
				n++
			}
		}
		var diff string
		deadline := time.Now().Add(30 * time.Second)
		for {
			diff = ""
			for key, id := range objects {
				if d := cmp.Diff(want[key], view.DriftOf(id), cmpopts.IgnoreFields(objrules.DriftField{}, "Time"), cmpopts.IgnoreUnexported(objrules.DriftField{}), cmpopts.EquateEmpty()); d != "" {
					diff += key + ": " + d
				}
			}
			// The row says the same (it is recomputed just after the cache).
			if row, _ := view.Row(ns, "web"); row.Drift != n || row.Sync.Drifted != (n > 0) {
				diff += fmt.Sprintf("row: drift = %d (drifted %v), want %d\n", row.Drift, row.Sync.Drifted, n)
			}
			if diff == "" || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if diff != "" {
			t.Fatalf("%s: drift mismatch (-want +got):\n%s", step, diff)
		}
	}
	expect("after create, HPA scaling, rollout and reconcile", nil)

	kubectl := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, p.Cluster.Kubectl, append([]string{"--kubeconfig", p.Cluster.Kubeconfig, "-n", ns}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
	}

	kubectl("set", "env", "deployment/web", "EXTRA_FLAG=1")
	expect("kubectl set env", map[string][]objrules.DriftField{"Deployment/web": {{
		Path: "spec.template.spec.containers[name=web].env[name=EXTRA_FLAG]", Manager: "kubectl-set", Operation: "Update", Live: `{"name":"EXTRA_FLAG","value":"1"}`}}})
	kubectl("set", "env", "deployment/web", "EXTRA_FLAG-")
	expect("kubectl set env undone", nil)

	kubectl("scale", "deployment/web", "--replicas=4")
	expect("kubectl scale", map[string][]objrules.DriftField{"Deployment/web": {{
		Path: "spec.replicas", Manager: "kubectl", Operation: "Update", Live: "4"}}})
	render(web) // the operator's next apply takes spec.replicas back
	expect("kubectl scale undone by the operator", nil)

	kubectl("annotate", "deployment/web", "team.example.com/owner=ops")
	kubectl("label", "service/web", "tier=front")
	expect("kubectl annotate and label", map[string][]objrules.DriftField{
		"Deployment/web": {{Path: `metadata.annotations["team.example.com/owner"]`, Manager: "kubectl-annotate", Operation: "Update", Live: `"ops"`}},
		"Service/web":    {{Path: "metadata.labels.tier", Manager: "kubectl-label", Operation: "Update", Live: `"front"`}},
	})
	kubectl("annotate", "deployment/web", "team.example.com/owner-")
	kubectl("label", "service/web", "tier-")
	expect("kubectl annotate and label undone", nil)

	editor := filepath.Join(t.TempDir(), "editor")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nsed -i 's/revisionHistoryLimit: 10/revisionHistoryLimit: 5/' \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBE_EDITOR", editor)
	kubectl("edit", "deployment/web")
	expect("kubectl edit", map[string][]objrules.DriftField{"Deployment/web": {{
		Path: "spec.revisionHistoryLimit", Manager: "kubectl-edit", Operation: "Update", Live: "5"}}})
	render(web)
	expect("kubectl edit undone by the operator", nil)

	other := metav1.ApplyOptions{FieldManager: "other-tool", Force: true}
	if _, err := cs.CoreV1().ConfigMaps(ns).Apply(ctx, corev1ac.ConfigMap("web", ns).WithData(map[string]string{"extra": "yes"}), other); err != nil {
		t.Fatal(err)
	}
	expect("server-side apply by another manager", map[string][]objrules.DriftField{"ConfigMap/web": {{
		Path: "data.extra", Manager: "other-tool", Operation: "Apply", Live: `"yes"`}}})
	if _, err := cs.CoreV1().ConfigMaps(ns).Apply(ctx, corev1ac.ConfigMap("web", ns), other); err != nil {
		t.Fatal(err)
	}
	expect("server-side apply by another manager withdrawn", nil)

	tree, err := view.Tree(ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range tree.Nodes {
		if n.Drift != 0 {
			t.Errorf("tree node %s: drift %d after every change was undone, want 0", n.Ref, n.Drift)
		}
	}
}

func waitFor(t *testing.T, ctx context.Context, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
