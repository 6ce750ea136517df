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
