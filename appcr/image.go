package appcr

import "strings"

// ImageTag returns the tag of an image reference: "1.2.0" for
// "ghcr.io/acme/web:1.2.0". It is "" when the reference has no tag (a bare
// name or only a digest).
func ImageTag(image string) string {
	ref := image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	slash := strings.LastIndex(ref, "/")
	colon := strings.LastIndex(ref, ":")
	if colon > slash {
		return ref[colon+1:]
	}
	return ""
}

// WithTag returns image with its tag replaced by tag (added when missing),
// keeping the repository and dropping any digest.
func WithTag(image, tag string) string {
	ref := image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	slash := strings.LastIndex(ref, "/")
	if colon := strings.LastIndex(ref, ":"); colon > slash {
		ref = ref[:colon]
	}
	return ref + ":" + tag
}
