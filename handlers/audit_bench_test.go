package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"

	"github.com/hanzoai/deploy-web/audit"
)

// memKube keeps ConfigMaps in a map, to seed many records quickly (the
// fake clientset's tracker is slow at 10,000 appends); only what Append
// calls is implemented.
type memKube struct{ cms *memConfigMaps }

func (k memKube) ConfigMaps(string) typedcorev1.ConfigMapInterface { return k.cms }
func (memKube) Events(string) typedcorev1.EventInterface           { return memEvents{} }
func (memKube) Secrets(string) typedcorev1.SecretInterface         { return nil }

type memEvents struct{ typedcorev1.EventInterface }

func (memEvents) Create(_ context.Context, e *corev1.Event, _ metav1.CreateOptions) (*corev1.Event, error) {
	return e, nil
}

type memConfigMaps struct {
	typedcorev1.ConfigMapInterface
	m  map[string]*corev1.ConfigMap
	rv int
}

func (c *memConfigMaps) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.ConfigMap, error) {
	cm, ok := c.m[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
	}
	return cm.DeepCopy(), nil
}

func (c *memConfigMaps) Create(_ context.Context, cm *corev1.ConfigMap, _ metav1.CreateOptions) (*corev1.ConfigMap, error) {
	if _, ok := c.m[cm.Name]; ok {
		return nil, apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, cm.Name)
	}
	return c.put(cm), nil
}

func (c *memConfigMaps) Update(_ context.Context, cm *corev1.ConfigMap, _ metav1.UpdateOptions) (*corev1.ConfigMap, error) {
	return c.put(cm), nil
}

func (c *memConfigMaps) put(cm *corev1.ConfigMap) *corev1.ConfigMap {
	c.rv++
	cm = cm.DeepCopy()
	cm.ResourceVersion = strconv.Itoa(c.rv)
	c.m[cm.Name] = cm
	return cm.DeepCopy()
}

// metaQuiet lists ConfigMaps as metaOverTyped does and watches nothing:
// the benchmark's records do not change after the index's first list
// (the fake clientset's watch cannot replay 10,000 objects).
type metaQuiet struct{ cs *fake.Clientset }

func (m metaQuiet) Resource(schema.GroupVersionResource) metadata.Getter {
	return quietGetter{metaGetter{cs: m.cs}}
}

type quietGetter struct{ metaGetter }

func (g quietGetter) Namespace(ns string) metadata.ResourceInterface {
	return quietNamespaced{metaNamespaced{cs: g.cs, ns: ns}}
}

type quietNamespaced struct{ metaNamespaced }

func (m quietNamespaced) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	if opts.SendInitialEvents == nil || !*opts.SendInitialEvents {
		return watch.NewFake(), nil
	}
	// A watch-list (client-go's informers list through a watch): every
	// object, then the bookmark that ends the initial events.
	l, err := m.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	w := watch.NewFakeWithChanSize(len(l.Items)+1, false)
	for i := range l.Items {
		w.Add(&l.Items[i])
	}
	w.Action(watch.Bookmark, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{ResourceVersion: "1", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}})
	return w, nil
}

// BenchmarkAuditPage10000 serves /audit's first page (50 rows, every
// chain link and signature checked) and the JSON API's through the whole
// handler stack, over 10,000 signed records in 50 environments written by
// Append and served from the store's index started over a fake cluster
// holding them (as serve runs it, over the API server). The target is
// under 50 ms.
func BenchmarkAuditPage10000(b *testing.B) {
	key := []byte("benchmark audit key, 32 bytes or more")
	ctx := context.Background()
	mem := &memConfigMaps{m: map[string]*corev1.ConfigMap{}}
	writer, err := audit.New(memKube{mem}, metaOverTyped{fake.NewClientset()}, audit.Options{Namespace: testAuditNS, Key: key, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10_000 {
		rec := audit.Record{Time: testNow.Add(time.Duration(i) * time.Second), Actor: audit.Actor{Email: fmt.Sprintf("user%d@example.com", i%40), Groups: []string{"platform"}},
			Verb: audit.Verbs()[i%len(audit.Verbs())], Cluster: "eu", Environment: fmt.Sprintf("env-%02d", i%50), Commit: fmt.Sprintf("%040x", i),
			Outcome: audit.OutcomeSucceeded, Objects: []audit.Object{{Version: "v1", Kind: "ConfigMap", Namespace: "staging", Name: "cfg"}}}
		if _, err := writer.Append(ctx, rec); err != nil {
			b.Fatal(err)
		}
	}
	objs := make([]runtime.Object, 0, len(mem.m))
	for _, cm := range mem.m {
		objs = append(objs, cm)
	}
	cs := fake.NewClientset(objs...)
	store, err := audit.New(cs.CoreV1(), metaQuiet{cs}, audit.Options{Namespace: testAuditNS, Key: key, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := store.Start(ictx); err != nil {
		b.Fatal(err)
	}
	ts := newTestServer(b, newFakeView(nil), withAudit(store))
	if p, err := store.List(ctx, audit.Filter{Limit: audit.MaxLimit}); err != nil || len(p.Records) != audit.MaxLimit || p.Records[0].Chain == nil || !p.Records[0].Chain.OK {
		b.Fatalf("List = %d records, %v; want %d intact", len(p.Records), err, audit.MaxLimit)
	}
	for _, bc := range []struct{ name, target string }{
		{"page", "/audit"},
		{"page-one-environment", "/audit?env=env-07"},
		{"json", "/v1/deploy/audit"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, bc.target, nil)
			r.Header.Set(testUserHeader, "admin")
			w := httptest.NewRecorder()
			ts.handler.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				b.Fatalf("GET %s = %d", bc.target, w.Code)
			}
			for b.Loop() {
				w := httptest.NewRecorder()
				ts.handler.ServeHTTP(w, r)
			}
		})
	}
}
