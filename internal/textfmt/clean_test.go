package textfmt

import "testing"

// TestClean: format characters go, control characters become a space
// (line breaks kept where a field keeps lines), nothing else changes.
func TestClean(t *testing.T) {
	tests := []struct {
		name, in   string
		lines      bool
		want       string
		wantInLine string // Clean(in, false) when it differs from want
	}{
		{"plain", "roll back: 1.4.2 broke checkout", false, "roll back: 1.4.2 broke checkout", ""},
		{"bidi override", "fix \u202egnp.exe\u202c", false, "fix gnp.exe", ""},
		{"every bidi control", "a\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069b", false, "ab", ""},
		{"zero width", "ad\u200bmin\u200c\u200d\u200e\u200f\u2060\ufeff", false, "admin", ""},
		{"arabic letter mark and tags", "x\u061cy\U000E0041z", false, "xyz", ""},
		{"soft hyphen (Cf)", "re\u00adason", false, "reason", ""},
		{"controls become spaces", "a\tb\x00c\x1bd\x7fe\u0085f", false, "a b c d e f", ""},
		{"line breaks in one line", "a\r\nb\nc\u2028d", false, "a  b c d", ""},
		{"line breaks kept", "a\r\nb\rc\u2029d\u2028e", true, "a\nb\nc\nd\ne", "a  b c d e"},
		{"invalid UTF-8", "a\xffb", false, "a\uFFFDb", ""},
		{"replacement char kept", "a\uFFFDb", false, "a\uFFFDb", ""},
		{"other scripts kept", "déploiement 展开 נסיגה 🚀", false, "déploiement 展开 נסיגה 🚀", ""},
		{"empty", "", false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clean(tt.in, tt.lines); got != tt.want {
				t.Errorf("Clean(%q, %v) = %q, want %q", tt.in, tt.lines, got, tt.want)
			}
			if got := Clean(Clean(tt.in, tt.lines), tt.lines); got != tt.want {
				t.Errorf("Clean twice (%q) = %q, want %q", tt.in, got, tt.want)
			}
			if tt.wantInLine != "" {
				if got := Clean(tt.in, false); got != tt.wantInLine {
					t.Errorf("Clean(%q, false) = %q, want %q", tt.in, got, tt.wantInLine)
				}
			}
		})
	}
}

// TestHidden: Hidden is true exactly for the characters Clean (in one
// line) removes or replaces, valid UTF-8 aside.
func TestHidden(t *testing.T) {
	for _, r := range []rune{'a', ' ', 'é', '展', '\uFFFD', '🚀', '\u202e', '\u200b', '\u00ad', '\U000E0041', '\t', '\n', '\x00', '\x7f', '\u0085', '\u2028', '\u2029', '\ufeff'} {
		s := string(r)
		if got, want := Hidden(r), Clean(s, false) != s; got != want {
			t.Errorf("Hidden(%U) = %v, want %v (Clean changes it: %v)", r, got, want, want)
		}
	}
}
