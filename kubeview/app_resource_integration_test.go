package kubeview_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/hanzoai/deploy-web/internal/platformtest"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
)

// widgetResource is a second App CRD, of another group, version and kind
// than hanzo.ai/v1 App, as --app-resource=widgets.v1alpha1.example.com
// chooses it.
var widgetResource = schema.GroupVersionResource{Group: "example.com", Version: "v1alpha1", Resource: "widgets"}

// installWidgetCRD installs the Widget CRD (no status subresource, any
// fields) and waits until it is established.
func installWidgetCRD(ctx context.Context, t *testing.T, client apiextensionsclient.Interface) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: widgetResource.Resource + "." + widgetResource.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: widgetResource.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: widgetResource.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true),
				}},
			}},
		},
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CRD %s: %v", crd.Name, err)
	}
	for {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get CRD %s: %v", crd.Name, err)
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("CRD %s never established: %v", crd.Name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitRow waits, woken by Changed, until the row of key satisfies ok, and
// fails the test with the last row when ctx ends first.
func waitRow(ctx context.Context, t *testing.T, c *kubeview.Cache, key, what string, ok func(kubeview.AppRow) bool) kubeview.AppRow {
	t.Helper()
	for {
		changed := c.Changed()
		p, err := c.Applications(kubeview.Query{})
		if err != nil {
			t.Fatalf("Applications() error = %v", err)
		}
		row, found := findRow(p, key)
		if found && ok(row) {
			return row
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("row %s: %s never happened (%v); last row (found %t): %+v", key, what, ctx.Err(), found, row)
		}
	}
}

// TestAnotherAppResourceOnRealCluster serves the fleet from a second CRD
// (example.com/v1alpha1 Widget) on the real control plane. The Widget's own
// health is read with the configured version (not Unknown for "not
// hanzo.ai/v1"), and a Deployment tied to the Widget only by its owner
// reference (another name, no instance label) reaches the row when it
// appears after the caches synced.
func TestAnotherAppResourceOnRealCluster(t *testing.T) {
	const ns = "widgets"
	p := platformtest.Start(t, platformtest.Options{Namespaces: []string{ns}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	installWidgetCRD(ctx, t, apiextensionsclient.NewForConfigOrDie(p.Cluster.Config))

	const image = "registry.test/shop:1.2.0"
	widget, err := p.Dyn.Resource(widgetResource).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": widgetResource.GroupVersion().String(), "kind": "Widget",
		"metadata": map[string]any{"name": "shop", "namespace": ns},
		"spec":     map[string]any{"image": image},
		"status": map[string]any{"observedGeneration": int64(1), "conditions": []any{
			map[string]any{"type": "Ready", "status": "True", "reason": "Ready", "message": "widget is ready"},
		}},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	view, err := kubeview.New(p.Kube, p.Dyn, slog.New(slog.DiscardHandler), kubeview.Options{Namespaces: []string{ns}, AppResource: widgetResource})
	if err != nil {
		t.Fatal(err)
	}
	view.Start(ctx)
	if err := view.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	key := ns + "/shop"
	row := waitRow(ctx, t, view, key, "a row for the Widget", func(kubeview.AppRow) bool { return true })
	if row.HasDeployment || row.Health.Status != objrules.HealthMissing || row.Version != "1.2.0" {
		t.Errorf("row before the Deployment = health %s, HasDeployment %t, version %q; want Missing, false, 1.2.0", row.Health.Status, row.HasDeployment, row.Version)
	}

	sel := map[string]string{"widget": "shop"}
	_, err = p.Kube.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-server", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: widgetResource.GroupVersion().String(), Kind: "Widget", Name: "shop", UID: widget.GetUID(), Controller: ptr.To(true),
		}}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "shop", Image: image}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	row = waitRow(ctx, t, view, key, "Healthy with its Deployment", func(r kubeview.AppRow) bool {
		return r.HasDeployment && r.Health.Status == objrules.HealthHealthy
	})
	if row.Sync.Status != kubeview.SyncSynced || row.Replicas.Ready != 1 {
		t.Errorf("row = sync %s (%s), %d ready; want Synced, 1 ready", row.Sync.Status, row.Sync.Message, row.Replicas.Ready)
	}

	tree, err := view.Tree(ns, "shop")
	if err != nil {
		t.Fatal(err)
	}
	root := tree.Nodes[0]
	if root.Group != "example.com" || root.Kind != "Widget" || root.Health == nil || root.Health.Status != objrules.HealthHealthy || root.Health.Message != "widget is ready" {
		t.Errorf("tree root = %s %s health %+v, want example.com Widget Healthy (widget is ready)", root.Group, root.Kind, root.Health)
	}
	var kinds []string
	for _, n := range tree.Nodes[1:] {
		kinds = append(kinds, n.Kind+"/"+n.Name)
	}
	if len(kinds) == 0 || kinds[0] != "Deployment/shop-server" {
		t.Errorf("tree children = %v, want Deployment/shop-server first", kinds)
	}
}
