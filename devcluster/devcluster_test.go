package devcluster

import (
	"context"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/operator"
)

// TestCluster starts the real control plane, runs a Deployment whose pods
// KWOK makes Running, reads their logs through the apiserver, and checks that
// Stop leaves no process behind.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := ForTest(t, Options{})
	cs := kubernetes.NewForConfigOrDie(c.Config)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	labels := map[string]string{"app": "hello"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "example.com/hello:1.0.0"}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	for {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=hello"})
		if err != nil {
			t.Fatal(err)
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
				pod = p
			}
		}
		if running == 2 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("pods running = %d, want 2 (%v)", running, c.Check())
		}
		time.Sleep(200 * time.Millisecond)
	}

	// Pods and Services get addresses from the documented ranges.
	_, podNet, _ := net.ParseCIDR(PodCIDR)
	if ip := net.ParseIP(pod.Status.PodIP); ip == nil || !podNet.Contains(ip) {
		t.Errorf("pod IP = %q, want one in %s", pod.Status.PodIP, PodCIDR)
	}
	_, svcNet, _ := net.ParseCIDR(ServiceCIDR)
	kube, err := cs.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(kube.Spec.ClusterIP); ip == nil || !svcNet.Contains(ip) {
		t.Errorf("kubernetes Service IP = %q, want one in %s", kube.Spec.ClusterIP, ServiceCIDR)
	}

	rc, err := cs.CoreV1().Pods("default").GetLogs(pod.Name, &corev1.PodLogOptions{Container: "hello"}).Stream(ctx)
	if err != nil {
		t.Fatalf("GetLogs: %v", err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if !strings.Contains(string(b), "listening on :8080") {
		t.Errorf("GetLogs = %q, want the default log lines", b)
	}

	pids := c.Processes()
	if len(pids) != 5 {
		t.Errorf("Processes() = %v, want 5 pieces", pids)
	}
	c.Stop()
	for name, pid := range pids {
		if err := syscall.Kill(-pid, 0); err == nil {
			t.Errorf("process group of %s (%d) still alive after Stop", name, pid)
		}
	}
}

// TestRangesHoldTheBenchmarkFleet: the Service range holds a Service for
// each of 10,000 Apps, the pod range and the node three pods each, and the
// ranges do not overlap.
func TestRangesHoldTheBenchmarkFleet(t *testing.T) {
	const apps, podsPerApp = 10000, 3
	size := func(cidr string) (*net.IPNet, int) {
		t.Helper()
		_, n, err := net.ParseCIDR(cidr)
		if err != nil {
			t.Fatalf("ParseCIDR(%q): %v", cidr, err)
		}
		ones, bits := n.Mask.Size()
		return n, 1<<(bits-ones) - 2
	}
	svcNet, svcs := size(ServiceCIDR)
	podNet, pods := size(PodCIDR)
	if svcs < apps+1 { // +1: the kubernetes Service
		t.Errorf("%s holds %d Services, want at least %d", ServiceCIDR, svcs, apps+1)
	}
	if pods < apps*podsPerApp || NodeMaxPods < apps*podsPerApp {
		t.Errorf("pod range %s holds %d pods and the node %d, want at least %d", PodCIDR, pods, NodeMaxPods, apps*podsPerApp)
	}
	if svcNet.Contains(podNet.IP) || podNet.Contains(svcNet.IP) {
		t.Errorf("Service range %s and pod range %s overlap", ServiceCIDR, PodCIDR)
	}
	// The node's CPU and memory hold NodeMaxPods of the reference
	// operator's pods (what it requests, from a rendered App).
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": appcr.GroupVersion.String(), "kind": appcr.Kind.Kind,
		"metadata": map[string]any{"name": "web", "namespace": "storefront", "uid": "u1"},
		"spec":     map[string]any{"image": "registry.demo.local/web:1.0.0", "replicas": int64(1), "port": int64(8080)},
	}}
	spec, err := operator.ParseSpec(app)
	if err != nil {
		t.Fatal(err)
	}
	r, err := operator.Render(app, spec)
	if err != nil {
		t.Fatal(err)
	}
	req := r.Deployment.Spec.Template.Spec.Containers[0].Resources.Requests
	node := nodeResources()
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		per, offered := (*req)[name], node[name]
		if per.IsZero() {
			t.Fatalf("the operator's pods request no %s: this check reads the wrong field", name)
		}
		if fits := offered.MilliValue() / per.MilliValue(); fits < NodeMaxPods {
			t.Errorf("the node's %s (%s) holds %d pods of %s, want NodeMaxPods (%d)", name, offered.String(), fits, per.String(), NodeMaxPods)
		}
	}
}

// TestVersionsMatchTools keeps the version constants (which name the bin/
// folders) in step with the pinned tool modules that build the binaries.
func TestVersionsMatchTools(t *testing.T) {
	tests := []struct{ gomod, module, want string }{
		{"../tools/kube/go.mod", "k8s.io/kubernetes", KubernetesVersion},
		{"../tools/etcd/go.mod", "go.etcd.io/etcd/server/v3", EtcdVersion},
		{"../tools/kwok/go.mod", "sigs.k8s.io/kwok", KwokVersion},
	}
	for _, tt := range tests {
		b, err := os.ReadFile(tt.gomod)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), tt.module+" "+tt.want+"\n") {
			t.Errorf("%s does not require %s %s", tt.gomod, tt.module, tt.want)
		}
		mk, err := os.ReadFile("../Makefile")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(mk), tt.want) {
			t.Errorf("Makefile does not mention %s %s", tt.module, tt.want)
		}
	}
}

// TestCreateNodeAddresses: the fake node has its InternalIP and Hostname
// from the start, and a node that exists without them (old data, or
// emptied by KWOK) gets them back.
func TestCreateNodeAddresses(t *testing.T) {
	want := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: NodeName}}
	ctx := context.Background()
	for name, cs := range map[string]*fake.Clientset{
		"new":      fake.NewClientset(),
		"existing": fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: NodeName}}),
	} {
		if err := createNode(ctx, cs); err != nil {
			t.Fatalf("%s: createNode: %v", name, err)
		}
		n, err := cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(n.Status.Addresses, want) {
			t.Errorf("%s node: addresses = %v, want %v", name, n.Status.Addresses, want)
		}
	}
}

// TestNodeUnmanagedUntilKwokServes: before KWOK starts, an existing node
// (old data) loses KWOK's annotation and its old lease, and createNode, run
// once KWOK serves, gives the annotation back; a new cluster has no node to
// take it from (see startKwok).
func TestNodeUnmanagedUntilKwokServes(t *testing.T) {
	ctx := context.Background()
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: NodeName, Namespace: corev1.NamespaceNodeLease}}
	for name, tt := range map[string]struct {
		cs      *fake.Clientset
		existed bool
	}{
		"new":      {fake.NewClientset(), false},
		"existing": {fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: NodeName, Annotations: map[string]string{managedAnnotation: managedValue, "keep": "me"}}}, lease), true},
	} {
		existed, err := unmanageNode(ctx, tt.cs)
		if err != nil || existed != tt.existed {
			t.Fatalf("%s: unmanageNode = %v, %v; want %v, nil", name, existed, err, tt.existed)
		}
		if n, err := tt.cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{}); err == nil {
			if _, ok := n.Annotations[managedAnnotation]; ok || n.Annotations["keep"] != "me" {
				t.Errorf("%s: annotations before KWOK serves = %v, want only %s gone", name, n.Annotations, managedAnnotation)
			}
		}
		if _, err := tt.cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, NodeName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: old lease: err = %v, want NotFound", name, err)
		}
		if err := createNode(ctx, tt.cs); err != nil {
			t.Fatalf("%s: createNode: %v", name, err)
		}
		n, err := tt.cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := n.Annotations[managedAnnotation]; got != managedValue {
			t.Errorf("%s: annotation %s after createNode = %q, want %q", name, managedAnnotation, got, managedValue)
		}
	}
}
