package scope

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		sel, name string
		want      bool
	}{
		{"prod", "prod", true},
		{"prod", "Prod", false},
		{"prod", "prod2", false},
		{"prod", "", false},
		{"", "", false},
		{"", "prod", false},
		{"*", "anything", true},
		{"*", "", false},
		{"prod-*", "prod-eu", true},
		{"prod-*", "prod-", true},
		{"prod-*", "prod", false},
		{"*-canary", "web-canary", true},
		{"*-canary", "web-canary-2", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"**", "x", true},
		{"a*a*a*a*a*b", strings.Repeat("a", 250), false},
		{"web?", "web?", true}, // not special in Match; ValidSelector refuses it in files
	}
	for _, tt := range tests {
		if got := Match(tt.sel, tt.name); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.sel, tt.name, got, tt.want)
		}
	}
}

func TestValidSelector(t *testing.T) {
	tests := []struct {
		sel     string
		wantErr string
	}{
		{"prod", ""},
		{"prod-*", ""},
		{"*", ""},
		{"", "empty selector"},
		{strings.Repeat("a", MaxSelectorBytes+1), "at most 253"},
		{"a b", "space"},
		{"a\x00b", "control"},
		{"web?", "only '*'"},
		{"web[12]", "only '*'"},
		{`web\*`, "only '*'"},
		{"dev,prod", "comma"},
		{"\xff", "UTF-8"},
		{"pro\u202ed", `selector "pro\u202ed" has a format character (U+202E)`},
		{"ad\u200bmin", "format character (U+200B)"},
	}
	for _, tt := range tests {
		err := ValidSelector(tt.sel)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("ValidSelector(%q) = %v, want nil", tt.sel, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("ValidSelector(%q) = %v, want an error containing %q", tt.sel, err, tt.wantErr)
		}
	}
}

func TestScopeValidateNamesPath(t *testing.T) {
	s := Scope{Apps: []string{"web", ""}}
	err := s.Validate("bindings[3].scope")
	if err == nil || !strings.HasPrefix(err.Error(), "bindings[3].scope.apps[1]: empty selector") {
		t.Errorf("Validate = %v, want bindings[3].scope.apps[1]: empty selector...", err)
	}
	many := Scope{Namespaces: make([]string, MaxSelectors+1)}
	if err := many.Validate("scope"); err == nil || !strings.Contains(err.Error(), "scope.namespaces: 101 selectors") {
		t.Errorf("Validate(101 namespaces) = %v, want scope.namespaces: 101 selectors", err)
	}
}

func TestCoversAndTouches(t *testing.T) {
	prodWeb := Scope{Environments: []string{"prod"}, Apps: []string{"web-*"}}
	tests := []struct {
		name          string
		s             Scope
		t             Target
		covers, touch bool
	}{
		{"zero scope, zero target", Scope{}, Target{}, true, true},
		{"zero scope, any target", Scope{}, Target{Cluster: "a", App: "x"}, true, true},
		{"inside", prodWeb, Target{Environment: "prod", App: "web-1"}, true, true},
		{"other env", prodWeb, Target{Environment: "dev", App: "web-1"}, false, false},
		{"other app", prodWeb, Target{Environment: "prod", App: "api"}, false, false},
		{"app unknown", prodWeb, Target{Environment: "prod"}, false, true},
		{"nothing known", prodWeb, Target{}, false, true},
		{"env unknown, other app", prodWeb, Target{App: "api"}, false, false},
		{"unrestricted field ignored", prodWeb, Target{Environment: "prod", App: "web-1", Cluster: "x", Namespace: "y"}, true, true},
		{"second selector", Scope{Clusters: []string{"a", "b"}}, Target{Cluster: "b"}, true, true},
	}
	for _, tt := range tests {
		if got := tt.s.Covers(tt.t); got != tt.covers {
			t.Errorf("%s: (%v).Covers(%v) = %v, want %v", tt.name, tt.s, tt.t, got, tt.covers)
		}
		if got := tt.s.Touches(tt.t); got != tt.touch {
			t.Errorf("%s: (%v).Touches(%v) = %v, want %v", tt.name, tt.s, tt.t, got, tt.touch)
		}
	}
}

func TestStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{Target{}.String(), "anywhere"},
		{Target{Cluster: "a", App: "web"}.String(), "cluster=a app=web"},
		{Scope{}.String(), "everywhere"},
		{Scope{Environments: []string{"prod", "staging"}, Apps: []string{"web-*"}}.String(), "env=prod,staging app=web-*"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("String() = %q, want %q", tt.got, tt.want)
		}
	}
}
