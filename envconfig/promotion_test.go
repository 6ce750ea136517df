package envconfig

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// promotionConfig is a config of the environments given as "name" or
// "name after other" or "name after other soak 5m", each with its own
// namespace.
func promotionConfig(envs ...string) string {
	var b strings.Builder
	b.WriteString("environments:\n")
	for _, e := range envs {
		f := strings.Fields(e)
		b.WriteString("  - name: " + f[0] + "\n    cluster: {context: c}\n    namespace: ns-" + f[0] + "\n" +
			"    source: {repo: \"https://git.example/m.git\", ref: main, path: overlays/" + f[0] + "}\n    catalog: c.json\n")
		switch len(f) {
		case 3:
			b.WriteString("    promotion: {after: " + f[2] + "}\n")
		case 5:
			b.WriteString("    promotion: {after: " + f[2] + ", soak: " + f[4] + "}\n")
		}
	}
	return b.String()
}

func TestParseConfigPromotion(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		// want are substrings of the error; none means valid.
		want []string
		// order is PromotionOrder of a valid config.
		order []string
	}{
		{"none", promotionConfig("dev", "prod"), nil, []string{"dev", "prod"}},
		{"chain", promotionConfig("dev", "staging after dev", "prod after staging soak 1h"), nil, []string{"dev", "staging", "prod"}},
		{"declared out of order", promotionConfig("prod after staging", "staging after dev", "dev"), nil, []string{"dev", "staging", "prod"}},
		{"two from one", promotionConfig("dev", "qa after dev", "staging after dev", "prod after staging"), nil, []string{"dev", "qa", "staging", "prod"}},
		{"two chains", promotionConfig("a", "b", "a2 after a", "b2 after b"), nil, []string{"a", "a2", "b", "b2"}},
		{"unknown after", promotionConfig("dev", "prod after stagin"),
			[]string{`environments[1] (prod).promotion.after: "stagin" is not an environment of this file (have: dev, prod)`}, nil},
		{"after itself", promotionConfig("dev", "prod after prod"),
			[]string{`environments[1] (prod).promotion.after: "prod" is this environment`}, nil},
		{"cycle", promotionConfig("dev", "staging after prod", "prod after staging"),
			[]string{"environments[1] (staging).promotion.after: the promotion order is a cycle (staging after prod after staging)"}, nil},
		{"cycle of three", promotionConfig("a after c", "b after a", "c after b"),
			[]string{"environments[0] (a).promotion.after: the promotion order is a cycle (a after c after b after a)"}, nil},
		{"negative soak", promotionConfig("dev", "prod after dev soak -1m"),
			[]string{"environments[1] (prod).promotion.soak: -1m0s must not be negative"}, nil},
		{"no after", promotionConfig("dev") + "    promotion: {soak: 5m}\n",
			[]string{"environments[0] (dev).promotion.after: required"}, nil},
		{"unknown key", promotionConfig("dev", "prod") + "    promotion: {after: dev, Soak: 5m}\n",
			[]string{`environments[1] (prod).promotion.Soak: unknown key`}, nil},
		{"duration text", promotionConfig("dev", "prod after dev soak ten"),
			[]string{"environments[1] (prod).promotion.soak"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tt.yaml), "/etc/deploy")
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("ParseConfig = %v, want no error", err)
				}
				if diff := cmp.Diff(tt.order, cfg.PromotionOrder()); diff != "" {
					t.Errorf("PromotionOrder() (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseConfig = nil, want an error naming %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParseConfig = %v, want it to contain %q", err, w)
				}
			}
			if strings.Count(err.Error(), "cycle") > 1 {
				t.Errorf("ParseConfig = %v, want the cycle reported once", err)
			}
		})
	}
}

func TestPromotionSoak(t *testing.T) {
	cfg, err := ParseConfig([]byte(promotionConfig("dev", "staging after dev", "prod after staging soak 1h")), "/etc/deploy")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		env  string
		from string
		soak time.Duration
	}{{"dev", "", 0}, {"staging", "dev", DefaultPromotionSoak}, {"prod", "staging", time.Hour}} {
		e, err := cfg.Env(tt.env)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.PromotedFrom(); got != tt.from {
			t.Errorf("%s.PromotedFrom() = %q, want %q", tt.env, got, tt.from)
		}
		if e.Promotion != nil {
			if got := e.Promotion.SoakOrDefault(); got != tt.soak {
				t.Errorf("%s.Promotion.SoakOrDefault() = %s, want %s", tt.env, got, tt.soak)
			}
		}
	}
}
