package ociregistry

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// TestAuthHost: the keys of a docker config's auths.
func TestAuthHost(t *testing.T) {
	for key, want := range map[string]string{
		"reg.example": "reg.example", "reg.example:5000": "reg.example:5000", "https://index.docker.io/v1/": "index.docker.io",
		"http://reg.example/v2/": "reg.example", "reg.example/some/path": "reg.example",
	} {
		if got := authHost(key); got != want {
			t.Errorf("authHost(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestStaticKeychainHostCase: registry hosts are case-insensitive, so an
// auths key in another case (or Docker Hub's alias) still gives the image's
// registry its credentials; a look-alike outside ASCII gets none, and of two
// keys naming one host the one spelling it exactly wins.
func TestStaticKeychainHostCase(t *testing.T) {
	dir := t.TempDir()
	cfg := `{"auths":{
		"https://Reg.Example:5000/v1/":{"auth":"YTpi"},
		"docker.io":{"auth":"aHViOmFsaWFz"},
		"https://index.docker.io/v1/":{"auth":"aHViOmV4YWN0"},
		"other.example":{"auth":"bzpw"}}}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir)
	k := newStaticKeychain()
	for _, tc := range []struct{ image, user string }{
		{"reg.example:5000/acme/a:1", "a"},
		{"REG.EXAMPLE:5000/acme/a:1", "a"},
		{"reg.example/acme/a:1", ""}, // another port is another host
		{"acme/web:1", "hub"},        // Docker Hub: the exact key's entry
		{"Other.Example/x:1", "o"},
		{"other.ex\u212Ample/x:1", ""}, // the Kelvin sign is not a k
	} {
		ref, err := name.ParseReference(tc.image, name.WeakValidation)
		if err != nil {
			if tc.user == "" {
				continue // go-containerregistry refuses the name itself
			}
			t.Fatal(err)
		}
		auth, err := k.Resolve(ref.Context())
		if err != nil {
			t.Fatal(err)
		}
		got, err := auth.Authorization()
		if err != nil {
			t.Fatal(err)
		}
		if got.Username != tc.user {
			t.Errorf("%s: user %q, want %q", tc.image, got.Username, tc.user)
		}
		if tc.image == "acme/web:1" && got.Password != "exact" {
			t.Errorf("%s: password %q, want the index.docker.io entry's", tc.image, got.Password)
		}
	}
}

// TestRegistryHostDown: which failures of one HEAD take a registry host
// out of the check (its other digests are not tried).
func TestRegistryHostDown(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"no error", nil, false},
		{"404", &transport.Error{StatusCode: http.StatusNotFound}, false},
		{"401", &transport.Error{StatusCode: http.StatusUnauthorized}, false},
		{"403", &transport.Error{StatusCode: http.StatusForbidden}, false},
		{"400", &transport.Error{StatusCode: http.StatusBadRequest}, false},
		{"wrapped 403", fmt.Errorf("head: %w", &transport.Error{StatusCode: http.StatusForbidden}), false},
		{"429", &transport.Error{StatusCode: http.StatusTooManyRequests}, true},
		{"408", &transport.Error{StatusCode: http.StatusRequestTimeout}, true},
		{"500", &transport.Error{StatusCode: http.StatusInternalServerError}, true},
		{"503", &transport.Error{StatusCode: http.StatusServiceUnavailable}, true},
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"deadline", context.DeadlineExceeded, true},
	} {
		if got := HostDown(tc.err); got != tc.want {
			t.Errorf("HostDown(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
