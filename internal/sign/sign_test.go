package sign

import "testing"

// TestKey: a short key is refused; a MAC verifies in its domain only,
// and not under another key or for other bytes.
func TestKey(t *testing.T) {
	if _, err := NewKey([]byte("short")); err == nil {
		t.Error("NewKey(5 bytes) = nil error, want refused")
	}
	k, err := NewKey([]byte("a key of thirty-two bytes or more, for tests"))
	if err != nil {
		t.Fatal(err)
	}
	o, _ := NewKey([]byte("another key of thirty-two bytes or more, too"))
	m := k.MAC("domain a\n", []byte("data"))
	tests := []struct {
		name   string
		key    *Key
		domain string
		raw    string
		want   bool
	}{
		{"same", k, "domain a\n", "data", true},
		{"other domain", k, "domain b\n", "data", false},
		{"other bytes", k, "domain a\n", "date", false},
		{"other key", o, "domain a\n", "data", false},
	}
	for _, tt := range tests {
		if got := tt.key.Verify(tt.domain, []byte(tt.raw), m); got != tt.want {
			t.Errorf("%s: Verify() = %v, want %v", tt.name, got, tt.want)
		}
	}
	if k.Equal(o) || !k.Equal(k) {
		t.Error("Equal() does not tell the keys apart")
	}
}
