package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/deployplan"
)

const secretValue = "hunter2-very-secret-value"

func secretManifest(kind string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": kind,
		"metadata": map[string]any{
			"name": "db", "namespace": "staging",
			"labels": map[string]any{"leak": secretValue},
			"annotations": map[string]any{
				"kubectl.kubernetes.io/last-applied-configuration": `{"stringData":{"password":"` + secretValue + `"}}`,
			},
		},
		"type":       "Opaque",
		"stringData": map[string]any{"password": secretValue},
		"data":       map[string]any{"user": "YWRtaW4="},
	}}
}

func TestStripSecrets(t *testing.T) {
	cm := configMapManifest("staging", "settings", map[string]any{"mode": "blue"})
	sec := secretManifest("Secret")
	before, _ := json.Marshal(sec.Object)
	got, err := StripSecrets([]*unstructured.Unstructured{cm, sec, secretManifest("secret")})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != cm {
		t.Fatalf("StripSecrets kept %d objects (first %p), want 3 with the ConfigMap as is (%p)", len(got), got[0], cm)
	}
	want, err := deployplan.SecretHash(sec)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range got[1:] {
		b, _ := json.Marshal(s.Object)
		if bytes.Contains(b, []byte(secretValue)) || bytes.Contains(b, []byte("YWRtaW4=")) {
			t.Errorf("stripped Secret %s holds a value", b)
		}
		if s.GetName() != "db" || s.GetNamespace() != "staging" {
			t.Errorf("stripped Secret is %s/%s, want staging/db", s.GetNamespace(), s.GetName())
		}
		if h := s.GetAnnotations()[deployplan.SecretHashAnnotation]; h != want {
			t.Errorf("stripped Secret hash = %q, want deployplan.SecretHash %q", h, want)
		}
		if len(s.Object) != 3 || len(s.GetLabels()) != 0 || len(s.GetAnnotations()) != 1 {
			t.Errorf("stripped Secret = %s, want apiVersion, kind, name, namespace and the hash only", b)
		}
	}
	after, _ := json.Marshal(sec.Object)
	if !bytes.Equal(before, after) {
		t.Errorf("StripSecrets changed its input")
	}
}

func TestStripSecretsRefusesLists(t *testing.T) {
	list := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "List",
		"items": []any{secretManifest("Secret").Object},
	}}
	if _, err := StripSecrets([]*unstructured.Unstructured{list}); err == nil || !strings.Contains(err.Error(), "list") {
		t.Errorf("StripSecrets(a List holding a Secret) = %v, want an error about lists", err)
	}
}

func TestStripSecretsInvalidData(t *testing.T) {
	sec := secretManifest("Secret")
	sec.Object["data"] = map[string]any{"password": "not base64 " + secretValue}
	got, err := StripSecrets([]*unstructured.Unstructured{sec})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got[0].Object)
	h := got[0].GetAnnotations()[deployplan.SecretHashAnnotation]
	if bytes.Contains(b, []byte(secretValue)) || !strings.HasPrefix(h, "sha256:") {
		t.Errorf("stripped invalid Secret = %s, want its hash and no value", b)
	}
}

func TestManifestsRoundTrip(t *testing.T) {
	objs := []*unstructured.Unstructured{configMapManifest("staging", "a", map[string]any{"k": "v"}), secretManifest("Secret")}
	gz, err := encodeManifests(objs)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeManifests(gz)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || back[0].GetName() != "a" || back[1].GetKind() != "Secret" || back[1].Object["stringData"] != nil {
		t.Errorf("decodeManifests(encodeManifests) = %v", back)
	}
}

func TestDecodeManifestsBomb(t *testing.T) {
	// 65 MiB of zeros compress to a few dozen KiB.
	var buf bytes.Buffer
	w := newGzip(&buf)
	zeros := make([]byte, 1<<20)
	w.Write([]byte("["))
	for range 65 {
		w.Write(zeros)
	}
	w.Close()
	if _, err := decodeManifests(buf.Bytes()); err != errTooLarge {
		t.Errorf("decodeManifests(%d bytes decompressing to 65 MiB) = %v, want %v", buf.Len(), err, errTooLarge)
	}
}
