package textfmt

import "testing"

func TestCut(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"longer than ten", 10, "longer tha…"},
		{"ééé", 3, "é…"}, // never half of the second é
	}
	for _, tt := range tests {
		if got := Cut(tt.in, tt.max); got != tt.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}
