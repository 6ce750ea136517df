package appcr

import "strings"

// ImageRef is an image reference split into its parts, as written (not
// normalised, not validated): "host:5000/acme/web:1.2.0@sha256:ab" is
// Repository "host:5000/acme/web", Tag "1.2.0" and Digest "sha256:ab".
type ImageRef struct {
	// Repository is the reference without tag and digest, registry host and
	// port included.
	Repository string
	// Tag and Digest are "" when the reference has none.
	Tag, Digest string
}

// ParseImageRef splits an image reference: the digest is what follows the
// first "@"; the tag is what follows the last ":" before it, unless a "/"
// comes after that ":" (then the ":" belongs to a registry port). It is the
// one image-reference parser of the project.
func ParseImageRef(image string) ImageRef {
	var r ImageRef
	ref := image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref, r.Digest = ref[:i], ref[i+1:]
	}
	slash := strings.LastIndex(ref, "/")
	if colon := strings.LastIndex(ref, ":"); colon > slash {
		ref, r.Tag = ref[:colon], ref[colon+1:]
	}
	r.Repository = ref
	return r
}

// String joins the parts again: repository[:tag][@digest].
func (r ImageRef) String() string {
	s := r.Repository
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// ImageTag returns the tag of an image reference: "1.2.0" for
// "ghcr.io/acme/web:1.2.0". It is "" when the reference has no tag (a bare
// name or only a digest).
func ImageTag(image string) string {
	return ParseImageRef(image).Tag
}

// WithTag returns image with its tag replaced by tag (added when missing),
// keeping the repository and dropping any digest.
func WithTag(image, tag string) string {
	return ParseImageRef(image).Repository + ":" + tag
}
