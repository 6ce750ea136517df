package notify

import (
	"bytes"
	"encoding/json"
	"flag"
	"github.com/hanzoai/deploy-web/envconfig"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// hostileEvent carries markup of every provider in the fields that come
// from the cluster or git.
var hostileEvent = Event{
	Trigger:     TriggerDegraded,
	App:         "<!channel> *checkout* <https://evil.example|click> & [x](https://evil.example)",
	Cluster:     "prod-1",
	Namespace:   "shop_{{DATE(2017-02-14T06:08:39Z)}}",
	Environment: "production",
	Revision:    "abc123",
	From:        "v1.2.2",
	To:          "v1.2.3 <@U123>",
	Message:     "Readiness probe failed: <script>alert(1)</script>\n# heading\n- item `code` ~strike~ |pipe| \\",
	Link:        "https://console.example/apps/checkout?cluster=prod-1&x=<y>",
	Time:        time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
}

func TestPayloadGolden(t *testing.T) {
	for _, p := range []envconfig.Provider{envconfig.ProviderWebhook, envconfig.ProviderSlack, envconfig.ProviderTeams} {
		t.Run(string(p), func(t *testing.T) {
			got, err := Payload(p, "s1", "d1", hostileEvent)
			if err != nil {
				t.Fatal(err)
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, got, "", "  "); err != nil {
				t.Fatalf("Payload(%s) is not JSON: %v", p, err)
			}
			pretty.WriteByte('\n')
			path := filepath.Join("testdata", "payload_"+string(p)+".golden.json")
			if *update {
				if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(pretty.Bytes(), want) {
				t.Errorf("Payload(%s) differs from %s (run with -update after checking):\n%s", p, path, pretty.Bytes())
			}
		})
	}
}

// TestPayloadEscapesHostileText checks, apart from the golden files, that
// no markup from the event survives in a provider's text.
func TestPayloadEscapesHostileText(t *testing.T) {
	texts := func(t *testing.T, p envconfig.Provider) []string {
		t.Helper()
		b, err := Payload(p, "s1", "d1", hostileEvent)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		var out []string
		var walk func(k string, v any)
		walk = func(k string, v any) {
			switch v := v.(type) {
			case map[string]any:
				for k2, x := range v {
					walk(k2, x)
				}
			case []any:
				for _, x := range v {
					walk(k, x)
				}
			case string:
				if k == "text" || k == "value" {
					out = append(out, v)
				}
			}
		}
		walk("", v)
		return out
	}
	for _, s := range texts(t, envconfig.ProviderSlack) {
		// Only our own link may use <...|...>.
		rest := strings.Replace(s, "|Open in deploy-web>", "", 1)
		if strings.HasPrefix(rest, "<https://console.example/") {
			rest = strings.TrimPrefix(rest, "<")
		}
		if strings.ContainsAny(rest, "<>") {
			t.Errorf("Slack text %q has a raw < or >", s)
		}
		if strings.Contains(strings.ReplaceAll(s, "&amp;", ""), "&") && !strings.Contains(s, "&lt;") && !strings.Contains(s, "&gt;") {
			t.Errorf("Slack text %q has a raw &", s)
		}
	}
	for _, s := range texts(t, envconfig.ProviderTeams) {
		for _, m := range []string{"*", "[", "](", "{{", "`", "<"} {
			if i := strings.Index(s, m); i >= 0 && (i == 0 || s[i-1] != '\\') {
				t.Errorf("Teams text %q has unescaped %q", s, m)
			}
		}
	}
}

func TestPayloadDropsNonHTTPLink(t *testing.T) {
	ev := Event{Trigger: TriggerDrift, App: "a", Link: "javascript:alert(1)"}
	for _, p := range []envconfig.Provider{envconfig.ProviderSlack, envconfig.ProviderTeams} {
		b, err := Payload(p, "s1", "d1", ev)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "javascript") {
			t.Errorf("Payload(%s) = %s, want no javascript: link", p, b)
		}
	}
}

func TestTeamsEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"checkout", "checkout"},
		{"prod-1", "prod-1"},
		{"**bold** _it_", `\*\*bold\*\* \_it\_`},
		{"[x](https://evil.example)", `\[x\](https://evil.example)`},
		{"{{DATE(2017-02-14T06:08:39Z)}}", `\{\{DATE(2017-02-14T06:08:39Z)\}\}`},
		{"# h\n- a\n  + b\n1. c\n2) d\n> q", "\\# h\n\\- a\n  \\+ b\n1\\. c\n2\\) d\n\\> q"},
		{`a\*`, `a\\\*`},
		{"v1.2", "v1.2"},
	}
	for _, tt := range tests {
		if got := teamsEscape(tt.in); got != tt.want {
			t.Errorf("teamsEscape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
