package hostlist

import "testing"

func TestLists(t *testing.T) {
	tests := []struct {
		hosts []string
		host  string
		want  bool
	}{
		{[]string{"hooks.example"}, "hooks.example", true},
		{[]string{"Hooks.Example"}, "hooks.EXAMPLE", true},
		{[]string{"hooks.example"}, "hooks.example:443", false},
		{[]string{"hooks.example:8443"}, "hooks.example:8443", true},
		{[]string{"hooks.example"}, "evil.hooks.example", false},
		{[]string{"hooks.example"}, "hooks.example.evil", false},
		// Unicode case folding would map these onto listed names; net/http
		// would dial their IDNA forms, other domains.
		{[]string{"hooks.slack.com"}, "hooks.sl\u0430ck.com", false},
		{[]string{"kit.example"}, "\u212Ait.example", false},
		{[]string{"hookz.example"}, "hook\u017F.example", false},
		{[]string{"hooks.example"}, "hooks.example\x00", false},
		{[]string{""}, "", false},
		{nil, "hooks.example", false},
	}
	for _, tt := range tests {
		if got := Lists(tt.hosts, tt.host); got != tt.want {
			t.Errorf("Lists(%q, %q) = %v, want %v", tt.hosts, tt.host, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		h  string
		ok bool
	}{
		{"hooks.example", true},
		{"hooks.example:8443", true},
		{"127.0.0.1:9000", true},
		{"[::1]:9000", true},
		{"", false},
		{"https://hooks.example", false},
		{"user@hooks.example", false},
		{"hooks.example/path", false},
		{"hooks.ex\u0430mple", false},
		{"::1", false},
		{"hooks.example:0", false},
		{"hooks.example:65536", false},
		{"hooks_example", false},
	}
	for _, tt := range tests {
		if err := Check(tt.h); (err == nil) != tt.ok {
			t.Errorf("Check(%q) = %v, want ok %v", tt.h, err, tt.ok)
		}
	}
}
