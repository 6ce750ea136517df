// Package catalogtest builds artifact catalogs for tests: the one
// version-mode catalog document that the promotion's catalog edits
// (gitops) and the promotion's HTTP surface (handlers) are tested on.
package catalogtest

import (
	"fmt"
	"strings"
)

// Digests of three made-up images.
var (
	DigestA = "sha256:" + strings.Repeat("a", 64)
	DigestB = "sha256:" + strings.Repeat("b", 64)
	DigestC = "sha256:" + strings.Repeat("c", 64)
)

// Version is a version-mode catalog of reg.example/acme/api, laid out as
// json.MarshalIndent does, listing releases "id=tag=digest".
func Version(releases ...string) string {
	var b strings.Builder
	b.WriteString("{\n  \"mode\": \"version\",\n  \"commit\": \"0123456789abcdef0123456789abcdef01234567\",\n  \"services\": [")
	for i, r := range releases {
		f := strings.Split(r, "=")
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n    {\n      \"id\": %q,\n      \"image\": \"reg.example/acme/api\",\n      \"tag\": %q,\n      \"digest\": %q,\n      \"published\": true\n    }", f[0], f[1], f[2])
	}
	b.WriteString("\n  ]\n}\n")
	return b.String()
}
