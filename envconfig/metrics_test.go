package envconfig

import (
	"strings"
	"testing"
)

// metricsConfig is dev (with metrics m, "" for none) and staging after
// dev with the promotion keys extra.
func metricsConfig(m, extra string) string {
	s := promotionConfig("dev")
	if m != "" {
		s += "    metrics: " + m + "\n"
	}
	return s + strings.TrimPrefix(promotionConfig("staging"), "environments:\n") +
		"    promotion: {after: dev" + extra + "}\n"
}

// TestParseConfigChecks: metrics and promotion.checks parse strictly,
// with bounded counts and lengths and one threshold form.
func TestParseConfigChecks(t *testing.T) {
	ok := `{url: "https://prom.example:9090/prom", tokenEnv: DEPLOY_WEB_METRICS_TOKEN_DEV}`
	check := `, checks: [{name: error-rate, query: 'sum(rate(e{app="{{app}}"}[5m]))', threshold: {max: 0.05}, for: 10m}]`
	many := ", checks: ["
	for i := 0; i <= MaxChecks; i++ {
		many += `{name: c` + strings.Repeat("x", i) + `, query: up, threshold: {min: 1}},`
	}
	many += "]"
	tests := []struct {
		name, yaml string
		want       []string // substrings of the error; none: valid
	}{
		{"valid", metricsConfig(ok, check), nil},
		{"loopback http", metricsConfig(`{url: "http://127.0.0.1:9090"}`, check), nil},
		{"min", metricsConfig(ok, `, checks: [{name: up, query: up, threshold: {min: 1}}]`), nil},
		{"plain http off loopback", metricsConfig(`{url: "http://prom.example"}`, check), []string{`environments[0] (dev).metrics.url: scheme "http"`}},
		{"userinfo", metricsConfig(`{url: "https://u:p@prom.example"}`, check), []string{"metrics.url: has userinfo"}},
		{"query in url", metricsConfig(`{url: "https://prom.example/?x=1"}`, check), []string{"metrics.url: has a query"}},
		{"bad host", metricsConfig(`{url: "https://prom_example"}`, check), []string{"metrics.url:", "not a valid host name"}},
		{"token env", metricsConfig(`{url: "https://prom.example", tokenEnv: DEPLOY_WEB_OIDC_CLIENT_SECRET}`, check), []string{"metrics.tokenEnv"}},
		{"source without metrics", metricsConfig("", check), []string{"(staging).promotion.checks: the checks run against dev's metrics"}},
		{"unknown check key", metricsConfig(ok, `, checks: [{name: a, query: up, threshold: {max: 1}, window: 5m}]`), []string{"checks[0] (a).window: unknown key"}},
		{"unknown threshold key", metricsConfig(ok, `, checks: [{name: a, query: up, threshold: {below: 1}}]`), []string{"threshold.below: unknown key"}},
		{"two bounds", metricsConfig(ok, `, checks: [{name: a, query: up, threshold: {max: 1, min: 0}}]`), []string{"checks[0].threshold: set exactly one"}},
		{"no bound", metricsConfig(ok, `, checks: [{name: a, query: up}]`), []string{"checks[0].threshold: set exactly one"}},
		{"threshold text", metricsConfig(ok, `, checks: [{name: a, query: up, threshold: {max: "5%"}}]`), []string{"checks[0] (a).threshold.max: want a number"}},
		{"dup name", metricsConfig(ok, `, checks: [{name: a, query: up, threshold: {max: 1}}, {name: a, query: up, threshold: {max: 1}}]`), []string{`checks[1].name: "a" is used twice`}},
		{"bad name", metricsConfig(ok, `, checks: [{name: "A b", query: up, threshold: {max: 1}}]`), []string{"checks[0].name"}},
		{"no query", metricsConfig(ok, `, checks: [{name: a, threshold: {max: 1}}]`), []string{"checks[0].query: required"}},
		{"long query", metricsConfig(ok, `, checks: [{name: a, query: "`+strings.Repeat("u", MaxCheckQueryBytes+1)+`", threshold: {max: 1}}]`), []string{"checks[0].query: longer than"}},
		{"bare placeholder", metricsConfig(ok, `, checks: [{name: a, query: 'up{app={{app}}}', threshold: {max: 1}}]`), []string{"{{app}} outside a string literal"}},
		{"placeholder in metric name", metricsConfig(ok, `, checks: [{name: a, query: '{{app}}_errors', threshold: {max: 1}}]`), []string{"outside a string literal"}},
		{"placeholder in backticks", metricsConfig(ok, "', checks: [{name: a, query: 'up{app=`{{app}}`}', threshold: {max: 1}}]"[1:]), []string{"outside a string literal"}},
		{"unknown placeholder", metricsConfig(ok, `, checks: [{name: a, query: 'up{a="{{secret}}"}', threshold: {max: 1}}]`), []string{"unknown placeholder {{secret}}"}},
		{"unterminated", metricsConfig(ok, `, checks: [{name: a, query: 'up{a="x}', threshold: {max: 1}}]`), []string{"unterminated string"}},
		{"comment", metricsConfig(ok, `, checks: [{name: a, query: "up # x", threshold: {max: 1}}]`), []string{"a # comment"}},
		{"window too long", metricsConfig(ok, `, checks: [{name: a, query: up, threshold: {max: 1}, for: 200h}]`), []string{"checks[0].for:"}},
		{"too many", metricsConfig(ok, many), []string{"promotion.checks: 17 checks: at most 16"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.yaml), t.TempDir())
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("ParseConfig = %v, want valid\n%s", err, tt.yaml)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseConfig = nil, want %q\n%s", tt.want, tt.yaml)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParseConfig error:\n%v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

// TestThresholdHolds: max and min are inclusive bounds; NaN never holds.
func TestThresholdHolds(t *testing.T) {
	five := 0.05
	max, min := Threshold{Max: &five}, Threshold{Min: &five}
	nan := 0.0
	nan = nan / nan
	for _, tt := range []struct {
		th   Threshold
		v    float64
		want bool
	}{
		{max, 0.05, true}, {max, 0.0501, false}, {max, -1, true}, {max, nan, false},
		{min, 0.05, true}, {min, 0.049, false}, {min, 3, true}, {min, nan, false},
		{Threshold{}, 0, false},
	} {
		if got := tt.th.Holds(tt.v); got != tt.want {
			t.Errorf("%s .Holds(%g) = %v, want %v", tt.th, tt.v, got, tt.want)
		}
	}
}
