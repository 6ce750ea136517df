package kubeview_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/diffrender"
	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/operator"
)

// TestDriftOnRealCluster renders an App's children with the reference
// operator's renderer and applies them once (no operator runs afterwards to
// undo drift), then patches the Deployment by hand. Through the cache, the
// hand-made change is exactly the diff, and untouched children (with every
// server default the apiserver filled in) show none.
func TestDriftOnRealCluster(t *testing.T) {
	const ns = "drift"
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{ns}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, dyn := p.Kube, p.Dyn
	app, err := dyn.Resource(appcr.Resource).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hanzo.ai/v1", "kind": "App",
		"metadata": map[string]any{"name": "web", "namespace": ns},
		"spec": map[string]any{"image": "ghcr.io/acme/web:1.0.0", "replicas": int64(2),
			"env": []any{map[string]any{"name": "MODE", "value": "fast"}}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := operator.ParseSpec(app)
	if err != nil {
		t.Fatal(err)
	}
	r, err := operator.Render(app, spec)
	if err != nil {
		t.Fatal(err)
	}
	apply := metav1.ApplyOptions{FieldManager: "test", Force: true}
	if _, err := cs.AppsV1().Deployments(ns).Apply(ctx, r.Deployment, apply); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Services(ns).Apply(ctx, r.Service, apply); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Apply(ctx, r.ConfigMap, apply); err != nil {
		t.Fatal(err)
	}

	view, err := kubeview.New(cs, dyn, slog.New(slog.DiscardHandler), kubeview.Options{Namespaces: []string{ns}})
	if err != nil {
		t.Fatal(err)
	}
	view.Start(ctx)
	if err := view.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	diffOf := func(ref kubeview.Ref) diffrender.ManifestDiff {
		t.Helper()
		obj, _, err := view.Object(ctx, ns, "web", ref)
		if err != nil {
			t.Fatalf("Object(%s): %v", ref, err)
		}
		desired, err := diffrender.LastApplied(obj.Object)
		if err != nil || desired == nil {
			t.Fatalf("LastApplied(%s) = %v, %v; want the rendered manifest", ref, desired, err)
		}
		md, err := diffrender.Manifests(desired, obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		return md
	}
	dep := kubeview.Ref{Group: "apps", Kind: "Deployment", Namespace: ns, Name: "web"}
	for _, ref := range []kubeview.Ref{dep, {Kind: "Service", Namespace: ns, Name: "web"}, {Kind: "ConfigMap", Namespace: ns, Name: "web"}} {
		if md := diffOf(ref); !md.Diff.Equal {
			t.Errorf("untouched %s shows a diff: +%d -%d\n%s", ref, md.Diff.Added, md.Diff.Removed, md.LiveYAML)
		}
	}

	// By hand, as `kubectl patch deployment web -p ...` would.
	patch := `{"spec":{"replicas":5}}`
	if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, "web", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		md := diffOf(dep)
		if !md.Diff.Equal {
			var changed []string
			for _, row := range md.Diff.Rows {
				if row.Op != diffrender.Equal {
					changed = append(changed, strings.TrimSpace(row.Left.Text)+" -> "+strings.TrimSpace(row.Right.Text))
				}
			}
			// Live (5) on the left, desired (2) on the right.
			if len(changed) != 1 || changed[0] != "replicas: 5 -> replicas: 2" {
				t.Errorf("diff after the hand patch = %q, want exactly replicas: 5 -> replicas: 2", changed)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the hand patch never showed in the diff")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
