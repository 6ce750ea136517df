package handlers

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/metadata"

	"github.com/hanzoai/deploy-web/audit"
)

// metaOverTyped is a metadata client whose List reads ConfigMaps from a
// fake clientset (the fake metadata client keeps a tracker of its own, so
// it would not see what the store writes). Only List is used by the
// store without a started index; any other method panics.
type metaOverTyped struct{ cs *fake.Clientset }

func (m metaOverTyped) Resource(schema.GroupVersionResource) metadata.Getter {
	return metaGetter{cs: m.cs}
}

type metaGetter struct {
	metadata.ResourceInterface
	cs *fake.Clientset
}

func (g metaGetter) Namespace(ns string) metadata.ResourceInterface {
	return metaNamespaced{cs: g.cs, ns: ns}
}

type metaNamespaced struct {
	metadata.ResourceInterface
	cs *fake.Clientset
	ns string
}

func (m metaNamespaced) List(ctx context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	opts.Limit, opts.Continue = 0, ""
	l, err := m.cs.CoreV1().ConfigMaps(m.ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := &metav1.PartialObjectMetadataList{}
	for _, cm := range l.Items {
		out.Items = append(out.Items, metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: cm.ObjectMeta})
	}
	return out, nil
}

// testAuditNS is the namespace of the tests' audit records.
const testAuditNS = "deploy-web"

// newTestAudit is an audit store over a fake clientset (returned, to
// edit records behind the store's back).
func newTestAudit(t testing.TB) (*audit.Store, *fake.Clientset) {
	t.Helper()
	cs := fake.NewClientset()
	s, err := audit.New(cs.CoreV1(), metaOverTyped{cs}, audit.Options{Namespace: testAuditNS, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return s, cs
}

// withAudit sets Options.Audit.
func withAudit(a AuditLog) func(*Options) { return func(o *Options) { o.Audit = a } }

// appendTest stores rec (its time relative to testNow) and fails the
// test on an error.
func appendTest(t testing.TB, s *audit.Store, rec audit.Record) audit.Record {
	t.Helper()
	if rec.Time.IsZero() {
		rec.Time = testNow
	}
	if rec.Outcome == "" {
		rec.Outcome = audit.OutcomeSucceeded
	}
	got, err := s.Append(t.Context(), rec)
	if err != nil {
		t.Fatalf("Append(%s %s) error = %v", rec.Verb, rec.App+rec.Environment, err)
	}
	return got
}

// records lists every record of s, newest first.
func records(t testing.TB, s *audit.Store) []audit.Record {
	t.Helper()
	p, err := s.List(t.Context(), audit.Filter{Limit: audit.MaxLimit})
	if err != nil {
		t.Fatalf("List() error = %v", err)
	}
	return p.Records
}

// tamper edits the stored record id behind the store's back, as kubectl
// edit would: its message annotation changes, its chain no longer holds.
func tamper(t testing.TB, cs *fake.Clientset, id string) {
	t.Helper()
	cms, err := cs.CoreV1().ConfigMaps(testAuditNS).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range cms.Items {
		cm := &cms.Items[i]
		raw, ok := cm.Annotations[audit.AnnotationRecord]
		if !ok || cm.Labels[audit.LabelComponent] != audit.ComponentRecord || !strings.Contains(raw, `"id":"`+id+`"`) {
			continue
		}
		edited := cm.DeepCopy()
		edited.Annotations[audit.AnnotationRecord] = strings.Replace(raw, `"outcome":"failed"`, `"outcome":"succeeded"`, 1)
		if edited.Annotations[audit.AnnotationRecord] == raw {
			t.Fatalf("tamper %s: the record holds no failed outcome to rewrite", id)
		}
		if _, err := cs.CoreV1().ConfigMaps(testAuditNS).Update(t.Context(), edited, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("tamper: no record %s", id)
}
