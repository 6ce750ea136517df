package cmstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/internal/cmstore/cmstoretest"
	"github.com/hanzoai/deploy-web/internal/sign"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
)

type doc struct {
	N     int      `json:"n"`
	Items []string `json:"items"`
}

var spec = Spec{Owner: "test", What: "test things", Namespace: "deploy-web", Name: "deploy-web-things", Key: "things.json", Kind: "things", MaxBytes: 1 << 10}

func add(item string) func(doc) (doc, error) {
	return func(d doc) (doc, error) {
		d.N++
		d.Items = append(d.Items, item)
		return d, nil
	}
}

// TestUpdateSignsAndGetChecks: what Update writes, Get reads back; the
// ConfigMap carries the signature beside the data and the kind label.
func TestUpdateSignsAndGetChecks(t *testing.T) {
	ctx := t.Context()
	cs := fake.NewClientset()
	s := New[doc](cs.CoreV1(), signtest.Keys(), spec)
	if _, ok, err := s.Get(ctx); ok || err != nil {
		t.Fatalf("Get() with no ConfigMap = ok %v, %v; want false, nil", ok, err)
	}
	for _, it := range []string{"a", "b"} {
		if err := s.Update(ctx, add(it)); err != nil {
			t.Fatal(err)
		}
	}
	got, ok, err := s.Get(ctx)
	if err != nil || !ok || got.N != 2 || strings.Join(got.Items, ",") != "a,b" {
		t.Errorf("Get() = %+v, %v, %v; want 2 items a,b", got, ok, err)
	}
	cm, err := cs.CoreV1().ConfigMaps(spec.Namespace).Get(ctx, spec.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cm.Annotations[AnnotationMAC], "hmac-sha256:") || cm.Labels[LabelKind] != "things" {
		t.Errorf("ConfigMap annotations %v labels %v; want a MAC and kind things", cm.Annotations, cm.Labels)
	}
}

// TestHandEditReadsTampered: a ConfigMap edited through the API as a
// person would (kubectl edit) reads as tampered, and is not built upon: a
// write refuses and leaves it as it is. So does one without a signature
// (written by hand, or by a deploy-web from before signed state), one
// signed with another key, and a signed document copied from another
// store.
func TestHandEditReadsTampered(t *testing.T) {
	other, _ := sign.NewKey([]byte("another key of 32 bytes or more, not the test one"))
	tests := []struct {
		name     string
		edit     func(t *testing.T, cs *fake.Clientset)
		unsigned bool
	}{
		{name: "data edited", edit: func(t *testing.T, cs *fake.Clientset) {
			editCM(t, cs, func(data, ann map[string]string) { data[spec.Key] = strings.Replace(data[spec.Key], `"a"`, `"z"`, 1) })
		}},
		{name: "signature removed", unsigned: true, edit: func(t *testing.T, cs *fake.Clientset) {
			editCM(t, cs, func(data, ann map[string]string) { delete(ann, AnnotationMAC) })
		}},
		{name: "signed with another key", edit: func(t *testing.T, cs *fake.Clientset) {
			editCM(t, cs, func(data, ann map[string]string) {
				ann[AnnotationMAC] = other.MAC(New[doc](nil, nil, spec).domain(), []byte(data[spec.Key]))
			})
		}},
		{name: "copied from another store", edit: func(t *testing.T, cs *fake.Clientset) {
			o := spec
			o.Name = "deploy-web-other"
			e, err := New[doc](nil, signtest.Keys(), o).Sign(t.Context(), []byte(`{"n":9,"items":["x"]}`))
			if err != nil {
				t.Fatal(err)
			}
			editCM(t, cs, func(data, ann map[string]string) { data[spec.Key], ann[AnnotationMAC] = e.Value, e.MAC })
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			cs := fake.NewClientset()
			s := New[doc](cs.CoreV1(), signtest.Keys(), spec)
			if err := s.Update(ctx, add("a")); err != nil {
				t.Fatal(err)
			}
			tt.edit(t, cs)
			before, _ := cs.CoreV1().ConfigMaps(spec.Namespace).Get(ctx, spec.Name, metav1.GetOptions{})
			_, _, err := s.Get(ctx)
			te, ok := IsTampered(err)
			if !ok || te.Unsigned != tt.unsigned {
				t.Fatalf("Get() after the edit = %v, want a *TamperedError (unsigned %v)", err, tt.unsigned)
			}
			if pub := te.Public(); !strings.Contains(pub, "deploy-web/deploy-web-things") || !strings.Contains(pub, "kubectl -n deploy-web delete configmap deploy-web-things") {
				t.Errorf("Public() = %q, want the ConfigMap named and the fix", pub)
			}
			if err := s.Update(ctx, add("b")); !errors.As(err, new(*TamperedError)) {
				t.Errorf("Update() over the edit = %v, want a *TamperedError", err)
			}
			after, _ := cs.CoreV1().ConfigMaps(spec.Namespace).Get(ctx, spec.Name, metav1.GetOptions{})
			if after.ResourceVersion != before.ResourceVersion {
				t.Errorf("Update() over the edit wrote the ConfigMap (resourceVersion %s -> %s), want nothing written", before.ResourceVersion, after.ResourceVersion)
			}
		})
	}
}

// TestSignedButGarbled: a signed document this version cannot decode is
// a *GarbledError, not tampered.
func TestSignedButGarbled(t *testing.T) {
	ctx := t.Context()
	cs := fake.NewClientset()
	s := New[doc](cs.CoreV1(), signtest.Keys(), spec)
	if err := s.Update(ctx, add("a")); err != nil {
		t.Fatal(err)
	}
	e, err := s.Sign(ctx, []byte(`{"n":1,"items":[],"extra":true}`))
	if err != nil {
		t.Fatal(err)
	}
	editCM(t, cs, func(data, ann map[string]string) { data[spec.Key], ann[AnnotationMAC] = e.Value, e.MAC })
	if _, _, err := s.Get(ctx); !errors.As(err, new(*GarbledError)) || !strings.Contains(err.Error(), `unknown field "extra"`) {
		t.Errorf("Get() = %v, want a *GarbledError naming the unknown field", err)
	}
}

// TestUpdateTooLarge: a document over MaxBytes is refused, nothing
// written.
func TestUpdateTooLarge(t *testing.T) {
	cs := fake.NewClientset()
	s := New[doc](cs.CoreV1(), signtest.Keys(), spec)
	err := s.Update(t.Context(), add(strings.Repeat("x", spec.MaxBytes)))
	if tl := (*TooLargeError)(nil); !errors.As(err, &tl) || tl.Bytes <= spec.MaxBytes {
		t.Errorf("Update(too large) = %v, want a *TooLargeError", err)
	}
	if _, ok, _ := s.Get(t.Context()); ok {
		t.Error("Update(too large) wrote a document")
	}
}

// TestConcurrentUpdatesCompareAndSwap: writers at once (replicas) over a
// fake with the API server's compare-and-swap each land exactly once,
// and the result is signed.
func TestConcurrentUpdatesCompareAndSwap(t *testing.T) {
	ctx := context.Background()
	cs := cmstoretest.CASClientset()
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each writer its own store, as each replica has.
			errs[i] = New[doc](cs.CoreV1(), signtest.Keys(), spec).Update(ctx, add(fmt.Sprint(i)))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Errorf("Update() = %v", err)
		}
	}
	got, _, err := New[doc](cs.CoreV1(), signtest.Keys(), spec).Get(ctx)
	if err != nil || got.N != n || len(got.Items) != n {
		t.Errorf("after %d concurrent updates Get() = %+v, %v; want n = %d and %d items", n, got, err, n, n)
	}
}

// editCM edits the store's ConfigMap through the API, as kubectl edit
// does.
func editCM(t *testing.T, cs *fake.Clientset, edit func(data, annotations map[string]string)) {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps(spec.Namespace).Get(t.Context(), spec.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	edit(cm.Data, cm.Annotations)
	if _, err := cs.CoreV1().ConfigMaps(spec.Namespace).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
