package kubeview_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
)

// benchNamespaces are the platform namespaces of the benchmark fleets.
var benchNamespaces = []string{"team-a", "team-b", "team-c", "team-d"}

// benchFixtures returns n Apps, each with an App CR, a Deployment, 2
// ReplicaSets, 3 pods, a Service, an HPA (autoscaling/v2) and a PDB: 8 in 10
// healthy (the old ReplicaSet scaled to zero), 1 in 10 rolling out (2 old
// pods, 1 new) and 1 in 10 Degraded (progress deadline exceeded, 2 old
// pods, 1 new pod not ready).
//
// With realistic, every object also carries what the operator, the
// controllers, admission and the kubelet add in a real cluster (see
// fatten), so that the memory measured is closer to production.
func benchFixtures(n int, realistic bool) []fixApp {
	out := make([]fixApp, n)
	for i := range n {
		name := fmt.Sprintf("%s-%05d", genPrefixes[i%len(genPrefixes)], i)
		f := fixApp{ns: benchNamespaces[i%len(benchNamespaces)], name: name, extras: true, replicas: 3,
			deployed: fixT0.Add(time.Duration((i*7919)%n) * time.Second)}
		oldImg, newImg := img(name, "1.1.0"), img(name, "1.2.0")
		switch i % 10 {
		case 1:
			f.versions = []fixVersion{{image: oldImg, ready: 2}, {image: newImg, ready: 1}}
		case 2:
			f.versions = []fixVersion{{image: oldImg, ready: 2}, {image: newImg, notReady: 1}}
			f.dep = func(d *appsv1.Deployment) {
				d.Status.Conditions[1] = appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}
			}
		default:
			f.versions = []fixVersion{{image: oldImg}, {image: newImg, ready: 3}}
		}
		if realistic {
			f.each = fatten
			f.app = fattenApp
		}
		out[i] = f
	}
	return out
}

// benchClients returns fake clients holding the fixtures of n Apps, put in
// their trackers before any informer starts. The fixtures themselves are
// garbage once it returns: the trackers keep their own copies.
func benchClients(n int, realistic bool) (testClientset, *dynamicfake.FakeDynamicClient) {
	apps, objs := fixObjects(benchFixtures(n, realistic))
	return newTestClientset(objs...), newTestDynamic(apps...)
}

// benchCaches holds one filled, synced cache per fleet size, shared by the
// benchmarks and never stopped.
var benchCaches struct {
	sync.Mutex
	m map[int]*kubeview.Cache
}

func benchCache(b *testing.B, n int) *kubeview.Cache {
	b.Helper()
	benchCaches.Lock()
	defer benchCaches.Unlock()
	if c, ok := benchCaches.m[n]; ok {
		return c
	}
	cs, dyn := benchClients(n, false)
	env := startCache(context.Background(), b, cs, dyn, benchNamespaces)
	p, err := env.cache.Applications(kubeview.Query{})
	if err != nil || len(p.Rows) != n {
		b.Fatalf("Applications(Query{}) = %d rows, %v, want %d rows", len(p.Rows), err, n)
	}
	if benchCaches.m == nil {
		benchCaches.m = map[int]*kubeview.Cache{}
	}
	benchCaches.m[n] = env.cache
	return env.cache
}

func benchQuery(b *testing.B, n int, q kubeview.Query, wantRows int) {
	c := benchCache(b, n)
	p, err := c.Applications(q)
	if err != nil {
		b.Fatal(err)
	}
	if len(p.Rows) != wantRows {
		b.Fatalf("Applications(%+v) = %d rows, want %d", q, len(p.Rows), wantRows)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Applications(q); err != nil {
			b.Fatal(err)
		}
	}
}

// heapInUse returns runtime.MemStats.HeapInuse after two collections.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// cacheMemory is measured once per size: the heap the fake clients' trackers
// take, the heap the started and synced cache adds on top of them, and how
// long Start took to sync.
type cacheMemory struct {
	fake, cache int64
	sync        time.Duration
	err         error
}

// cacheMemoryCases are BenchmarkCacheMemory's sub-benchmarks: fleet size and
// realistic objects.
var cacheMemoryCases = []struct {
	name      string
	apps      int
	realistic bool
}{
	{"apps=2000", 2000, false},
	{"apps=2000,objects=realistic", 2000, true},
	{"apps=10000,objects=realistic", 10000, true},
}

func measureCacheMemory(n int, realistic bool) cacheMemory {
	h0 := heapInUse()
	cs, dyn := benchClients(n, realistic)
	decodeLists(cs, dyn)
	h1 := heapInUse()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	c, err := kubeview.New(cs, dyn, discardLogger(), kubeview.Options{Namespaces: benchNamespaces, ProbeInterval: time.Hour})
	if err != nil {
		return cacheMemory{err: err}
	}
	c.Start(ctx)
	if err := c.WaitForSync(ctx); err != nil {
		return cacheMemory{err: err}
	}
	took := time.Since(start)
	h2 := heapInUse()
	p, err := c.Applications(kubeview.Query{Health: objrules.HealthHealthy})
	if err == nil && (p.Counts.Total != n || p.Matched != n*8/10) {
		err = fmt.Errorf("Applications() = %d rows, %d Healthy, want %d, %d", p.Counts.Total, p.Matched, n, n*8/10)
	}
	runtime.KeepAlive(cs)
	runtime.KeepAlive(dyn)
	return cacheMemory{fake: h1 - h0, cache: h2 - h1, sync: took, err: err}
}

// decodeLists makes the fake clients answer a list with objects decoded from
// JSON, as a real client does. Without it the listed objects would share
// their strings with the trackers' copies (a deep copy shares strings), and
// the heap of the cache would be counted as the fake's.
func decodeLists(cs testClientset, dyn *dynamicfake.FakeDynamicClient) {
	cs.PrependReactor("list", "*", decodedList(cs.Tracker()))
	dyn.PrependReactor("list", "*", decodedList(dyn.Tracker()))
}

func decodedList(tracker k8stesting.ObjectTracker) k8stesting.ReactionFunc {
	react := k8stesting.ObjectReaction(tracker)
	return func(a k8stesting.Action) (bool, k8sruntime.Object, error) {
		handled, obj, err := react(a)
		if !handled || err != nil {
			return handled, obj, err
		}
		if ul, ok := obj.(*unstructured.UnstructuredList); ok && ul.GetKind() == "" {
			ul.SetAPIVersion(a.GetResource().GroupVersion().String())
			ul.SetKind("List")
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return true, nil, err
		}
		out := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(k8sruntime.Object)
		return true, out, json.Unmarshal(b, out)
	}
}

// BenchmarkCacheMemory reports the heap in use that a synced cache of a
// fleet takes (MB-heap, and MB-heap/1000apps), apart from the fake clients'
// own copies of the objects (MB-heap-fake), measured after runtime.GC, and
// how long Start took until Synced (s-sync, with WaitForSync's 50ms
// polling). It runs on the lean fixtures of the other benchmarks and on
// realistic ones (see fatten), at 2,000 and 10,000 Apps. With b.Loop the
// function runs once, so each case is measured once.
func BenchmarkCacheMemory(b *testing.B) {
	for _, tc := range cacheMemoryCases {
		b.Run(tc.name, func(b *testing.B) {
			m := measureCacheMemory(tc.apps, tc.realistic)
			if m.err != nil {
				b.Fatal(m.err)
			}
			for b.Loop() {
			}
			b.ReportMetric(float64(m.cache)/1e6, "MB-heap")
			b.ReportMetric(float64(m.cache)/1e6/float64(tc.apps)*1000, "MB-heap/1000apps")
			b.ReportMetric(float64(m.fake)/1e6, "MB-heap-fake")
			b.ReportMetric(m.sync.Seconds(), "s-sync")
		})
	}
}

// BenchmarkInitialRows times the computation of every row from filled
// caches, as Start does once the informers have synced.
func BenchmarkInitialRows(b *testing.B) {
	for _, n := range []int{2000, 10000} {
		b.Run("apps="+strconv.Itoa(n), func(b *testing.B) {
			c := benchCache(b, n)
			b.ReportAllocs()
			for b.Loop() {
				if got := kubeview.ComputeAllRows(c); got != n {
					b.Fatalf("ComputeAllRows() = %d, want %d", got, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/app")
		})
	}
}

func BenchmarkApplicationsFirstPage(b *testing.B) {
	for _, n := range []int{2000, 10000} {
		b.Run("apps="+strconv.Itoa(n), func(b *testing.B) {
			benchQuery(b, n, kubeview.Query{Limit: 100}, 100)
		})
	}
}

func BenchmarkApplicationsAll(b *testing.B) {
	b.Run("apps=2000", func(b *testing.B) {
		benchQuery(b, 2000, kubeview.Query{}, 2000)
	})
}

func BenchmarkApplicationsFiltered(b *testing.B) {
	b.Run("apps=10000", func(b *testing.B) {
		// App i is Degraded when i%10 == 2 and a "web-" when i%4 == 0:
		// both hold for i%20 == 12, 500 Apps of 10,000.
		benchQuery(b, 10000, kubeview.Query{Health: objrules.HealthDegraded, Search: "WEB"}, 500)
	})
}

// fatten adds to a fixture object what a real cluster adds: the operator's
// last-applied-configuration annotation on the children it renders (the
// Deployment, Service, HPA and PDB), the Deployment controller's
// annotations, strategy and condition details, and on pods what admission,
// the scheduler and the kubelet fill in (the service-account volume,
// tolerations, node, IPs, QoS class, five conditions, container IDs).
func fatten(o k8sruntime.Object) {
	now := metav1.NewTime(fixT0)
	lastApplied := func(m *metav1.ObjectMeta, obj any) {
		b, err := json.Marshal(obj)
		if err != nil {
			panic(err)
		}
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = string(b)
		m.Labels["app.kubernetes.io/managed-by"] = "hanzo-operator"
		m.Labels["app.kubernetes.io/version"] = "1.2.0"
	}
	switch o := o.(type) {
	case *appsv1.Deployment:
		fattenPodSpec(&o.Spec.Template.Spec, "")
		o.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
			MaxUnavailable: new(intstr.FromString("25%")), MaxSurge: new(intstr.FromString("25%"))}}
		o.Spec.RevisionHistoryLimit = new(int32(10))
		o.Spec.ProgressDeadlineSeconds = new(int32(600))
		lastApplied(&o.ObjectMeta, o.Spec)
		o.Annotations["deployment.kubernetes.io/revision"] = "2"
		for i := range o.Status.Conditions {
			c := &o.Status.Conditions[i]
			c.LastUpdateTime, c.LastTransitionTime = now, now
			c.Message = fmt.Sprintf("ReplicaSet %q has successfully progressed.", o.Name+"-5d8f7c9b6")
		}
	case *appsv1.ReplicaSet:
		fattenPodSpec(&o.Spec.Template.Spec, "")
		o.Annotations["deployment.kubernetes.io/desired-replicas"] = "3"
		o.Annotations["deployment.kubernetes.io/max-replicas"] = "4"
	case *corev1.Pod:
		fattenPodSpec(&o.Spec, o.Name)
		o.GenerateName = o.Name[:len(o.Name)-5]
		o.Spec.NodeName = "node-" + o.Name[len(o.Name)-2:]
		o.Status.HostIP, o.Status.PodIP = "10.0.3.17", "10.244.3.201"
		o.Status.HostIPs = []corev1.HostIP{{IP: o.Status.HostIP}}
		o.Status.PodIPs = []corev1.PodIP{{IP: o.Status.PodIP}}
		o.Status.StartTime = &now
		o.Status.QOSClass = corev1.PodQOSBurstable
		ready := o.Status.Conditions[0].Status
		o.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: ready, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: ready, LastTransitionTime: now},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
		for i := range o.Status.ContainerStatuses {
			cs := &o.Status.ContainerStatuses[i]
			cs.ImageID = cs.Image + "@sha256:4f2a1c0d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f"
			cs.ContainerID = "containerd://8c1e0f3b6a2d4e5f7a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f"
			cs.Started = new(true)
			cs.VolumeMounts = []corev1.VolumeMountStatus{{Name: "kube-api-access-x7k2p", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}}
		}
	case *corev1.Service:
		lastApplied(&o.ObjectMeta, o.Spec)
		o.Spec.ClusterIP = "10.96.14.201"
		o.Spec.ClusterIPs = []string{o.Spec.ClusterIP}
		o.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		o.Spec.IPFamilyPolicy = new(corev1.IPFamilyPolicySingleStack)
		o.Spec.SessionAffinity = corev1.ServiceAffinityNone
		o.Spec.InternalTrafficPolicy = new(corev1.ServiceInternalTrafficPolicyCluster)
	case *autoscalingv2.HorizontalPodAutoscaler:
		o.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: new(int32(80))}}}}
		lastApplied(&o.ObjectMeta, o.Spec)
		o.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
			Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: new(int32(41)), AverageValue: new(resource.MustParse("20m"))}}}}
		for i := range o.Status.Conditions {
			c := &o.Status.Conditions[i]
			c.LastTransitionTime = now
			c.Message = "the HPA controller was able to get the target's current scale"
		}
	case *policyv1.PodDisruptionBudget:
		lastApplied(&o.ObjectMeta, o.Spec)
		o.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 3, DesiredHealthy: 1, DisruptionsAllowed: 2, ExpectedPods: 3,
			Conditions: []metav1.Condition{{Type: "DisruptionAllowed", Status: metav1.ConditionTrue, Reason: "SufficientPods", LastTransitionTime: now}}}
	}
}

// fattenPodSpec adds to a pod spec (pod is "" for a template) what the
// operator renders and what admission adds.
func fattenPodSpec(s *corev1.PodSpec, pod string) {
	c := &s.Containers[0]
	c.Env = []corev1.EnvVar{{Name: "PORT", Value: "8080"}, {Name: "LOG_LEVEL", Value: "info"}, {Name: "OTEL_SERVICE_NAME", Value: c.Name}}
	c.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}
	c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http"), Scheme: corev1.URISchemeHTTP}},
		TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3}
	c.TerminationMessagePath, c.TerminationMessagePolicy = "/dev/termination-log", corev1.TerminationMessageReadFile
	c.ImagePullPolicy = corev1.PullIfNotPresent
	s.RestartPolicy, s.DNSPolicy, s.SchedulerName = corev1.RestartPolicyAlways, corev1.DNSClusterFirst, "default-scheduler"
	s.TerminationGracePeriodSeconds = new(int64(30))
	s.SecurityContext = &corev1.PodSecurityContext{}
	if pod == "" {
		return
	}
	s.ServiceAccountName = "default"
	s.EnableServiceLinks = new(true)
	s.PreemptionPolicy = new(corev1.PreemptLowerPriority)
	s.Priority = new(int32(0))
	s.Tolerations = []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
	}
	s.Volumes = []corev1.Volume{{Name: "kube-api-access-x7k2p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: new(int32(420)),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: new(int64(3607))}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		}}}}}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "kube-api-access-x7k2p", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
}

// fattenApp gives the App CR what kubectl apply and the operator add.
func fattenApp(u *unstructured.Unstructured) {
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	spec["port"] = int64(8080)
	spec["replicas"] = int64(3)
	spec["env"] = []any{map[string]any{"name": "LOG_LEVEL", "value": "info"}}
	_ = unstructured.SetNestedMap(u.Object, spec, "spec")
	b, err := json.Marshal(u.Object)
	if err != nil {
		panic(err)
	}
	u.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(b)})
	u.SetFinalizers([]string{"hanzo.ai/finalizer"})
}

// BenchmarkApplicationsFirstPageAfterChange is the first page right after a
// row changed: with pods coming and going, most requests to a large fleet
// follow a change. Each iteration changes one row (encoded and merged into
// the sorted list, kubeview.ChangeRow) and asks for the first page.
func BenchmarkApplicationsFirstPageAfterChange(b *testing.B) {
	for _, n := range []int{2000, 10000} {
		b.Run("apps="+strconv.Itoa(n), func(b *testing.B) {
			c := benchCache(b, n)
			q := kubeview.Query{Limit: 100}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i += 7919 // a prime: changes spread over the fleet
				kubeview.ChangeRow(c, i)
				if p, err := c.Applications(q); err != nil || len(p.Rows) != 100 {
					b.Fatalf("Applications(%+v) = %d rows, %v, want 100 rows", q, len(p.Rows), err)
				}
			}
		})
	}
}
