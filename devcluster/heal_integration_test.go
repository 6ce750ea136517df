package devcluster

import (
	"context"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
)

// TestNodeHealsAfterAPIServerStall stalls the API server (SIGSTOP) for 90s,
// longer than kube-controller-manager's node monitor grace period, so that
// on SIGCONT the node controller marks the fake node's Ready condition
// Unknown and KWOK initialises the node again; then pod logs must be
// readable again (they failed for good with "no preferred addresses found"
// when that second initialisation removed the node's addresses).
func TestNodeHealsAfterAPIServerStall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := ForTest(t, Options{})
	cs := kubernetes.NewForConfigOrDie(c.Config)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "hello", Image: "example.com/hello:1.0.0"}}},
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	readLogs := func() error {
		rc, err := cs.CoreV1().Pods("default").GetLogs("hello", &corev1.PodLogOptions{Container: "hello"}).Stream(ctx)
		if err != nil {
			return err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err == nil && !strings.Contains(string(b), "listening on :8080") {
			return errorString("logs without the default lines: " + string(b))
		}
		return err
	}
	waitLogs(ctx, t, cs, "before the stall", readLogs)

	pid := c.Processes()["kube-apiserver"]
	if pid == 0 {
		t.Fatalf("no kube-apiserver in %v", c.Processes())
	}
	t.Logf("SIGSTOP kube-apiserver (pid %d) for 90s", pid)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}()
	select {
	case <-time.After(90 * time.Second):
	case <-ctx.Done():
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stopped = false
	// The node controller says when it marked the node NotReady (the
	// state passes too quickly to be seen reliably: KWOK answers it at
	// once).
	for !nodeNotReadyEvent(ctx, t, cs) {
		if ctx.Err() != nil {
			t.Fatalf("the stall never made the node NotReady (%s)", nodeState(ctx, cs))
		}
		time.Sleep(time.Second)
	}
	t.Logf("the node controller marked the node NotReady; now %s", nodeState(ctx, cs))
	// Let the node controller and KWOK settle, as a person would come back
	// to the demo later, then read logs until they work.
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end) && ctx.Err() == nil; time.Sleep(time.Second) {
		if nodeIsReady(mustNode(ctx, t, cs)) {
			break
		}
	}
	waitLogs(ctx, t, cs, "after the stall", readLogs)
	if n := mustNode(ctx, t, cs); !hasAddress(n, corev1.NodeInternalIP) || !nodeIsReady(n) {
		t.Errorf("node after the stall = %s, want Ready with its InternalIP", nodeState(ctx, cs))
	}
}

// nodeNotReadyEvent reports whether the node controller recorded the
// node's NodeNotReady event.
func nodeNotReadyEvent(ctx context.Context, t *testing.T, cs kubernetes.Interface) bool {
	t.Helper()
	evs, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: fields.AndSelectors(
		fields.OneTermEqualSelector("involvedObject.kind", "Node"),
		fields.OneTermEqualSelector("involvedObject.name", NodeName),
		fields.OneTermEqualSelector("reason", "NodeNotReady"),
	).String()})
	return err == nil && len(evs.Items) > 0
}

type errorString string

func (e errorString) Error() string { return string(e) }

func mustNode(ctx context.Context, t *testing.T, cs kubernetes.Interface) *corev1.Node {
	t.Helper()
	n, err := cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func hasAddress(n *corev1.Node, typ corev1.NodeAddressType) bool {
	for _, a := range n.Status.Addresses {
		if a.Type == typ && a.Address != "" {
			return true
		}
	}
	return false
}

// waitLogs polls read until it succeeds, logging each new state of the
// node on the way; the deadline is ctx's.
func waitLogs(ctx context.Context, t *testing.T, cs kubernetes.Interface, when string, read func() error) {
	t.Helper()
	start := time.Now()
	var last string
	for {
		err := read()
		if err == nil {
			t.Logf("logs readable %s after %s", when, time.Since(start).Round(time.Second))
			return
		}
		state := nodeState(ctx, cs)
		if s := err.Error() + " | " + state; s != last {
			t.Logf("%s +%s: %s", when, time.Since(start).Round(time.Second), s)
			last = s
		}
		if ctx.Err() != nil {
			t.Fatalf("logs %s never readable: %v (node: %s)", when, err, state)
		}
		time.Sleep(time.Second)
	}
}

// nodeState is the node's addresses and Ready condition, for the log.
func nodeState(ctx context.Context, cs kubernetes.Interface) string {
	n, err := cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
	if err != nil {
		return "node: " + err.Error()
	}
	var b strings.Builder
	b.WriteString("addresses [")
	for _, a := range n.Status.Addresses {
		b.WriteString(" " + string(a.Type) + "=" + a.Address)
	}
	b.WriteString(" ]")
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			b.WriteString(" Ready=" + string(c.Status) + " (" + c.Reason + ")")
		}
	}
	return b.String()
}
