package deployplan

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hanzoai/deploy-web/envconfig"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const secretMarker = "marker-7f3a9c-never-stored"

// kubectlAppliedSecret is what the metadata API answers for a Secret
// created with kubectl apply: its last-applied annotation holds the data.
func kubectlAppliedSecret() *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "api-secret", Namespace: "dev", UID: "u-1", ResourceVersion: "42",
			Labels: map[string]string{"app": "api"},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"v1","kind":"Secret","stringData":{"password":"` + secretMarker + `"}}`,
				"note": base64.StdEncoding.EncodeToString([]byte(secretMarker)),
			},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:password":{}}}`)}},
		},
	}
}

func secretManifest() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"name": "api-secret", "namespace": "dev"},
		"stringData": map[string]any{"password": secretMarker},
		"data":       map[string]any{"token": base64.StdEncoding.EncodeToString([]byte("tok-" + secretMarker))},
	}}
	return u
}

func assertNoMarker(t *testing.T, where string, b []byte) {
	t.Helper()
	for _, m := range []string{secretMarker, base64.StdEncoding.EncodeToString([]byte(secretMarker)), "last-applied", "f:password"} {
		if strings.Contains(string(b), m) {
			t.Errorf("%s contains %q:\n%s", where, m, b)
		}
	}
}

// TestSecretMetadataKeepsNoValue: a Secret read through the metadata API
// keeps name, namespace, labels, uid and resourceVersion, and nothing
// else; its capture file holds neither its annotations nor its values.
func TestSecretMetadataKeepsNoValue(t *testing.T) {
	like := secretManifest()
	got, err := metadataOnly(kubectlAppliedSecret(), like)
	if err != nil {
		t.Fatal(err)
	}
	if got.GetName() != "api-secret" || got.GetNamespace() != "dev" || got.GetUID() != "u-1" || got.GetResourceVersion() != "42" || got.GetLabels()["app"] != "api" {
		t.Errorf("metadataOnly lost identity: %v", got.Object)
	}
	// Only who wrote the values since deploy-web (here, never applied by
	// deploy-web: kubectl), none of the annotations read.
	if a, want := got.GetAnnotations(), map[string]string{SecretWrittenByAnnotation: "kubectl-client-side-apply"}; fmt.Sprint(a) != fmt.Sprint(want) {
		t.Errorf("metadataOnly annotations = %v, want %v", a, want)
	}
	if mf := got.GetManagedFields(); len(mf) != 0 {
		t.Errorf("metadataOnly kept managedFields %v", mf)
	}
	b, _ := got.MarshalJSON()
	assertNoMarker(t, "metadataOnly", b)

	// A live Secret that reached the capture some other way (a full read)
	// is cut down all the same.
	full := secretManifest()
	full.SetAnnotations(kubectlAppliedSecret().Annotations)
	full.SetUID("u-1")
	full.SetLabels(map[string]string{"app": "api"})
	dir := t.TempDir()
	env := &envconfig.Environment{Name: "dev", Namespace: "dev", Cluster: envconfig.ClusterRef{Context: "devcluster"}}
	if _, err := writeCapture(dir, []*unstructured.Unstructured{like}, map[string]*unstructured.Unstructured{key(like): full}, captureInfo{Env: env}); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 2 {
		t.Fatalf("capture files = %v, want the index and the instructions only: a Secret is never captured", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		assertNoMarker(t, f, b)
		if strings.HasSuffix(f, ".json") {
			t.Errorf("%s: a capture holds no object file for a Secret", f)
		}
		if strings.HasSuffix(f, CaptureReadmeFile) && !strings.Contains(string(b), "Secret/api-secret") {
			t.Errorf("the restore instructions do not name the Secret to restore by hand:\n%s", b)
		}
	}
}

// TestObjErrRedactsSecretValues: an API server message quoting a Secret
// value never reaches a report.
func TestObjErrRedactsSecretValues(t *testing.T) {
	s := secretManifest()
	tests := []struct {
		name string
		err  string
	}{
		{"stringData value", `Secret "api-secret" is invalid: stringData[password]: Invalid value: "` + secretMarker + `"`},
		{"encoded value", "bad data " + base64.StdEncoding.EncodeToString([]byte(secretMarker))},
		{"decoded data", "token tok-" + secretMarker},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := objErr(s, errors.New(tt.err))
			assertNoMarker(t, "objErr", []byte(got))
			if !strings.Contains(got, redactedValue) {
				t.Errorf("objErr(%q) = %q, want %s in it", tt.err, got, redactedValue)
			}
		})
	}
	cm := secretManifest()
	cm.SetKind("ConfigMap")
	if got := objErr(cm, errors.New("value "+secretMarker)); !strings.Contains(got, secretMarker) {
		t.Errorf("objErr of a ConfigMap = %q: only Secrets are redacted", got)
	}
}
