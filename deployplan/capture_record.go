package deployplan

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/hanzoai/deploy-web/appcr"
)

// CaptureRecordName is the ConfigMap, in an environment's namespace, where
// every apply (and every restore, which captures too) records the digest
// of the capture it wrote, under the environment's name, before it writes
// anything else. A restore accepts only a capture whose digest is recorded
// there for its environment: deploy-web restores what it captured, and a
// hand-made capture goes through apply like any other source. The record
// sits in the cluster, beside the objects, not beside the capture: whoever
// can change a capture folder or a report cannot make a capture restorable,
// and whoever can write the namespace could write the objects anyway.
// A manifest may not hold it (ReservedName).
const CaptureRecordName = "deploy-web-captures"

// MaxCaptureRecords is how many captures are kept per environment, the
// newest; an older capture can still be applied with kubectl (RESTORE.txt).
const MaxCaptureRecords = 100

// captureRecord is one recorded capture.
type captureRecord struct {
	Digest  string `json:"digest"`
	Time    string `json:"time"`
	Holder  string `json:"holder"`
	Capture string `json:"capture"`
}

// readCaptureRecords reads env's records (JSON Lines under the key env),
// and the ConfigMap (nil when it does not exist).
func readCaptureRecords(ctx context.Context, kube kubernetes.Interface, ns, env string) ([]captureRecord, *corev1.ConfigMap, error) {
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, CaptureRecordName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("deployplan: read the capture record (ConfigMap %s/%s): %w", ns, CaptureRecordName, err)
	}
	var out []captureRecord
	for i, line := range strings.Split(cm.Data[env], "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var r captureRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, nil, fmt.Errorf("deployplan: capture record (ConfigMap %s/%s) key %s line %d: %v", ns, CaptureRecordName, env, i+1, err)
		}
		out = append(out, r)
	}
	return out, cm, nil
}

// recordCapture adds rec to env's records, keeping the newest
// MaxCaptureRecords: a create, or a merge patch conditional on the
// resourceVersion just read (the apply holds the namespace's lock, so a
// conflict means someone else wrote the record: the apply stops).
func recordCapture(ctx context.Context, kube kubernetes.Interface, ns, env string, rec captureRecord) error {
	recs, cm, err := readCaptureRecords(ctx, kube, ns, env)
	if err != nil {
		return err
	}
	recs = append(recs, rec)
	if len(recs) > MaxCaptureRecords {
		recs = recs[len(recs)-MaxCaptureRecords:]
	}
	var b strings.Builder
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(append(line, '\n'))
	}
	cms := kube.CoreV1().ConfigMaps(ns)
	if cm == nil {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: CaptureRecordName, Namespace: ns, Labels: map[string]string{appcr.ManagedByLabel: appcr.FieldManager}},
			Data: map[string]string{env: b.String()}}
		if _, err := cms.Create(ctx, cm, metav1.CreateOptions{FieldManager: FieldManager}); err != nil {
			return fmt.Errorf("deployplan: record the capture (create ConfigMap %s/%s): %w", ns, CaptureRecordName, err)
		}
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": cm.ResourceVersion}, "data": map[string]string{env: b.String()}})
	if err != nil {
		return err
	}
	if _, err := cms.Patch(ctx, CaptureRecordName, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		return fmt.Errorf("deployplan: record the capture (patch ConfigMap %s/%s): %w", ns, CaptureRecordName, err)
	}
	return nil
}

// captureRecorded returns the record of digest among env's, nil when no
// apply of env recorded it.
func captureRecorded(ctx context.Context, kube kubernetes.Interface, ns, env, digest string) (*captureRecord, error) {
	recs, _, err := readCaptureRecords(ctx, kube, ns, env)
	if err != nil {
		return nil, err
	}
	for i := range recs {
		if recs[i].Digest == digest {
			return &recs[i], nil
		}
	}
	return nil, nil
}
