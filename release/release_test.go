package release

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGate(t *testing.T) {
	history := []string{"1.0.0", "v1.1.0", "1.2.0", "latest", "sha-3f9c2e1"}
	tests := []struct {
		version string
		want    error
	}{
		{"1.0.0", nil},
		{"v1.1.0", nil},
		{"1.2.0", nil},
		{"latest", ErrInvalidVersion},
		{"sha-3f9c2e1", ErrInvalidVersion},
		{"1.2", ErrInvalidVersion},
		{"1.2.3-rc1", ErrInvalidVersion},
		{"v1.2.3+build", ErrInvalidVersion},
		{" 1.2.3", ErrInvalidVersion},
		{"1.2.3\n", ErrInvalidVersion},
		{"1.2.3 ", ErrInvalidVersion},
		{"01.2.3", ErrInvalidVersion},
		{"1.2.3\x00", ErrInvalidVersion},
		{"V1.2.3", ErrInvalidVersion},
		{"", ErrInvalidVersion},
		{"1.3.0", ErrNotInHistory},
		{"v1.0.0", ErrNotInHistory}, // the history has 1.0.0, not v1.0.0: tags are exact
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			err := Gate(tt.version, history)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("Gate(%q) = %v, want %v", tt.version, err, tt.want)
			}
		})
	}
}

func TestImagePatch(t *testing.T) {
	tests := []struct {
		image, tag, rv string
		want           map[string]any
	}{
		{"ghcr.io/acme/web:1.2.0", "1.1.0", "42", map[string]any{
			"metadata": map[string]any{"resourceVersion": "42"},
			"spec":     map[string]any{"image": "ghcr.io/acme/web:1.1.0"},
		}},
		{"localhost:5000/acme/web:2.0.0@sha256:abcd", "v1.9.0", "7", map[string]any{
			"metadata": map[string]any{"resourceVersion": "7"},
			"spec":     map[string]any{"image": "localhost:5000/acme/web:v1.9.0"},
		}},
	}
	for _, tt := range tests {
		b, err := ImagePatch(tt.image, tt.tag, tt.rv)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ImagePatch(%q, %q, %q) mismatch (-want +got):\n%s", tt.image, tt.tag, tt.rv, diff)
		}
	}
}

func TestRanBefore(t *testing.T) {
	images := []string{"ghcr.io/b/web:1.3.0", "ghcr.io/a/web:1.2.0", "ghcr.io/b/web:1.1.0@sha256:abc"}
	tests := []struct {
		current, version string
		ok               bool
	}{
		{"ghcr.io/b/web:1.3.0", "1.1.0", true},  // same repository (the digest does not matter)
		{"ghcr.io/b/web:1.3.0", "1.2.0", false}, // 1.2.0 ran from ghcr.io/a/web only
		{"ghcr.io/a/web:9.0.0", "1.2.0", true},
	}
	for _, tt := range tests {
		err := ranBefore(images, tt.current, tt.version)
		if (err == nil) != tt.ok || err != nil && !errors.Is(err, ErrNotInHistory) {
			t.Errorf("ranBefore(%s, %s) = %v, want ok=%v", tt.current, tt.version, err, tt.ok)
		}
	}
}

func TestGateRefusalText(t *testing.T) {
	tests := []struct {
		version, want string
	}{
		{"latest", `not a clean semver version: "latest" (want MAJOR.MINOR.PATCH, e.g. 1.2.0)`},
		{"1.3.0", "version not in the app's history: 1.3.0: roll back only to a version this app has run"},
	}
	for _, tt := range tests {
		var ref *RefusalError
		if err := Gate(tt.version, []string{"1.2.0"}); !errors.As(err, &ref) || ref.Public != tt.want {
			t.Errorf("Gate(%q) = %v, want a refusal saying %q", tt.version, err, tt.want)
		}
	}
}

func TestRanBeforeRefusal(t *testing.T) {
	err := ranBefore([]string{"ghcr.io/old/web:1.0.0"}, "ghcr.io/new/web:1.2.0", "1.0.0")
	var ref *RefusalError
	if !errors.As(err, &ref) || !errors.Is(err, ErrNotInHistory) {
		t.Fatalf("ranBefore = %v, want a RefusalError of kind ErrNotInHistory", err)
	}
	want := "version not in the app's history: 1.0.0 ran as ghcr.io/old/web:1.0.0, but the app now declares the repository of ghcr.io/new/web:1.2.0; change the image by hand: roll back only to a version this app has run"
	if ref.Public != want {
		t.Errorf("ranBefore public = %q, want %q", ref.Public, want)
	}
}
