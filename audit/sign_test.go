package audit

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/internal/sign"
)

// TestSigningKeyCreatedOnce: the first store creates the key Secret;
// a second store (another replica, the CLI) reads the same key, and a
// Secret whose key is too short is refused, naming the Secret.
func TestSigningKeyCreatedOnce(t *testing.T) {
	cs := fake.NewClientset()
	a, _ := New(cs.CoreV1(), nil, Options{Namespace: testNS})
	b, _ := New(cs.CoreV1(), nil, Options{Namespace: testNS})
	ga, err := a.signingKey(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	gb, err := b.signingKey(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if ga.Len() < sign.MinKeyBytes || !ga.Equal(gb) {
		t.Errorf("signingKey = %d bytes, second store's equal %v; want at least %d, the same key", ga.Len(), ga.Equal(gb), sign.MinKeyBytes)
	}
	sec, err := cs.CoreV1().Secrets(testNS).Get(t.Context(), KeySecretName, metav1.GetOptions{})
	if err != nil || sec.Immutable == nil || !*sec.Immutable {
		t.Errorf("key Secret = %v, %v; want an immutable Secret %s", sec, err, KeySecretName)
	}

	short := fake.NewClientset(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: KeySecretName, Namespace: testNS},
		Data: map[string][]byte{keySecretField: []byte("  too short \n")}})
	c, _ := New(short.CoreV1(), nil, Options{Namespace: testNS})
	if _, err := c.signingKey(t.Context()); err == nil || !strings.Contains(err.Error(), KeySecretName) {
		t.Errorf("signingKey with a 9-byte key = %v, want an error naming %s", err, KeySecretName)
	}
	if _, err := New(nil, nil, Options{Namespace: testNS, Key: []byte("short")}); err == nil {
		t.Errorf("New with a 5-byte Options.Key = nil error, want one")
	}
}

// TestStreamHeadSignature: a stream head is believed only with its own
// signature: edited, unsigned, signed with another key or carrying a
// record's signature, it reads as no head at all.
func TestStreamHeadSignature(t *testing.T) {
	st := &streamState{Version: envelopeVersion, Stream: "0123456789abcdef", Seq: 4, Hash: "sha256:aa"}
	good := streamHead(testNS, st, testSigner())
	if got := streamStateOf(good, testSigner()); got == nil || got.Seq != 4 {
		t.Fatalf("streamStateOf(signed head) = %+v, want seq 4", got)
	}
	tests := []struct {
		name string
		edit func(a map[string]string)
	}{
		{"boundary moved", func(a map[string]string) {
			a[AnnotationStream] = strings.Replace(a[AnnotationStream], `"trimmedThrough":0`, `"trimmedThrough":3`, 1)
		}},
		{"newest set back", func(a map[string]string) {
			a[AnnotationStream] = strings.Replace(a[AnnotationStream], `"seq":4`, `"seq":3`, 1)
		}},
		{"unsigned", func(a map[string]string) { delete(a, AnnotationMAC) }},
		{"another key", func(a map[string]string) {
			a[AnnotationMAC] = mustKey("another key, also 32 bytes or more").MAC(macDomainStream, []byte(a[AnnotationStream]))
		}},
		{"a record's signature", func(a map[string]string) {
			a[AnnotationMAC] = testSigner().MAC(macDomainRecord, []byte(a[AnnotationStream]))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := good.DeepCopy()
			tt.edit(cm.Annotations)
			if cm.Annotations[AnnotationStream] == good.Annotations[AnnotationStream] && cm.Annotations[AnnotationMAC] == good.Annotations[AnnotationMAC] {
				t.Fatalf("the edit changed nothing")
			}
			if got := streamStateOf(cm, testSigner()); got != nil {
				t.Errorf("streamStateOf(%s) = %+v, want nil (not believed)", tt.name, got)
			}
		})
	}
}
