package actor

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	long := strings.Repeat("é", 400) // 800 bytes
	for _, tt := range []struct {
		name string
		a    Actor
		want string
	}{
		{"email and subject", Actor{Email: "ada@example.com", Subject: "u-1"}, "ada@example.com (sub u-1)"},
		{"subject alone", Actor{Subject: "auto-sync"}, "sub auto-sync"},
		{"email alone", Actor{Email: "ada@example.com"}, "ada@example.com"},
		{"neither", Actor{}, "unknown"},
		{"name and groups are not printed", Actor{Email: "ada@example.com", Subject: "u-1", Name: "Ada", Groups: []string{"ops"}}, "ada@example.com (sub u-1)"},
		{"line breaks", Actor{Email: "m@x\nCo-authored-by: mallory <m@x>", Subject: "u-1\r\n\r\nSigned-off-by: root"},
			"m@x Co-authored-by: mallory <m@x> (sub u-1 Signed-off-by: root)"},
		{"control characters", Actor{Email: "a\x00d\x1b[31ma@x\x7f", Subject: "\tu\u00851\u2028"}, "a d [31ma@x (sub u 1)"},
		{"bidi and zero-width", Actor{Email: "ada@exam\u2066ple.com", Subject: "u-1\ufeff\u202egnp.exe\u202c"}, "ada@example.com (sub u-1gnp.exe)"},
		{"only spaces", Actor{Email: " \n\t", Subject: "\u200b"}, "unknown"},
		{"invalid UTF-8", Actor{Subject: "u\xff1"}, "sub u\ufffd1"},
		{"very long", Actor{Email: long, Subject: "x" + long}, long[:MaxPartBytes-1] + "…" + " (sub x" + long[:MaxPartBytes-1] + "…)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.a.String()
			if got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if !utf8.ValidString(got) || strings.ContainsFunc(got, func(r rune) bool {
				return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028'
			}) {
				t.Errorf("String() = %q holds a control or format character", got)
			}
			if max := 2*(MaxPartBytes+len("…")) + len(" (sub )"); len(got) > max {
				t.Errorf("String() has %d bytes, want at most %d", len(got), max)
			}
		})
	}
}

func TestKey(t *testing.T) {
	for _, tt := range []struct {
		a    Actor
		want string
	}{
		{Actor{Email: "Ada@Example.COM", Subject: "u-1"}, "ada@example.com"},
		{Actor{Email: "ÄDA@x", Subject: "u-1"}, "Äda@x"}, // ASCII only
		{Actor{Subject: "U-1"}, "U-1"},
	} {
		if got := tt.a.Key(); got != tt.want {
			t.Errorf("%+v.Key() = %q, want %q", tt.a, got, tt.want)
		}
	}
}

// TestRecordJSON: the record's form of an actor is unchanged (email,
// subject, groups; no display name).
func TestRecordJSON(t *testing.T) {
	b, err := json.Marshal(Actor{Email: "ada@example.com", Subject: "u-1", Groups: []string{"ops"}, Name: "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"email":"ada@example.com","subject":"u-1","groups":["ops"]}`; string(b) != want {
		t.Errorf("json = %s, want %s", b, want)
	}
}
