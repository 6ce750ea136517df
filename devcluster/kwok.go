package devcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/hanzoai/deploy-web/internal/proc"
)

// writeKwokConfig writes KWOK's configuration: the Stage documents and one
// ClusterLogs object built from logs. With no logs it writes a small default
// log file so that GetLogs has something true to return.
func writeKwokConfig(dir string, logs []LogSource) (string, error) {
	if len(logs) == 0 {
		file := filepath.Join(dir, "default-container.log")
		if err := os.WriteFile(file, defaultLog(time.Now()), 0o600); err != nil {
			return "", fmt.Errorf("devcluster: write default log: %w", err)
		}
		logs = []LogSource{{File: file}}
	}
	var entries []map[string]any
	for _, l := range logs {
		abs, err := filepath.Abs(l.File)
		if err != nil {
			return "", fmt.Errorf("devcluster: log file: %w", err)
		}
		e := map[string]any{"logsFile": abs, "follow": l.Follow}
		if len(l.Containers) > 0 {
			e["containers"] = l.Containers
		}
		entries = append(entries, e)
	}
	clusterLogs, err := yaml.Marshal(map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1",
		"kind":       "ClusterLogs",
		"metadata":   map[string]any{"name": "deploy-web-logs"},
		"spec":       map[string]any{"logs": entries},
	})
	if err != nil {
		return "", fmt.Errorf("devcluster: encode logs: %w", err)
	}
	st, err := stages()
	if err != nil {
		return "", err
	}
	docs := append(st, string(clusterLogs))
	path := filepath.Join(dir, "kwok.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(docs, "\n---\n")), 0o600); err != nil {
		return "", fmt.Errorf("devcluster: write kwok config: %w", err)
	}
	return path, nil
}

// defaultLog returns a few CRI-format log lines.
func defaultLog(now time.Time) []byte {
	var b strings.Builder
	for i, msg := range []string{"starting", "listening on :8080", "ready"} {
		ts := now.Add(time.Duration(i-3) * time.Second).UTC().Format(time.RFC3339Nano)
		fmt.Fprintf(&b, "%s stdout F %s\n", ts, msg)
	}
	return []byte(b.String())
}

// CRILine formats one log line in the CRI log format KWOK reads.
func CRILine(ts time.Time, stream, text string) string {
	return ts.UTC().Format(time.RFC3339Nano) + " " + stream + " F " + text + "\n"
}

// KWOK manages the nodes that carry this annotation (its
// --manage-nodes-with-annotation-selector), and the pods bound to them.
const (
	managedAnnotation = "kwok.x-k8s.io/node"
	managedValue      = "fake"
)

// warmUpNodeName names the node, without pods, that has KWOK build its node
// stages before it meets the real node again on old data (see startKwok).
const (
	warmUpNodeName = "kwok-warm-up"
	warmUpTaint    = "deploy-web.hanzo.ai/kwok-warm-up"
)

// startKwok starts KWOK so that it never builds two CEL environments at once.
//
// KWOK v0.8.0 builds one in its server's initCEL
// (sigs.k8s.io/kwok/pkg/kwok/server/metrics.go:39, run by startServer,
// pkg/kwok/cmd/root.go:434, after the controllers have started and before
// the server listens, root.go:440), and one per Stage the first time a node,
// and then a pod, meets the stages (Stage.init,
// pkg/utils/lifecycle/lifecycle.go:215; the node and the pod controllers
// each have their worker). Every one of them fills the package-level maps of
// github.com/wzshiming/easycel v0.6.0 (typeValueMap types.go:38,
// typeTraitMap types.go:84, structFieldMap and structFields
// native_struct.go:85 and :121) without a lock, so two at once can end the
// process with "fatal error: concurrent map writes". That happened once in
// three full test runs: the node, created the moment KWOK was started, met
// its stages while initCEL ran.
//
// So KWOK starts managing no node: on old data the node's annotation is
// taken away first. startKwok returns once KWOK's server answers /healthz,
// that is after initCEL. On old data the node may have pods, whose stages
// KWOK would build at the same time as the node's; a warm-up node without
// pods has it build the node stages first. The caller then creates the node
// or marks it managed again (createNode).
func (c *Cluster) startKwok(ctx context.Context, cs kubernetes.Interface, spec proc.Spec, healthz, certFile string) error {
	existed, err := unmanageNode(ctx, cs)
	if err != nil {
		return err
	}
	if err := c.start(spec); err != nil {
		return err
	}
	if err := c.waitKwok(ctx, healthz, certFile); err != nil {
		return err
	}
	if !existed {
		return nil
	}
	return c.warmUpNodeStages(ctx, cs)
}

// unmanageNode removes KWOK's annotation from the fake node, if it exists
// (a cluster started again on its old data), and says whether it did. It
// also deletes the node's lease: held by the KWOK that ran before, it would
// keep this one from managing the node until it expired (40s).
func unmanageNode(ctx context.Context, cs kubernetes.Interface) (bool, error) {
	patch := []byte(`{"metadata":{"annotations":{"` + managedAnnotation + `":null}}}`)
	_, err := cs.CoreV1().Nodes().Patch(ctx, NodeName, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("devcluster: stop KWOK managing node %s before it starts: %w", NodeName, err)
	}
	err = cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, NodeName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("devcluster: delete the old lease of node %s: %w", NodeName, err)
	}
	return true, nil
}

// waitKwok waits until KWOK (the last process started) answers healthz over
// TLS with its certificate.
func (c *Cluster) waitKwok(ctx context.Context, healthz, certFile string) error {
	pem, err := os.ReadFile(certFile)
	if err != nil {
		return fmt.Errorf("devcluster: read kwok certificate: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return errors.New("devcluster: kwok certificate: no certificate in " + certFile)
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	if err := proc.WaitHTTP(ctx, client, healthz, c.last(), nil); err != nil {
		if cerr := c.Check(); cerr != nil {
			return cerr // the whole message of a crash
		}
		return fmt.Errorf("devcluster: waiting for kwok: %w", err)
	}
	return nil
}

// warmUpNodeStages creates a node without pods for KWOK to manage, waits
// until KWOK has made it Ready (it built its node stages for that), and
// deletes it again.
func (c *Cluster) warmUpNodeStages(ctx context.Context, cs kubernetes.Interface) error {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        warmUpNodeName,
		Annotations: map[string]string{managedAnnotation: managedValue},
		Labels:      map[string]string{"type": "kwok"},
	}}
	// Nothing is to run there (a pod would have KWOK build its pod stages
	// beside the node's); it is gone before Start returns.
	node.Spec.Unschedulable = true
	node.Spec.Taints = []corev1.Taint{{Key: warmUpTaint, Effect: corev1.TaintEffectNoExecute}}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("devcluster: create warm-up node: %w", err)
	}
	if err := c.waitFor(ctx, func(ctx context.Context) error { return nodeReady(ctx, cs, warmUpNodeName) }); err != nil {
		return err
	}
	if err := cs.CoreV1().Nodes().Delete(ctx, warmUpNodeName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("devcluster: delete warm-up node: %w", err)
	}
	return nil
}
