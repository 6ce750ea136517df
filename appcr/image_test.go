package appcr

import "testing"

func TestImageTag(t *testing.T) {
	tests := []struct{ image, want string }{
		{"ghcr.io/acme/web:1.2.0", "1.2.0"},
		{"localhost:5000/acme/web:v1.0.0", "v1.0.0"},
		{"localhost:5000/acme/web", ""},
		{"web", ""},
		{"web:latest", "latest"},
		{"ghcr.io/acme/web:1.2.0@sha256:abcd", "1.2.0"},
		{"ghcr.io/acme/web@sha256:abcd", ""},
	}
	for _, tt := range tests {
		if got := ImageTag(tt.image); got != tt.want {
			t.Errorf("ImageTag(%q) = %q, want %q", tt.image, got, tt.want)
		}
	}
}

func TestWithTag(t *testing.T) {
	tests := []struct{ image, tag, want string }{
		{"ghcr.io/acme/web:1.2.0", "1.1.0", "ghcr.io/acme/web:1.1.0"},
		{"localhost:5000/acme/web", "1.1.0", "localhost:5000/acme/web:1.1.0"},
		{"localhost:5000/acme/web:2.0.0@sha256:ab", "1.0.0", "localhost:5000/acme/web:1.0.0"},
	}
	for _, tt := range tests {
		if got := WithTag(tt.image, tt.tag); got != tt.want {
			t.Errorf("WithTag(%q, %q) = %q, want %q", tt.image, tt.tag, got, tt.want)
		}
	}
}

func TestParseImageRef(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		image string
		want  ImageRef
	}{
		{"ghcr.io/acme/web:1.2.0", ImageRef{Repository: "ghcr.io/acme/web", Tag: "1.2.0"}},
		{"repo:1.2.0@" + digest, ImageRef{Repository: "repo", Tag: "1.2.0", Digest: digest}},
		{"host:5000/repo:tag", ImageRef{Repository: "host:5000/repo", Tag: "tag"}},
		{"host:5000/repo", ImageRef{Repository: "host:5000/repo"}},
		{"host:5000/repo:1.2.0@" + digest, ImageRef{Repository: "host:5000/repo", Tag: "1.2.0", Digest: digest}},
		{"ghcr.io/acme/web@" + digest, ImageRef{Repository: "ghcr.io/acme/web", Digest: digest}},
		{"host:5000/repo@" + digest, ImageRef{Repository: "host:5000/repo", Digest: digest}},
		{"web", ImageRef{Repository: "web"}},
		{"web:latest", ImageRef{Repository: "web", Tag: "latest"}},
		{"", ImageRef{}},
	}
	for _, tt := range tests {
		got := ParseImageRef(tt.image)
		if got != tt.want {
			t.Errorf("ParseImageRef(%q) = %+v, want %+v", tt.image, got, tt.want)
		}
		if s := got.String(); s != tt.image {
			t.Errorf("ParseImageRef(%q).String() = %q, want the reference back", tt.image, s)
		}
	}
}
