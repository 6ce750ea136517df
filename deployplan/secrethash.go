package deployplan

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/hanzoai/deploy-web/internal/managedfields"
)

// SecretHashAnnotation is written by every apply on every Secret it
// applies: "sha256:" and the hex SHA-256 of the Secret as rendered
// (SecretHash). A plan compares it, read through the metadata API, with the
// hash of the rendered Secret, so an unchanged Secret plans unchanged
// without its values ever being read. The hash is kept only on the Secret
// itself (whoever can read it can read the values anyway): reports,
// captures and the history never carry it.
const SecretHashAnnotation = "deploy-web.hanzo.ai/secret-hash"

// secretHashDomain separates these hashes from any other SHA-256 of the
// same bytes.
const secretHashDomain = "deploy-web secret v1\n"

// SecretHash is the canonical hash of a rendered Secret: its type (Opaque
// when unset, as the API server defaults it), immutable, its annotations
// (without SecretHashAnnotation and EnvironmentAnnotation, which the
// apply stamps) and its values with stringData merged over
// data as the API server merges them, keys sorted. A data value that is not
// base64 is an error (the API server would refuse it too).
func SecretHash(u *unstructured.Unstructured) (string, error) {
	vals := map[string]string{} // key -> base64 of the bytes
	data, _, err := unstructured.NestedMap(u.Object, "data")
	if err != nil {
		return "", fmt.Errorf("deployplan: Secret %s: data: %w", u.GetName(), err)
	}
	for k, v := range data {
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("deployplan: Secret %s: data.%s is not a string", u.GetName(), k)
		}
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return "", fmt.Errorf("deployplan: Secret %s: data.%s is not base64", u.GetName(), k)
		}
		vals[k] = base64.StdEncoding.EncodeToString(raw)
	}
	sd, _, err := unstructured.NestedMap(u.Object, "stringData")
	if err != nil {
		return "", fmt.Errorf("deployplan: Secret %s: stringData: %w", u.GetName(), err)
	}
	for k, v := range sd {
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("deployplan: Secret %s: stringData.%s is not a string", u.GetName(), k)
		}
		vals[k] = base64.StdEncoding.EncodeToString([]byte(s))
	}
	typ, _, _ := unstructured.NestedString(u.Object, "type")
	if typ == "" {
		typ = "Opaque"
	}
	ann := map[string]string{}
	for k, v := range u.GetAnnotations() {
		if k != SecretHashAnnotation && k != EnvironmentAnnotation {
			ann[k] = v
		}
	}
	canon := struct {
		Type        string            `json:"type"`
		Immutable   any               `json:"immutable"`
		Annotations map[string]string `json:"annotations"`
		Data        map[string]string `json:"data"`
	}{typ, u.Object["immutable"], ann, vals}
	b, err := json.Marshal(canon) // maps marshal with sorted keys
	if err != nil {
		return "", fmt.Errorf("deployplan: Secret %s: %w", u.GetName(), err)
	}
	sum := sha256.Sum256(append([]byte(secretHashDomain), b...))
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// withSecretHash returns a copy of the rendered Secret u carrying
// SecretHashAnnotation; what an apply (and its dry-run) sends.
func withSecretHash(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	h, err := SecretHash(u)
	if err != nil {
		return nil, err
	}
	c := u.DeepCopy()
	ann := c.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[SecretHashAnnotation] = h
	c.SetAnnotations(ann)
	return c, nil
}

// SecretWrittenByAnnotation is set, in memory only, on the metadata copy
// of a live Secret (metadataOnly) whose values a manager other than
// deploy-web wrote at or after deploy-web's last write to it: it names that
// manager ("kubectl-patch"). Such a Secret's hash annotation proves nothing
// and is dropped. It is never sent to the cluster (an apply sends rendered
// objects) nor kept (a capture holds no Secret).
const SecretWrittenByAnnotation = "deploy-web.hanzo.ai/secret-values-written-by"

// SecretAppliedAtAnnotation is set, in memory only, on the metadata copy
// of a live Secret (metadataOnly): the time of deploy-web's last write to
// it (its managed fields entry, RFC 3339). The API server moves it when an
// apply writes anything and keeps it when the apply changes nothing, so a
// dry-run's copy that differs from the live one means the apply writes,
// even within the second of a hand edit (when SecretWrittenByAnnotation
// alone cannot tell). Never sent, never kept, like the other one.
const SecretAppliedAtAnnotation = "deploy-web.hanzo.ai/secret-applied-at"

// secretWrites reads a Secret's managed fields: the time of deploy-web's
// last write (nil when it never wrote), and the manager other than
// deploy-web that owns a value, the type or immutable and wrote it at or
// after that time (the managed fields' times, one-second resolution; a tie
// counts as after), or "" when there is none: then the values are those
// deploy-web's last apply wrote (an apply always writes every rendered
// value back: its stringData is merged over data), and the hash annotation
// holds. A co-owner from before that apply (kubectl patch, then an apply
// that put the value back) is not a writer after it, so a Secret settles
// after one apply. The managed fields are looked at in memory only (they
// name keys); nothing of them is kept.
func secretWrites(mfs []metav1.ManagedFieldsEntry) (ours *metav1.Time, writer string) {
	for _, mf := range mfs {
		if mf.Manager == FieldManager && mf.Time != nil && (ours == nil || mf.Time.After(ours.Time)) {
			ours = mf.Time
		}
	}
	for _, mf := range mfs {
		if mf.Manager == FieldManager || mf.FieldsV1 == nil {
			continue
		}
		set, err := managedfields.Parse(mf.FieldsV1)
		// An entry that does not parse may own anything: it counts as a
		// writer.
		owns := err != nil
		for _, f := range []string{"data", "stringData", "type", "immutable"} {
			if set == nil {
				break
			}
			pe := fieldpath.PathElement{FieldName: &f}
			_, child := set.Children.Get(pe)
			owns = owns || child || set.Members.Has(pe)
		}
		if owns && (ours == nil || mf.Time == nil || !mf.Time.Before(ours)) {
			return ours, mf.Manager
		}
	}
	return ours, ""
}
