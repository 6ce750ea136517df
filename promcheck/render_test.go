package promcheck

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/envconfig"
)

// TestRender: each placeholder is replaced by its value escaped for the
// literal it stands in; hostile values stay inside their literal.
func TestRender(t *testing.T) {
	v := Vars{App: "api", Namespace: "shop-dev", Environment: "dev", Version: "1.5.0"}
	tests := []struct {
		name, q string
		v       Vars
		want    string
	}{
		{"all four", `sum(rate(http_errors{app="{{app}}",namespace="{{namespace}}",env='{{environment}}',version="{{ version }}"}[5m]))`, v,
			`sum(rate(http_errors{app="api",namespace="shop-dev",env='dev',version="1.5.0"}[5m]))`},
		{"no placeholder", `up`, v, `up`},
		{"close the string and add a matcher", `up{app="{{app}}"}`, Vars{App: `x"} or vector(0) or up{a="`},
			`up{app="x\"} or vector(0) or up{a=\""}`},
		{"single quotes", `up{app='{{app}}'}`, Vars{App: `x'} or vector(1) #`},
			`up{app='x\'} or vector(1) #'}`},
		{"double quote inside single stays", `up{app='{{app}}'}`, Vars{App: `a"b`}, `up{app='a"b'}`},
		{"backslash cannot eat the quote", `up{app="{{app}}"}`, Vars{App: `x\`}, `up{app="x\\"}`},
		{"newline and control", `up{app="{{app}}"}`, Vars{App: "a\nb\x00\x7f"}, `up{app="a\x0ab\x00\x7f"}`},
		{"regex matcher quotes the value", `up{app=~"{{app}}"}`, Vars{App: `.*|a`}, `up{app=~"\\.\\*\\|a"}`},
		{"negative regex, spaces", `up{app !~ "{{app}}"}`, Vars{App: `a.b`}, `up{app !~ "a\\.b"}`},
		{"escaped quote in the query's own literal", `up{a="x\"{{app}}"}`, Vars{App: `"`}, `up{a="x\"\""}`},
		{"unicode passes", `up{app="{{app}}"}`, Vars{App: "café"}, `up{app="café"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Render(tt.q, tt.v)
			if err != nil || got != tt.want {
				t.Errorf("Render(%s, %+v) = %s, %v\nwant %s", tt.q, tt.v, got, err, tt.want)
			}
			// The rendered query's literals end where the template's do:
			// scanning it finds the same structure (no new code outside
			// strings).
			if err == nil && outside(t, got) != outside(t, tt.q) {
				t.Errorf("Render(%s) changed the query outside its string literals:\n%s\n%s", tt.q, outside(t, got), outside(t, tt.q))
			}
		})
	}
}

// outside is q with every string literal's contents dropped: what a
// value must never change.
func outside(t *testing.T, q string) string {
	t.Helper()
	var b strings.Builder
	var quote byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote == 0:
			b.WriteByte(c)
			if c == '"' || c == '\'' || c == '`' {
				quote = c
			}
		case c == '\\' && quote != '`':
			i++
		case c == quote:
			b.WriteByte(c)
			quote = 0
		}
	}
	if quote != 0 {
		t.Fatalf("%s: unterminated literal", q)
	}
	return b.String()
}

// TestRenderRefuses: a placeholder outside a literal (bare, in a metric
// name, in a backtick string), an unknown one, and a non-UTF-8 value are
// errors, never a query.
func TestRenderRefuses(t *testing.T) {
	for _, tt := range []struct {
		q    string
		v    Vars
		want string
	}{
		{`up{app={{app}}}`, Vars{App: "a"}, "{{app}} outside a string literal"},
		{`{{app}}_errors_total`, Vars{App: "a"}, "outside a string literal"},
		{"up{app=`{{app}}`}", Vars{App: "a"}, "outside a string literal"},
		{`up{app="{{token}}"}`, Vars{}, "unknown placeholder {{token}}"},
		{`up{app="{{app}}"}`, Vars{App: "a\xffb"}, "not UTF-8"},
		{`up{app="{{app}}}`, Vars{App: "a"}, "unterminated string literal"},
		{`up{app="{{app"}`, Vars{App: "a"}, "a {{ without }}"},
	} {
		got, err := Render(tt.q, tt.v)
		var re *RenderError
		if !errors.As(err, &re) || !strings.Contains(re.Message, tt.want) {
			t.Errorf("Render(%s) = %q, %v; want a RenderError with %q", tt.q, got, err, tt.want)
		}
	}
}

// TestJudge: the worst sample decides; any sample over the threshold (or
// NaN) fails it; no samples is not a pass.
func TestJudge(t *testing.T) {
	max, min := 0.05, 1.0
	at := func(s int) time.Time { return time.Unix(int64(s), 0).UTC() }
	series := func(vs ...float64) []sample {
		out := make([]sample, len(vs))
		for i, v := range vs {
			out[i] = sample{at(i), v}
		}
		return out
	}
	for _, tt := range []struct {
		name     string
		th       envconfig.Threshold
		s        [][]sample
		held     bool
		value    float64
		hasValue bool
	}{
		{"all under max", envconfig.Threshold{Max: &max}, [][]sample{series(0.01, 0.05, 0.02)}, true, 0.05, true},
		{"one over max", envconfig.Threshold{Max: &max}, [][]sample{series(0.01, 0.02), series(0.01, 0.08, 0.01)}, false, 0.08, true},
		{"min held", envconfig.Threshold{Min: &min}, [][]sample{series(1, 2, 3)}, true, 1, true},
		{"min broken", envconfig.Threshold{Min: &min}, [][]sample{series(1, 0, 3)}, false, 0, true},
		{"NaN fails", envconfig.Threshold{Max: &max}, [][]sample{series(0.01, math.NaN(), 0.9)}, false, math.NaN(), true},
		{"no samples", envconfig.Threshold{Max: &max}, nil, false, 0, false},
		{"empty series", envconfig.Threshold{Max: &max}, [][]sample{{}}, false, 0, false},
	} {
		var r Result
		judge(&r, tt.th, tt.s)
		sameValue := r.Value == tt.value || math.IsNaN(r.Value) && math.IsNaN(tt.value)
		if r.Held != tt.held || r.HasValue != tt.hasValue || !sameValue {
			t.Errorf("%s: judge = held %v value %g (has %v), want held %v value %g (has %v)", tt.name, r.Held, r.Value, r.HasValue, tt.held, tt.value, tt.hasValue)
		}
		if !tt.hasValue && r.Problem == "" {
			t.Errorf("%s: no samples but no problem said", tt.name)
		}
	}
}

func durationOf(d time.Duration) metav1.Duration { return metav1.Duration{Duration: d} }
