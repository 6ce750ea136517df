package envconfig

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/internal/hostlist"
	"github.com/hanzoai/deploy-web/internal/loopback"
)

// Metrics is an environment's `metrics:`: the Prometheus-compatible HTTP
// API its promotion checks are evaluated against (package promcheck).
type Metrics struct {
	// URL is the API's base (https://prom.example, or /prefix under it):
	// https, plain http only to a loopback host; its host follows the
	// registry hosts' rule (hostlist.Check), no userinfo, query or
	// fragment. Requests go to that host only: redirects are refused.
	URL string `json:"url"`
	// TokenEnv names a variable (MetricsTokenEnvPrefix...) holding a
	// bearer token sent to URL; "" sends none.
	TokenEnv string `json:"tokenEnv"`
}

// Check is one promotion check: Query, with its placeholders filled in
// (promcheck.Render), must hold Threshold at every sample over For (or
// since the version went live in the source, when later).
type Check struct {
	// Name names the check in gate messages: a DNS label.
	Name string `json:"name"`
	// Query is PromQL; {{app}}, {{namespace}}, {{environment}} and
	// {{version}} may appear only inside a string literal ("..." or
	// '...'), where they are replaced by the value escaped for it.
	Query string `json:"query"`
	// Threshold is the bound every sample must hold.
	Threshold Threshold `json:"threshold"`
	// For is the window (at most MaxCheckWindow; default
	// DefaultCheckWindow).
	For metav1.Duration `json:"for"`
}

// Threshold is `{max: N}` (every sample <= N) or `{min: N}` (every sample
// >= N); exactly one is set. NaN and infinities are refused.
type Threshold struct {
	Max *float64 `json:"max,omitempty"`
	Min *float64 `json:"min,omitempty"`
}

// Holds reports whether v holds the threshold; NaN never does.
func (t Threshold) Holds(v float64) bool {
	switch {
	case math.IsNaN(v):
		return false
	case t.Max != nil:
		return v <= *t.Max
	case t.Min != nil:
		return v >= *t.Min
	}
	return false
}

// String is the threshold as a gate says it ("<= 0.05").
func (t Threshold) String() string {
	switch {
	case t.Max != nil:
		return fmt.Sprintf("<= %g", *t.Max)
	case t.Min != nil:
		return fmt.Sprintf(">= %g", *t.Min)
	}
	return "(none)"
}

// Bounds of promotion checks.
const (
	MaxChecks          = 16
	MaxCheckQueryBytes = 4096
	MaxCheckWindow     = 7 * 24 * time.Hour
	DefaultCheckWindow = 10 * time.Minute
	// MetricsTokenEnvPrefix starts the name of every variable
	// metrics.tokenEnv may name, so a config cannot send another of
	// deploy-web's variables to a metrics host.
	MetricsTokenEnvPrefix = "DEPLOY_WEB_METRICS_TOKEN"
)

var metricsTokenEnvRE = regexp.MustCompile(`^` + MetricsTokenEnvPrefix + `(_[A-Z0-9]+)*$`)

// ForOrDefault is For, or DefaultCheckWindow when unset.
func (c Check) ForOrDefault() time.Duration { return orDefault(c.For, DefaultCheckWindow) }

// CheckMetricsURL says what is wrong with a metrics.url.
func CheckMetricsURL(raw string) error {
	if raw == "" {
		return errors.New("required: the Prometheus API's https:// URL")
	}
	if len(raw) > MaxURLLength {
		return fmt.Errorf("longer than %d bytes", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %v", errors.Unwrap(err))
	}
	switch {
	case u.Scheme != "https" && !(u.Scheme == "http" && loopback.Host(u.Hostname())):
		return fmt.Errorf("scheme %q: use https:// (plain http:// only to localhost)", u.Scheme)
	case u.User != nil:
		return errors.New("has userinfo: put the token in metrics.tokenEnv")
	case u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(raw, "?#"):
		return errors.New("has a query or fragment: give the API's base URL")
	}
	if err := hostlist.Check(u.Host); err != nil {
		return err
	}
	return nil
}

// validateMetrics checks e's metrics and promotion.checks.
func (e *Environment) validateMetrics(p string, bad func(field, format string, a ...any)) {
	if m := e.Metrics; m != nil {
		if err := CheckMetricsURL(m.URL); err != nil {
			bad(p+".metrics.url", "%v", err)
		}
		if m.TokenEnv != "" && !metricsTokenEnvRE.MatchString(m.TokenEnv) {
			bad(p+".metrics.tokenEnv", "%q: name a variable %s or %s_<NAME> (upper-case letters, digits, '_')", m.TokenEnv, MetricsTokenEnvPrefix, MetricsTokenEnvPrefix)
		}
	}
	if e.Promotion == nil || len(e.Promotion.Checks) == 0 {
		return
	}
	cs := e.Promotion.Checks
	if len(cs) > MaxChecks {
		bad(p+".promotion.checks", "%d checks: at most %d", len(cs), MaxChecks)
	}
	names := map[string]bool{}
	for k, c := range cs {
		f := fmt.Sprintf("%s.promotion.checks[%d]", p, k)
		switch {
		case c.Name == "":
			bad(f+".name", "required")
		case !envNameRE.MatchString(c.Name):
			bad(f+".name", "%q must be lower-case letters, digits and '-'", c.Name)
		case names[c.Name]:
			bad(f+".name", "%q is used twice", c.Name)
		}
		names[c.Name] = true
		switch {
		case strings.TrimSpace(c.Query) == "":
			bad(f+".query", "required (PromQL)")
		case len(c.Query) > MaxCheckQueryBytes:
			bad(f+".query", "longer than %d bytes", MaxCheckQueryBytes)
		default:
			if err := checkQueryPlaceholders(c.Query); err != nil {
				bad(f+".query", "%v", err)
			}
		}
		t := c.Threshold
		switch {
		case (t.Max == nil) == (t.Min == nil):
			bad(f+".threshold", "set exactly one of max (every sample <= it) or min (every sample >= it)")
		case t.Max != nil && (math.IsNaN(*t.Max) || math.IsInf(*t.Max, 0)), t.Min != nil && (math.IsNaN(*t.Min) || math.IsInf(*t.Min, 0)):
			bad(f+".threshold", "must be a finite number")
		}
		if d := c.For.Duration; d < 0 || d > MaxCheckWindow {
			bad(f+".for", "%s must be between 0 (the default %s) and %s", d, DefaultCheckWindow, MaxCheckWindow)
		}
	}
}

// validateCheckSources: an environment with promotion.checks is promoted
// from a source whose metrics the checks are evaluated against, so the
// source must have metrics.
func (c *Config) validateCheckSources(bad func(field, format string, a ...any)) {
	for i, e := range c.Environments {
		if e.Promotion == nil || len(e.Promotion.Checks) == 0 {
			continue
		}
		src, err := c.Env(e.Promotion.After)
		if err != nil {
			continue // promotion.after's own mistake
		}
		if src.Metrics == nil {
			bad(fmt.Sprintf("environments[%d] (%s).promotion.checks", i, e.Name), "the checks run against %s's metrics: give %s a metrics: {url}", src.Name, src.Name)
		}
	}
}

// Placeholders are the names a check's query may use as {{name}}.
var Placeholders = []string{"app", "namespace", "environment", "version"}

// checkQueryPlaceholders refuses a query with a {{...}} outside a string
// literal, an unknown placeholder, or an unterminated string.
func checkQueryPlaceholders(q string) error {
	return ScanQuery(q, func(name string, lit Literal) error {
		if lit.Quote == 0 {
			return fmt.Errorf("{{%s}} outside a string literal: write it inside quotes (app=\"{{%s}}\"), where its value is escaped", name, name)
		}
		for _, p := range Placeholders {
			if p == name {
				return nil
			}
		}
		return fmt.Errorf("unknown placeholder {{%s}} (have: {{%s}})", name, strings.Join(Placeholders, "}}, {{"))
	}, nil)
}

// Literal is where a placeholder stands: Quote is the string literal's
// quote (a double or single quote; 0 outside a "..." or '...' literal) and Regex says
// the literal follows =~ or !~ (a regular expression's text).
type Literal struct {
	Quote byte
	Regex bool
}

// ScanQuery walks PromQL q: for every {{name}} it calls ph with the
// literal it stands in; text, when not nil, receives every other piece of
// q, in order. Backtick strings hold no placeholders (they have no
// escapes: a placeholder in one is refused as outside a string). An
// unterminated string or a # comment is an error. The one scanner of
// promcheck.Render and the config's check.
func ScanQuery(q string, ph func(name string, lit Literal) error, text func(s string)) error {
	emit := func(s string) {
		if text != nil && s != "" {
			text(s)
		}
	}
	var lit Literal // Quote: 0 outside a string; '"', '\'' or '`' inside one
	start := 0
	for i := 0; i < len(q); {
		c := q[i]
		if c == '{' && strings.HasPrefix(q[i:], "{{") {
			end := strings.Index(q[i+2:], "}}")
			if end < 0 {
				return errors.New("a {{ without }}")
			}
			emit(q[start:i])
			at := lit
			if at.Quote == '`' {
				at = Literal{}
			}
			if err := ph(strings.TrimSpace(q[i+2:i+2+end]), at); err != nil {
				return err
			}
			i += 2 + end + 2
			start = i
			continue
		}
		switch {
		case lit.Quote == 0 && (c == '"' || c == '\'' || c == '`'):
			before := strings.TrimRight(q[:i], " \t\r\n")
			lit = Literal{Quote: c, Regex: strings.HasSuffix(before, "=~") || strings.HasSuffix(before, "!~")}
		case lit.Quote != 0 && lit.Quote != '`' && c == '\\':
			i += 2
			continue
		case lit.Quote != 0 && c == lit.Quote:
			lit = Literal{}
		case lit.Quote == 0 && c == '#':
			return errors.New("a # comment: drop it (a comment could hide the rest of the query)")
		}
		i++
	}
	if lit.Quote != 0 {
		return errors.New("an unterminated string literal")
	}
	emit(q[start:])
	return nil
}
