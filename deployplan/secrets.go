package deployplan

import (
	"encoding/base64"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// redactedValue replaces a Secret value found in a message.
const redactedValue = "<redacted>"

// objErr is the short form of an error about object o, for reports and
// logs. For a Secret, every value its manifest carries (stringData, data
// both encoded and decoded) is cut out of the message first: an API
// server's validation message may quote what it refused.
func objErr(o *unstructured.Unstructured, err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	if isSecret(o) {
		msg = redactSecretValues(o, msg)
	}
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}

// redactSecretValues removes from msg every value of the Secret manifest o.
func redactSecretValues(o *unstructured.Unstructured, msg string) string {
	var vals []string
	add := func(v string) {
		if len(v) >= 1 {
			vals = append(vals, v)
		}
	}
	sd, _, _ := unstructured.NestedStringMap(o.Object, "stringData")
	for _, v := range sd {
		add(v)
		add(base64.StdEncoding.EncodeToString([]byte(v)))
	}
	d, _, _ := unstructured.NestedStringMap(o.Object, "data")
	for _, v := range d {
		add(v)
		if raw, err := base64.StdEncoding.DecodeString(v); err == nil {
			add(string(raw))
		}
	}
	// Longest first, so a value that contains another is cut whole.
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	for _, v := range vals {
		msg = strings.ReplaceAll(msg, v, redactedValue)
	}
	return msg
}
