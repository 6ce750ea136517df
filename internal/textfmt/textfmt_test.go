package textfmt

import "testing"

func TestShort(t *testing.T) {
	const (
		sha    = "0123456789abcdef0123456789abcdef01234567"
		digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	)
	tests := []struct {
		name string
		f    func(string) string
		in   string
		want string
	}{
		{"OrDash", OrDash, "", "–"},
		{"OrDash", OrDash, "1.2.0", "1.2.0"},
		{"ShortSHA", ShortSHA, sha, "0123456789ab"},
		{"ShortSHA", ShortSHA, "0123456789ab", "0123456789ab"},
		{"ShortSHA", ShortSHA, "abc", "abc"},
		{"ShortSHA", ShortSHA, "", "–"},
		{"ShortDigest", ShortDigest, digest, "sha256:0123456789ab…"},
		{"ShortDigest", ShortDigest, "sha256:0123456789ab", "sha256:0123456789ab"},
		{"ShortDigest", ShortDigest, "", "–"},
	}
	for _, tt := range tests {
		if got := tt.f(tt.in); got != tt.want {
			t.Errorf("%s(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}
