package loopback

import "testing"

func TestHost(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"localhost", true},
		{"LocalHost", true},
		{"127.0.0.1", true},
		{"127.8.9.10", true},
		{"::1", true},
		{"::ffff:127.0.0.1", true},
		{"[::1]", false}, // a Hostname() has no brackets
		{"localhost.", false},
		{"localhost.example.com", false},
		{"127.0.0.1.nip.io", false},
		{"10.0.0.1", false},
		{"0.0.0.0", false},
		{"::", false},
		{"git.example.com", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := Host(tt.host); got != tt.want {
			t.Errorf("Host(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
}
