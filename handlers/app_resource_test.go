package handlers

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/kubeview"
)

// cacheServer is a test server over a real kubeview cache filled from
// client-go fakes: App "web" in namespace apps owns a Deployment, a Service
// and a Secret; App "other" owns a Deployment; App "dup" exists in both
// platform namespaces; a Service "web" also exists in namespace infra.
func cacheServer(t *testing.T) *testServer {
	t.Helper()
	app := func(ns, name, uid string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "hanzo.ai/v1", "kind": "App",
			"metadata": map[string]any{"name": name, "namespace": ns, "uid": uid},
			"spec":     map[string]any{"image": "ghcr.io/acme/" + name + ":1.0.0"},
		}}
	}
	owner := func(name, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "hanzo.ai/v1", Kind: "App", Name: name, UID: types.UID(uid), Controller: ptr.To(true)}}
	}
	// The desired Deployment, as the operator would render and annotate it.
	desired := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "apps"},
		"spec": map[string]any{
			"replicas": 2,
			"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": "ghcr.io/acme/web:1.0.0"}}},
			},
		},
	}
	lastApplied, _ := json.Marshal(desired)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps", UID: "dep-web", OwnerReferences: owner("web", "app-web"),
			Annotations: map[string]string{appcr.LastAppliedAnnotation: string(lastApplied)}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "ghcr.io/acme/web:1.0.0",
					ImagePullPolicy: corev1.PullIfNotPresent, TerminationMessagePath: "/dev/termination-log"}}, // server defaults
					DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler"},
			},
			ProgressDeadlineSeconds: ptr.To[int32](600),
		},
	}
	objs := []runtime.Object{
		dep,
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps", UID: "svc-web", OwnerReferences: owner("web", "app-web")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps", UID: "secret-web", OwnerReferences: owner("web", "app-web")},
			Data: map[string][]byte{"password": []byte("hunter2")}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "apps", UID: "dep-other", OwnerReferences: owner("other", "app-other")}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "infra", UID: "svc-infra-web"}},
		&corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "web.1", Namespace: "apps"}, Type: corev1.EventTypeWarning, Reason: "ScalingReplicaSet",
			Message: "Scaled up <script>x</script>", InvolvedObject: corev1.ObjectReference{Kind: "Deployment", Namespace: "apps", Name: "web", UID: "dep-web"}},
	}
	cs := fake.NewClientset(objs...)
	scheme := runtime.NewScheme()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme,
		map[schema.GroupVersionResource]string{appcr.Resource: "AppList"},
		app("apps", "web", "app-web"), app("apps", "other", "app-other"), app("apps", "dup", "app-dup-1"), app("infra", "dup", "app-dup-2"))
	view, err := kubeview.New(cs, dyn, slog.New(slog.DiscardHandler), kubeview.Options{Namespaces: []string{"apps", "infra"}, ProbeInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	view.Start(ctx)
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := view.WaitForSync(wctx); err != nil {
		t.Fatal(err)
	}
	fv := newFakeView(nil)
	fv.Fleet = view // the real cache answers every method the fake does not override
	ts := newTestServer(t, fv)
	ts.srv.clusters[0].View = view
	ts.handler = ts.srv.Handler()
	return ts
}

// TestResourceRefs sends hostile and good refs to the resource routes: none
// reaches an object outside the app's tree, and a Secret answers exactly
// like an object that does not exist.
func TestResourceRefs(t *testing.T) {
	ts := cacheServer(t)
	notFoundBody := ts.get(t, "/v1/deploy/web/resource/:Service:apps:nope", nil).Body.String()
	tests := []struct {
		name, ref  string
		wantStatus int
	}{
		{"malformed: three fields", "apps:Deployment:web", http.StatusBadRequest},
		{"malformed: bad name", "apps:Deployment:apps:Web_1", http.StatusBadRequest},
		{"kind not in registry", "rbac.authorization.k8s.io:Role:apps:web", http.StatusBadRequest},
		{"secret owned by the app", ":Secret:apps:web", http.StatusNotFound},
		{"secret that does not exist", ":Secret:apps:nope", http.StatusNotFound},
		{"another namespace", ":Service:infra:web", http.StatusNotFound},
		{"another app's object", "apps:Deployment:apps:other", http.StatusNotFound},
		{"missing object", ":Service:apps:nope", http.StatusNotFound},
		{"the app's deployment", "apps:Deployment:apps:web", http.StatusOK},
		{"the app's service", ":Service:apps:web", http.StatusOK},
		{"the App itself", "hanzo.ai:App:apps:web", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"/v1/deploy/web/resource/" + tt.ref, "/clusters/in-cluster/apps/apps/web/resource/" + tt.ref} {
				w := ts.get(t, path, nil)
				if w.Code != tt.wantStatus {
					t.Fatalf("GET %s = %d, want %d (%s)", path, w.Code, tt.wantStatus, w.Body)
				}
				if strings.Contains(w.Body.String(), "hunter2") || strings.Contains(w.Body.String(), "aHVudGVyMg") {
					t.Fatalf("GET %s leaked the Secret's data", path)
				}
			}
			if tt.wantStatus == http.StatusNotFound {
				if got := ts.get(t, "/v1/deploy/web/resource/"+tt.ref, nil).Body.String(); got != notFoundBody {
					t.Errorf("404 body = %s, want the same as for a missing object (%s)", got, notFoundBody)
				}
			}
		})
	}
}

// TestResourceDiffOfUntouchedObject: server defaults are not drift.
func TestResourceDiffOfUntouchedObject(t *testing.T) {
	ts := cacheServer(t)
	w := ts.get(t, "/v1/deploy/web/resource/apps:Deployment:apps:web", nil)
	var got resourceResponse
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.DesiredSource != desiredLastApplied || !got.Diff.Equal || got.Diff.Unified != "" {
		t.Errorf("resource = source %q, equal %v, diff %q; want last-applied, no differences", got.DesiredSource, got.Diff.Equal, got.Diff.Unified)
	}
	if _, ok := got.Live["metadata"].(map[string]any)["managedFields"]; ok {
		t.Errorf("live manifest has managedFields")
	}
	svc := ts.get(t, "/v1/deploy/web/resource/:Service:apps:web", nil)
	if !strings.Contains(svc.Body.String(), `"desiredSource":"none"`) {
		t.Errorf("service without last-applied = %s, want desiredSource none", svc.Body)
	}
}

// TestResourceEventsTab: the panel's events tab shows the object's events,
// read from the cluster per request, escaped.
func TestResourceEventsTab(t *testing.T) {
	ts := cacheServer(t)
	w := ts.get(t, "/clusters/in-cluster/apps/apps/web/resource/apps:Deployment:apps:web?tab=events", nil)
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, `data-testid="events"`) || !strings.Contains(body, "ScalingReplicaSet") {
		t.Fatalf("events tab = %d, want the Deployment's event (%s)", w.Code, body)
	}
	if strings.Contains(body, "<script>x</script>") {
		t.Errorf("events tab shows an event message unescaped")
	}
	if w := ts.get(t, "/clusters/in-cluster/apps/apps/web/resource/:Service:apps:web?tab=events", nil); !strings.Contains(w.Body.String(), `data-testid="events-none"`) {
		t.Errorf("events tab of the Service = %d, want no events (%s)", w.Code, w.Body)
	}

	// Each read pages through the API server's events: a user has a few at
	// a time, and one more is a 429 until a slot is free.
	releases := takeEverySlot(ts.srv.eventReads, testIdentity.Subject)
	const target = "/clusters/in-cluster/apps/apps/web/resource/apps:Deployment:apps:web?tab=events"
	if w := ts.get(t, target, nil); w.Code != http.StatusTooManyRequests || !strings.Contains(w.Body.String(), "event reads in progress") {
		t.Errorf("events tab with every slot of the user taken = %d, want 429 naming the event reads (%s)", w.Code, w.Body)
	}
	releases[0]()
	if w := ts.get(t, target, nil); w.Code != http.StatusOK {
		t.Errorf("events tab with a slot free = %d, want 200", w.Code)
	}
	if len(releases) != 4 {
		t.Errorf("event read slots per user = %d, want 4", len(releases))
	}
	for _, rel := range releases[1:] {
		rel()
	}
	if n := ts.srv.eventReads.inUse(); n != 0 {
		t.Errorf("event read slots still taken = %d, want 0", n)
	}
}

// TestTreeAPI: the tree has the App's children, never its Secret, and an
// ambiguous name is a 409 until ?namespace= picks one.
func TestTreeAPI(t *testing.T) {
	ts := cacheServer(t)
	w := ts.get(t, "/v1/deploy/web/tree", nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET tree = %d, want 200", w.Code)
	}
	var tree kubeview.Tree
	if err := json.Unmarshal(w.Body.Bytes(), &tree); err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, n := range tree.Nodes {
		refs = append(refs, n.Ref)
	}
	want := []string{"hanzo.ai:App:apps:web", "apps:Deployment:apps:web", ":Service:apps:web"}
	if strings.Join(refs, " ") != strings.Join(want, " ") {
		t.Errorf("tree refs = %v, want %v", refs, want)
	}
	if strings.Contains(w.Body.String(), "Secret") {
		t.Errorf("tree mentions a Secret: %s", w.Body)
	}
	if w := ts.get(t, "/v1/deploy/dup/tree", nil); w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "apps, infra") {
		t.Errorf("GET ambiguous tree = %d %s, want 409 naming both namespaces", w.Code, w.Body)
	}
	if w := ts.get(t, "/v1/deploy/dup/tree?namespace=infra", nil); w.Code != http.StatusOK {
		t.Errorf("GET tree?namespace=infra = %d, want 200", w.Code)
	}
	if w := ts.get(t, "/v1/deploy/nope/tree", nil); w.Code != http.StatusNotFound {
		t.Errorf("GET missing app tree = %d, want 404", w.Code)
	}
}

// realCacheServer is a test server over a real kubeview cache of the App
// resource appRes filled from client-go fakes (kube objects and Apps), in
// namespace apps.
func realCacheServer(t *testing.T, appRes schema.GroupVersionResource, kube []runtime.Object, apps []runtime.Object, opts ...func(*Options)) *testServer {
	t.Helper()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{appRes: "AppList"}, apps...)
	view, err := kubeview.New(fake.NewClientset(kube...), dyn, slog.New(slog.DiscardHandler),
		kubeview.Options{Namespaces: []string{"apps"}, AppResource: appRes, ProbeInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	view.Start(ctx)
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := view.WaitForSync(wctx); err != nil {
		t.Fatal(err)
	}
	fv := newFakeView(nil)
	fv.Fleet = view
	ts := newTestServer(t, fv, opts...)
	ts.srv.clusters[0].View = view
	ts.handler = ts.srv.Handler()
	return ts
}

// TestResourcePanelOfAnotherAppResource: with --app-resource naming another
// CRD (serve sets Options.AppGroup/AppKind from it), the App node's panel
// and JSON answer for that group and kind, and hanzo.ai's App is just a
// kind deploy-web does not show.
func TestResourcePanelOfAnotherAppResource(t *testing.T) {
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1alpha1", Resource: "widgets"}
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1alpha1", "kind": "Widget",
		"metadata": map[string]any{"name": "shop", "namespace": "apps", "uid": "widget-shop"},
		"spec":     map[string]any{"image": "registry.test/shop:1.2.0"},
	}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "apps", UID: "svc-shop",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "example.com/v1alpha1", Kind: "Widget", Name: "shop", UID: "widget-shop", Controller: ptr.To(true)}}}}
	ts := realCacheServer(t, widgets, []runtime.Object{svc}, []runtime.Object{widget},
		func(o *Options) { o.AppGroup, o.AppKind = "example.com", "Widget" })

	tests := []struct {
		ref        string
		wantStatus int
	}{
		{"example.com:Widget:apps:shop", http.StatusOK},
		{":Service:apps:shop", http.StatusOK},
		{"hanzo.ai:App:apps:shop", http.StatusBadRequest},
		{"example.com:Widget:apps:nope", http.StatusNotFound},
		{"example.com:Gadget:apps:shop", http.StatusBadRequest},
	}
	for _, tt := range tests {
		for _, path := range []string{"/v1/deploy/shop/resource/" + tt.ref, "/clusters/in-cluster/apps/apps/shop/resource/" + tt.ref} {
			if w := ts.get(t, path, nil); w.Code != tt.wantStatus {
				t.Errorf("GET %s = %d, want %d (%.200s)", path, w.Code, tt.wantStatus, w.Body)
			}
		}
	}
	w := ts.get(t, "/clusters/in-cluster/apps/apps/shop/resource/example.com:Widget:apps:shop", nil)
	if !strings.Contains(w.Body.String(), `data-ref="example.com:Widget:apps:shop"`) {
		t.Errorf("Widget panel does not show the Widget node: %.300s", w.Body)
	}
}

// TestResourcePanelPageIsTheAppPage: a bookmarked resource panel loads
// the whole app page around it, the same sections as without the panel
// (the audit trail and the notifications were missing, and with them the
// freeze banner and the metrics panel the same builder gives).
func TestResourcePanelPageIsTheAppPage(t *testing.T) {
	ts := cacheServer(t)
	page := parseHTML(t, ts.get(t, "/clusters/in-cluster/apps/apps/web", nil).Body.String())
	w := ts.get(t, "/clusters/in-cluster/apps/apps/web/resource/apps:Deployment:apps:web", nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET the panel's page = %d %.300s", w.Code, w.Body)
	}
	panel := parseHTML(t, w.Body.String())
	for _, id := range []string{"audit-history", "app-header", "why-panel", "notifications"} {
		if got, want := len(byTestID(panel, id)), len(byTestID(page, id)); got != want || want == 0 && id == "audit-history" {
			t.Errorf("section %s: %d on the panel's page, %d on the app page; want the same (and the audit trail on both)", id, got, want)
		}
	}
	if len(byTestID(panel, "resource-panel")) == 0 && !strings.Contains(w.Body.String(), `id="panel"`) {
		t.Error("the panel's page has no panel")
	}
}
