package kubeview_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	restclient "k8s.io/client-go/rest"
	restfake "k8s.io/client-go/rest/fake"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
)

// fixT0 is the creation time of every fixture unless a fixture says otherwise.
var fixT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fixApp describes one App and the objects the operator and the Deployment
// controller would have made for it: the App CR, its Deployment, the
// Deployment's ReplicaSets and their Pods, a Service, and optionally an HPA
// and a PDB. Every child carries the instance label, as the operator renders
// it (pods and ReplicaSets inherit it from the pod template).
type fixApp struct {
	ns, name string
	// image is the App's spec.image; default registry.test/<name>:1.2.0.
	image string
	// replicas is the Deployment's spec.replicas; default the pods of the
	// newest ReplicaSet, or 3 with the default versions.
	replicas int32
	// versions are the ReplicaSets, oldest revision first; default one
	// ReplicaSet running image with replicas ready pods.
	versions []fixVersion
	// noDeployment leaves out the Deployment and its ReplicaSets and Pods.
	noDeployment bool
	// orphan leaves the ownerReferences and labels out of the Deployment and
	// Service: they are children only by their name.
	orphan bool
	// extras adds an autoscaling/v2 HPA (able to scale) and a PDB.
	extras bool
	// deployed is the creation time of the newest ReplicaSet; default fixT0.
	deployed time.Time
	// dep and app change the Deployment and the App CR last; each changes
	// every typed object last.
	dep  func(*appsv1.Deployment)
	app  func(*unstructured.Unstructured)
	each func(runtime.Object)
	// extra returns more objects to add with the fixture's.
	extra func(fixApp) []runtime.Object
}

// fixVersion is one ReplicaSet of a fixture: its template image and its pods.
type fixVersion struct {
	image           string
	ready, notReady int32
}

func (f fixApp) key() string { return f.ns + "/" + f.name }

func (f fixApp) uid(kind string) types.UID {
	return types.UID("uid-" + kind + "-" + f.ns + "-" + f.name)
}

func (f fixApp) defaults() fixApp {
	if f.image == "" {
		f.image = "registry.test/" + f.name + ":1.2.0"
	}
	if f.versions == nil {
		n := f.replicas
		if n == 0 {
			n = 3
		}
		f.versions = []fixVersion{{image: f.image, ready: n}}
	}
	if f.replicas == 0 {
		last := f.versions[len(f.versions)-1]
		f.replicas = last.ready + last.notReady
	}
	if f.deployed.IsZero() {
		f.deployed = fixT0
	}
	return f
}

// appObject returns the App CR of a fixture: Ready and observed.
func (f fixApp) appObject() *unstructured.Unstructured {
	f = f.defaults()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": appcr.GroupVersion.String(),
		"kind":       appcr.Kind.Kind,
		"metadata": map[string]any{
			"name":              f.name,
			"namespace":         f.ns,
			"uid":               string(f.uid("App")),
			"generation":        int64(1),
			"creationTimestamp": fixT0.Add(-time.Hour).Format(time.RFC3339),
		},
		"spec": map[string]any{"image": f.image},
		"status": map[string]any{
			"observedGeneration": int64(1),
			"conditions": []any{map[string]any{
				"type": "Ready", "status": "True", "reason": "Ready", "message": "all replicas ready",
			}},
		},
	}}
	if f.app != nil {
		f.app(u)
	}
	return u
}

func (f fixApp) labels() map[string]string {
	return map[string]string{appcr.InstanceLabel: f.name, appcr.NameLabel: f.name}
}

func (f fixApp) owner() []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion: appcr.GroupVersion.String(), Kind: appcr.Kind.Kind, Name: f.name, UID: f.uid("App"),
		Controller: new(true), BlockOwnerDeletion: new(true),
	}}
}

func (f fixApp) podSpec(image string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{
		Name: f.name, Image: image,
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
	}}}
}

// objects returns the typed objects of a fixture (everything but the App).
func (f fixApp) objects() []runtime.Object {
	f = f.defaults()
	var out []runtime.Object
	childMeta := func(name string) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: f.labels(), OwnerReferences: f.owner(),
			CreationTimestamp: metav1.NewTime(fixT0.Add(-time.Hour))}
		if f.orphan {
			m.Labels, m.OwnerReferences = nil, nil
		}
		return m
	}
	if !f.noDeployment {
		newest := f.versions[len(f.versions)-1]
		var total, ready int32
		for _, v := range f.versions {
			total += v.ready + v.notReady
			ready += v.ready
		}
		d := &appsv1.Deployment{
			ObjectMeta: childMeta(f.name),
			Spec: appsv1.DeploymentSpec{
				Replicas: new(f.replicas),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{appcr.InstanceLabel: f.name}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: f.labels()}, Spec: f.podSpec(newest.image)},
			},
			Status: appsv1.DeploymentStatus{
				ObservedGeneration: 1, Replicas: total, UpdatedReplicas: newest.ready + newest.notReady,
				ReadyReplicas: ready, AvailableReplicas: ready,
				Conditions: []appsv1.DeploymentCondition{
					{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
					{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
				},
			},
		}
		d.Generation = 1
		d.UID = f.uid("Deployment")
		if f.dep != nil {
			f.dep(d)
		}
		out = append(out, d)
		for i, v := range f.versions {
			rev := i + 1
			hash := fmt.Sprintf("%08x", rev*7919)
			labels := f.labels()
			labels["pod-template-hash"] = hash
			created := f.deployed.Add(time.Duration(i-len(f.versions)+1) * time.Hour)
			rs := &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{
					Namespace: f.ns, Name: f.name + "-" + hash, Labels: labels, UID: f.uid(fmt.Sprintf("ReplicaSet-%d", rev)),
					Annotations:       map[string]string{"deployment.kubernetes.io/revision": fmt.Sprint(rev)},
					CreationTimestamp: metav1.NewTime(created), Generation: 1,
					OwnerReferences: []metav1.OwnerReference{{
						APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: new(true),
					}},
				},
				Spec: appsv1.ReplicaSetSpec{
					Replicas: new(v.ready + v.notReady),
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: f.podSpec(v.image)},
				},
				Status: appsv1.ReplicaSetStatus{
					ObservedGeneration: 1, Replicas: v.ready + v.notReady, ReadyReplicas: v.ready, AvailableReplicas: v.ready,
				},
			}
			out = append(out, rs)
			for p := range v.ready + v.notReady {
				ready := corev1.ConditionTrue
				if p >= v.ready {
					ready = corev1.ConditionFalse
				}
				out = append(out, &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{
						Namespace: f.ns, Name: fmt.Sprintf("%s-%05d", rs.Name, p), Labels: labels,
						UID: types.UID(fmt.Sprintf("%s-pod-%d", rs.UID, p)), CreationTimestamp: metav1.NewTime(created),
						OwnerReferences: []metav1.OwnerReference{{
							APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: new(true),
						}},
					},
					Spec: f.podSpec(v.image),
					Status: corev1.PodStatus{
						Phase:      corev1.PodRunning,
						Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}},
						ContainerStatuses: []corev1.ContainerStatus{{
							Name: f.name, Image: v.image, Ready: ready == corev1.ConditionTrue,
							State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(created)}},
						}},
					},
				})
			}
		}
	}
	svc := &corev1.Service{
		ObjectMeta: childMeta(f.name),
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, Selector: map[string]string{appcr.InstanceLabel: f.name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}},
		},
	}
	svc.UID = f.uid("Service")
	out = append(out, svc)
	if f.extras {
		hpa := &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: childMeta(f.name),
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: f.name},
				MinReplicas:    new(int32(2)), MaxReplicas: 10,
			},
			Status: autoscalingv2.HorizontalPodAutoscalerStatus{
				CurrentReplicas: f.replicas, DesiredReplicas: f.replicas,
				Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{
					{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "ReadyForNewScale"},
					{Type: autoscalingv2.ScalingActive, Status: corev1.ConditionTrue, Reason: "ValidMetricFound"},
				},
			},
		}
		hpa.UID = f.uid("HorizontalPodAutoscaler")
		pdb := &policyv1.PodDisruptionBudget{
			ObjectMeta: childMeta(f.name),
			Spec: policyv1.PodDisruptionBudgetSpec{
				MinAvailable: new(intstr.FromInt32(1)),
				Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{appcr.InstanceLabel: f.name}},
			},
		}
		pdb.UID = f.uid("PodDisruptionBudget")
		out = append(out, hpa, pdb)
	}
	if f.extra != nil {
		out = append(out, f.extra(f)...)
	}
	if f.each != nil {
		for _, o := range out {
			f.each(o)
		}
	}
	return out
}

// testClientset is the client-go fake clientset with a discovery client
// whose RESTClient answers /readyz: the fake's own returns a nil RESTClient,
// on which the cache's reachability probe would panic.
type testClientset struct {
	*fake.Clientset
	disc *testDiscovery
}

func (c testClientset) Discovery() discovery.DiscoveryInterfaces { return c.disc }

type testDiscovery struct {
	*fakediscovery.FakeDiscovery
	rest *restfake.RESTClient
}

func (d *testDiscovery) RESTClient() restclient.Interface { return d.rest }

func newTestClientset(objs ...runtime.Object) testClientset {
	cs := fake.NewSimpleClientset(objs...)
	rest := &restfake.RESTClient{
		NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
		Client: restfake.CreateHTTPClient(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/plain"}},
				Body: io.NopCloser(strings.NewReader("ok"))}, nil
		}),
	}
	return testClientset{Clientset: cs, disc: &testDiscovery{FakeDiscovery: cs.Discovery().(*fakediscovery.FakeDiscovery), rest: rest}}
}

var _ kubernetes.Interface = testClientset{}

// newTestDynamic returns the dynamic fake with the App resource registered
// as a list kind, holding apps.
func newTestDynamic(apps ...runtime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{appcr.Resource: "AppList"}, apps...)
}

// fixObjects returns the App CRs and the typed objects of fixtures.
func fixObjects(fixtures []fixApp) (apps, objs []runtime.Object) {
	for _, f := range fixtures {
		apps = append(apps, f.appObject())
		objs = append(objs, f.objects()...)
	}
	return apps, objs
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// testEnv is a started, synced cache over fake clients.
type testEnv struct {
	cache *kubeview.Cache
	cs    testClientset
	dyn   *dynamicfake.FakeDynamicClient
}

// startCache starts a cache of namespaces over clients and waits for it to
// sync, within 60s. The cache stops when ctx ends.
func startCache(ctx context.Context, tb testing.TB, cs testClientset, dyn *dynamicfake.FakeDynamicClient, namespaces []string) *testEnv {
	tb.Helper()
	c, err := kubeview.New(cs, dyn, discardLogger(), kubeview.Options{Namespaces: namespaces, ProbeInterval: time.Hour})
	if err != nil {
		tb.Fatalf("kubeview.New() = %v", err)
	}
	c.Start(ctx)
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := c.WaitForSync(wctx); err != nil {
		tb.Fatalf("WaitForSync() = %v", err)
	}
	return &testEnv{cache: c, cs: cs, dyn: dyn}
}

// newTestEnv returns a synced cache of namespaces holding fixtures, stopped
// at the end of the test.
func newTestEnv(t *testing.T, namespaces []string, fixtures ...fixApp) *testEnv {
	t.Helper()
	apps, objs := fixObjects(fixtures)
	return startCache(t.Context(), t, newTestClientset(objs...), newTestDynamic(apps...), namespaces)
}

// rowsByKey returns every row of the cache by namespace/name.
func rowsByKey(t *testing.T, c *kubeview.Cache) map[string]kubeview.AppRow {
	t.Helper()
	p, err := c.Applications(kubeview.Query{})
	if err != nil {
		t.Fatalf("Applications(Query{}) error = %v", err)
	}
	out := make(map[string]kubeview.AppRow, len(p.Rows))
	for _, r := range p.Rows {
		out[r.Key()] = r
	}
	return out
}

// waitPage polls c.Applications(q), woken by Changed, until ok accepts the
// page, and fails the test after 10s.
func waitPage(t *testing.T, c *kubeview.Cache, q kubeview.Query, what string, ok func(kubeview.Page) bool) kubeview.Page {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		changed := c.Changed()
		p, err := c.Applications(q)
		if err != nil {
			t.Fatalf("Applications(%+v) error = %v", q, err)
		}
		if ok(p) {
			return p
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("Applications(%+v): %s did not happen within 10s; last page: %d rows, counts %+v", q, what, len(p.Rows), p.Counts)
		}
	}
}

// findRow returns the row of key in p.
func findRow(p kubeview.Page, key string) (kubeview.AppRow, bool) {
	for _, r := range p.Rows {
		if r.Key() == key {
			return r, true
		}
	}
	return kubeview.AppRow{}, false
}

// recount counts rows by health and sync, as the fleet counts should be.
func recount(rows []kubeview.AppRow) kubeview.Counts {
	c := kubeview.Counts{Health: map[objrules.HealthStatus]int{}, Sync: map[kubeview.SyncStatus]int{}}
	for _, r := range rows {
		c.Total++
		c.Health[r.Health.Status]++
		c.Sync[r.Sync.Status]++
	}
	return c
}

// nonZero drops the zero entries of counts, which the fleet keeps after a
// bucket empties, so that counts compare by value.
func nonZero(c kubeview.Counts) kubeview.Counts {
	out := kubeview.Counts{Total: c.Total, Health: map[objrules.HealthStatus]int{}, Sync: map[kubeview.SyncStatus]int{}}
	for k, v := range c.Health {
		if v != 0 {
			out.Health[k] = v
		}
	}
	for k, v := range c.Sync {
		if v != 0 {
			out.Sync[k] = v
		}
	}
	return out
}
