package devcluster

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestStartAgainOnOldData starts a cluster, runs a pod, stops it and starts
// it again on the same folder, and checks from KWOK's own log that it never
// built two CEL environments at once (startKwok): in each run its server
// started (so initCEL was done) before it did anything for a node, and in
// the second run, where the node has a pod, it played the warm-up node
// before the real one. The node is managed again afterwards: the old pod is
// still Running and a new one becomes Running.
func TestStartAgainOnOldData(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	c := ForTest(t, Options{Dir: dir})
	cs := kubernetes.NewForConfigOrDie(c.Config)
	waitRunning(ctx, t, c, cs, "first")
	first := kwokRuns(t, dir)
	if len(first) != 1 {
		t.Fatalf("KWOK runs in its log = %d, want 1", len(first))
	}
	checkServedFirst(t, first[0])
	c.Stop()

	c = ForTest(t, Options{Dir: dir})
	cs = kubernetes.NewForConfigOrDie(c.Config)
	waitRunning(ctx, t, c, cs, "second")
	if _, err := cs.CoreV1().Nodes().Get(ctx, warmUpNodeName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("warm-up node after Start: err = %v, want NotFound", err)
	}
	n, err := cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Annotations[managedAnnotation]; got != managedValue {
		t.Errorf("node annotation %s = %q, want %q", managedAnnotation, got, managedValue)
	}
	p, err := cs.CoreV1().Pods("default").Get(ctx, "first", metav1.GetOptions{})
	if err != nil || p.Status.Phase != corev1.PodRunning {
		t.Errorf("first pod after the restart: phase %v, err %v; want Running", p.Status.Phase, err)
	}

	runs := kwokRuns(t, dir)
	if len(runs) != 2 {
		t.Fatalf("KWOK runs in its log = %d, want 2", len(runs))
	}
	second := runs[1]
	checkServedFirst(t, second)
	warm, real := firstLine(second, "node", warmUpNodeName), firstLine(second, "node", NodeName)
	if warm < 0 || real < 0 || warm > real {
		t.Errorf("second run: first line for %s at %d, for %s at %d; want both, the warm-up first:\n%s", warmUpNodeName, warm, NodeName, real, strings.Join(second, "\n"))
	}
}

// waitRunning creates a pod named name and waits until KWOK runs it.
func waitRunning(ctx context.Context, t *testing.T, c *Cluster, cs kubernetes.Interface, name string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "example.com/hello:1.0.0"}}},
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		p, err := cs.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("pod %s not Running: %v, %v (%v)", name, p.Status.Phase, err, c.Check())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// kwokRuns returns the lines of KWOK's log (JSON, one object a line), one
// list per run of the process (each run has an id of its own).
func kwokRuns(t *testing.T, dir string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "kwok.log"))
	if err != nil {
		t.Fatal(err)
	}
	var runs [][]string
	last := ""
	for line := range strings.Lines(string(b)) {
		var l struct{ ID string }
		if json.Unmarshal([]byte(line), &l) != nil || l.ID == "" {
			continue
		}
		if l.ID != last {
			runs = append(runs, nil)
			last = l.ID
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], strings.TrimSpace(line))
	}
	return runs
}

// checkServedFirst: KWOK's server started (its initCEL had returned) before
// any line about a node or a pod.
func checkServedFirst(t *testing.T, run []string) {
	t.Helper()
	served := firstLine(run, "msg", "Starting HTTPS server")
	for i, line := range run {
		var l map[string]any
		_ = json.Unmarshal([]byte(line), &l)
		if _, node := l["node"]; node || l["pod"] != nil {
			if served < 0 || i < served {
				t.Errorf("KWOK worked on a node or pod (line %d) before its server started (line %d):\n%s", i, served, strings.Join(run, "\n"))
			}
			return
		}
	}
}

// firstLine returns the index of the first line whose key is value, or -1.
func firstLine(run []string, key, value string) int {
	for i, line := range run {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) == nil && l[key] == value {
			return i
		}
	}
	return -1
}
