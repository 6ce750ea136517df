package kubeview_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/hanzoai/deploy-web/appcr"
	"github.com/hanzoai/deploy-web/devcluster"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/operator"
)

// followLog records a Follow's events for a test to wait on.
type followLog struct {
	mu  sync.Mutex
	evs []string
}

func (f *followLog) emit(ev kubeview.LogEvent) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ev.Status != nil {
		f.evs = append(f.evs, ev.Status.Status+": "+ev.Status.Message)
	} else {
		f.evs = append(f.evs, ev.Line.Line)
	}
	return nil
}

func (f *followLog) waitFor(t *testing.T, what string, match func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		f.mu.Lock()
		for _, ev := range f.evs {
			if match(ev) {
				f.mu.Unlock()
				return
			}
		}
		f.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	t.Fatalf("no %s among the events %q", what, f.evs)
}

func appendLog(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(devcluster.CRILine(time.Now(), "stdout", l)); err != nil {
			t.Fatal(err)
		}
	}
}

// logsPod is a pod of the App's tree: controlled by the App's Deployment
// (scaled to zero, so its own ReplicaSet makes no pods of its own).
func logsPod(name string, owner metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{appcr.InstanceLabel: "logsapp"}, OwnerReferences: []metav1.OwnerReference{owner}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "logsapp", Image: "registry.test/logsapp:1.0.0"}}},
	}
}

// strayPod carries the App's instance label but is not in its tree.
func strayPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{appcr.InstanceLabel: "logsapp"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "logsapp", Image: "registry.test/other:6.6.6"}}},
	}
}

// TestLogsOnRealCluster reads and follows a pod's logs through the real
// apiserver and KWOK's kubelet: lines appended to the log file after the
// stream opened arrive; deleting the pod ends its stream and a new pod is
// followed; an app without pods gets a reason.
func TestLogsOnRealCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	logFile := filepath.Join(t.TempDir(), "logsapp.log")
	boot := time.Now().Add(-time.Minute)
	var initial strings.Builder
	for i, l := range []string{"boot 1", "boot 2", "boot 3 <script>x</script>"} {
		initial.WriteString(devcluster.CRILine(boot.Add(time.Duration(i)*time.Second), "stdout", l))
	}
	if err := os.WriteFile(logFile, []byte(initial.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	c := devcluster.ForTest(t, devcluster.Options{Logs: []devcluster.LogSource{{Containers: []string{"logsapp"}, File: logFile, Follow: true}}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs := kubernetes.NewForConfigOrDie(c.Config)
	dyn := dynamic.NewForConfigOrDie(c.Config)
	if err := operator.InstallCRD(ctx, apiextensionsclient.NewForConfigOrDie(c.Config)); err != nil {
		t.Fatal(err)
	}
	const ns = "default"
	app, err := dyn.Resource(appcr.Resource).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hanzo.ai/v1", "kind": "App", "metadata": map[string]any{"name": "logsapp"},
		"spec": map[string]any{"image": "registry.test/logsapp:1.0.0"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sel := map[string]string{appcr.InstanceLabel: "logsapp"}
	dep, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "logsapp", OwnerReferences: []metav1.OwnerReference{{APIVersion: "hanzo.ai/v1", Kind: "App", Name: "logsapp", UID: app.GetUID(), Controller: ptr.To(true)}}},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "logsapp", Image: "registry.test/logsapp:1.0.0"}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "logsapp", UID: dep.UID, Controller: ptr.To(true)}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, logsPod("logsapp-1", owner), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A pod that only carries the label is never offered nor read.
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, strayPod("zz-stray"), metav1.CreateOptions{}); err != nil {
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
	logs := kubeview.NewLogs(view, cs.CoreV1())
	waitRunning := func(name string) {
		t.Helper()
		for {
			for _, p := range logs.Pods(ns, "logsapp") {
				if p.Name == name && p.Running() {
					return
				}
			}
			select {
			case <-ctx.Done():
				t.Fatalf("pod %s not running: %v", name, logs.Pods(ns, "logsapp"))
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	waitRunning("logsapp-1")
	for _, p := range logs.Pods(ns, "logsapp") {
		if p.Name == "zz-stray" {
			t.Errorf("Pods(logsapp) offers zz-stray, a pod outside the App's tree")
		}
	}
	if _, err := logs.Read(ctx, kubeview.LogQuery{Namespace: ns, App: "logsapp", Pod: "zz-stray"}); err == nil {
		t.Errorf("Read(?pod=zz-stray) = nil error, want the pod refused as not the App's")
	}

	// Read: the tail, through GetLogs.
	res, err := logs.Read(ctx, kubeview.LogQuery{Namespace: ns, App: "logsapp", Tail: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range res.Lines {
		got = append(got, l.Line)
	}
	if strings.Join(got, "|") != "boot 2|boot 3 <script>x</script>" || res.Pod != "logsapp-1" || res.Container != "logsapp" || res.Reason != "" {
		t.Errorf("Read(tail 2) = %q from %s/%s (reason %q), want boot 2 and boot 3", got, res.Pod, res.Container, res.Reason)
	}
	if !res.Lines[0].TS.Equal(boot.Add(time.Second).Truncate(time.Nanosecond).UTC()) {
		t.Errorf("line time = %v, want %v", res.Lines[0].TS, boot.Add(time.Second).UTC())
	}

	// Follow: lines appended after the stream opened arrive.
	fl := &followLog{}
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- logs.Follow(fctx, kubeview.LogQuery{Namespace: ns, App: "logsapp", Tail: 1}, fl.emit) }()
	fl.waitFor(t, "the tail", func(s string) bool { return strings.HasPrefix(s, "boot 3") })
	appendLog(t, logFile, "after 1", "after 2")
	fl.waitFor(t, "an appended line", func(s string) bool { return s == "after 2" })

	// The pod goes, another comes: the stream says so and follows it.
	if err := cs.CoreV1().Pods(ns).Delete(ctx, "logsapp-1", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	fl.waitFor(t, "the end of logsapp-1", func(s string) bool { return strings.HasPrefix(s, "ended: pod logsapp-1 ended") })
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, logsPod("logsapp-2", owner), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	fl.waitFor(t, "the switch to logsapp-2", func(s string) bool { return s == "resumed: resumed on pod logsapp-2 (replaced logsapp-1)" })
	appendLog(t, logFile, "on the new pod")
	fl.waitFor(t, "a line of the new pod", func(s string) bool { return s == "on the new pod" })
	stop()
	if err := <-done; err != nil {
		t.Errorf("Follow() = %v", err)
	}
	fl.mu.Lock()
	n := 0
	for _, ev := range fl.evs {
		if ev == "after 1" {
			n++
		}
	}
	fl.mu.Unlock()
	if n != 1 {
		t.Errorf("line 'after 1' came %d times, want once (no repeat on resuming)", n)
	}

	// An app without pods: an honest empty answer.
	res, err = logs.Read(ctx, kubeview.LogQuery{Namespace: ns, App: "ghost"})
	if err != nil || len(res.Lines) != 0 || res.Reason != "the app has no pods" {
		t.Errorf("Read(ghost) = %d lines, reason %q, %v, want none and a reason", len(res.Lines), res.Reason, err)
	}
}
