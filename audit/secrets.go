package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/hanzoai/deploy-web/deployplan"
)

// StripSecrets returns objs with every Secret replaced by its name and
// hash: apiVersion, kind, namespace, name and the annotation
// deployplan.SecretHashAnnotation holding deployplan.SecretHash of the
// Secret (the hash an apply stamps on the live Secret, so a stored record
// and a live Secret compare without reading values). Nothing else of a
// Secret is kept: not its data, type, labels or annotations (an
// annotation such as kubectl's last-applied-configuration holds the
// values). Any kind spelled "secret" in any group counts as a Secret;
// a List is refused, since a Secret inside it would be missed. objs is not
// modified.
func StripSecrets(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for i, o := range objs {
		if o == nil {
			return nil, fmt.Errorf("audit: manifest %d is nil", i)
		}
		kind := o.GetKind()
		if strings.HasSuffix(kind, "List") || o.Object["items"] != nil {
			return nil, fmt.Errorf("audit: manifest %d (%s %s) is a list: pass its items one by one", i, kind, o.GetName())
		}
		if !strings.EqualFold(kind, "Secret") {
			out = append(out, o)
			continue
		}
		s := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": o.GetAPIVersion(),
			"kind":       kind,
			"metadata":   map[string]any{},
		}}
		s.SetName(o.GetName())
		s.SetNamespace(o.GetNamespace())
		s.SetAnnotations(map[string]string{deployplan.SecretHashAnnotation: secretHash(o)})
		out = append(out, s)
	}
	return out, nil
}

// secretHash is deployplan.SecretHash, or, for a Secret that rule
// refuses (a data value that is not base64: a refused apply may record
// one), a SHA-256 of its raw data and stringData under this package's own
// domain. Either way, a hash and never a value.
func secretHash(o *unstructured.Unstructured) string {
	if h, err := deployplan.SecretHash(o); err == nil {
		return h
	}
	b, _ := json.Marshal([]any{o.Object["type"], o.Object["data"], o.Object["stringData"]})
	sum := sha256.Sum256(append([]byte("deploy-web audit unparsable secret v1\n"), b...))
	return "sha256:" + hex.EncodeToString(sum[:])
}
