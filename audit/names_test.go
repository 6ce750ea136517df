package audit

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestLabelValue(t *testing.T) {
	long := strings.Repeat("a", 64)
	lookalike := "h-" + strings.Repeat("0", 40)
	tests := []struct {
		in   string
		want string // "" means: hashed
	}{
		{"staging", "staging"},
		{"apply", "apply"},
		{"", ""},
		{"a.b_c-d", "a.b_c-d"},
		{strings.Repeat("a", 63), strings.Repeat("a", 63)},
		{long, ""},
		{"alice@example.com", ""},
		{"prod\nowner=evil", ""},
		{"prod,component=audit-part", ""},
		{"../../etc", ""},
		{"-leading", ""},
		{"trailing-", ""},
		{"prød", ""},
		{"<script>", ""},
		{lookalike, ""},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		got := labelValue(tt.in)
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
			t.Errorf("labelValue(%q) = %q, not a label value: %v", tt.in, got, errs)
		}
		if tt.want != "" || tt.in == "" {
			if got != tt.want {
				t.Errorf("labelValue(%q) = %q, want %q", tt.in, got, tt.want)
			}
		} else if !hashedRE.MatchString(got) {
			t.Errorf("labelValue(%q) = %q, want a hashed value h-<40 hex>", tt.in, got)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("labelValue(%q) = labelValue(%q) = %q", tt.in, other, got)
		}
		seen[got] = tt.in
		if again := labelValue(tt.in); again != got {
			t.Errorf("labelValue(%q) not deterministic: %q then %q", tt.in, got, again)
		}
	}
	// A raw value that looks hashed is hashed itself, so it cannot pose as
	// the hash of another value.
	if labelValue(lookalike) == lookalike {
		t.Errorf("labelValue(%q) = itself, want it hashed", lookalike)
	}
}

func TestStreamIDs(t *testing.T) {
	keys := []streamKey{
		{Cluster: "a", Environment: "b/c"},
		{Cluster: "a/b", Environment: "c"},
		{Cluster: "a", Environment: "b", App: ""},
		{Cluster: "a", Namespace: "b"},
		{Cluster: "a", App: "b"},
		{Cluster: "a\x00", Environment: "b"},
		{Cluster: "prod\n", Environment: "../../x"},
	}
	seen := map[string]streamKey{}
	for _, k := range keys {
		id := k.id()
		if len(id) != 16 || !isLowerHex(id) {
			t.Errorf("%+v.id() = %q, want 16 lower-case hex digits", k, id)
		}
		if o, dup := seen[id]; dup {
			t.Errorf("%+v.id() = %+v.id() = %q", k, o, id)
		}
		seen[id] = k
		for _, name := range []string{streamHeadName(id), recordName(recordID(id, 42)), partName(recordID(id, 42), 3, "0a1b2c3d")} {
			if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
				t.Errorf("name %q is not a DNS subdomain: %v", name, errs)
			}
		}
	}
}

func TestParseID(t *testing.T) {
	tests := []struct {
		id     string
		stream string
		seq    int64
		ok     bool
	}{
		{"0123456789abcdef-0000000042", "0123456789abcdef", 42, true},
		{"0123456789abcdef-0000000000", "", 0, false},
		{"0123456789ABCDEF-0000000042", "", 0, false},
		{"0123456789abcdef-42", "", 0, false},
		{"deploy-web-audit-0123456789abcdef-0000000042", "", 0, false},
		{"../0123456789abcdef-0000000042", "", 0, false},
		{"0123456789abcdef-0000000042\n", "", 0, false},
		{"0123456789abcdef-0000000042/../x", "", 0, false},
		{strings.Repeat("f", 5000), "", 0, false},
		{"", "", 0, false},
	}
	for _, tt := range tests {
		stream, seq, err := parseID(tt.id)
		if (err == nil) != tt.ok || stream != tt.stream || seq != tt.seq {
			t.Errorf("parseID(%.40q) = %q, %d, %v; want %q, %d, ok %v", tt.id, stream, seq, err, tt.stream, tt.seq, tt.ok)
		}
		if err != nil && len(err.Error()) > 200 {
			t.Errorf("parseID(%.40q) error is %d bytes long, want it bounded", tt.id, len(err.Error()))
		}
	}
}

func TestParseCursor(t *testing.T) {
	good := cursor{t: testTime(), name: recordName("0123456789abcdef-0000000042")}
	got, err := parseCursor(good.token())
	if err != nil || !got.t.Equal(good.t) || got.name != good.name {
		t.Errorf("parseCursor(token of %+v) = %+v, %v", good, got, err)
	}
	for _, tok := range []string{
		"not base64!",
		"MTIzNA",                      // "1234": no name
		"eC9kZXBsb3ktd2ViLWF1ZGl0LTA", // "x/deploy-web-audit-0"
		strings.Repeat("A", 500),
		cursor{t: testTime(), name: "kube-root-ca.crt"}.token(),
	} {
		if _, err := parseCursor(tok); err == nil {
			t.Errorf("parseCursor(%.40q) = nil error, want one", tok)
		}
	}
}
