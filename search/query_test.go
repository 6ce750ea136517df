package search

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Query
	}{
		{"web", Query{Words: []string{"web"}}},
		{"  Web   CFG ", Query{Words: []string{"web", "cfg"}}},
		{"kind:ConfigMap", Query{Kinds: []string{"ConfigMap"}}},
		{"KIND:pod kind:Job", Query{Kinds: []string{"pod", "Job"}}},
		{"name:web-", Query{Names: []Glob{{Pattern: "web-"}}}},
		{"name:Web-*-cfg", Query{Names: []Glob{{Pattern: "web-*-cfg", glob: true}}}},
		{"name:web-?", Query{Names: []Glob{{Pattern: "web-?"}}}}, // no '?' wildcard: a prefix
		{"ns:Shop cluster:EU-1", Query{Namespaces: []string{"shop"}, Clusters: []string{"eu-1"}}},
		{"label:tier=web", Query{Labels: []Label{{Key: "tier", Value: "web", HasValue: true}}}},
		{"label:tier", Query{Labels: []Label{{Key: "tier"}}}},
		{"label:tier=", Query{Labels: []Label{{Key: "tier", HasValue: true}}}},
		{"label:app.kubernetes.io/name=a=b", Query{Labels: []Label{{Key: "app.kubernetes.io/name", Value: "a=b", HasValue: true}}}},
		{"image:NGINX:1.25", Query{Images: []string{"nginx:1.25"}}},
		{"kind:Deployment web image:r/x", Query{Kinds: []string{"Deployment"}, Words: []string{"web"}, Images: []string{"r/x"}}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q) = %v", tc.in, err)
			}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(Glob{}), cmpopts.IgnoreFields(Query{}, "digest"), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tc.in, d)
			}
		})
	}
}

// TestParseRefuses: hostile and malformed queries are refused with a
// public *Error that never echoes the input beyond a bounded field name.
func TestParseRefuses(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", "type a name"},
		{"blank", " \t ", "type a name"},
		{"too long", strings.Repeat("a", MaxQueryLen+1), "longer than 256"},
		{"too many terms", strings.Repeat("a ", MaxTerms+1), "at most 8 terms"},
		{"unknown field", "owner:bob", "owner: is not a search term"},
		{"long unknown field", strings.Repeat("x", 100) + ":y", strings.Repeat("x", 20) + "…: is not"},
		{"script field", "<script>:x", "<script>: is not a search term"},
		{"empty value", "kind:", "kind: needs a value"},
		{"label without key", "label:=x", "label: needs a key"},
		{"control character", "web\x00", "control or format character"},
		{"escape", "web\x1b[31m", "control or format character"},
		{"bidi override", "web\u202ecfg", "control or format character"},
		{"invalid utf-8", "web\xff", "not valid UTF-8"},
		{"too many stars", "name:*a*b*c*d*", "at most 4 '*'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.in)
			if !IsError(err) {
				t.Fatalf("Parse(%q) = %v, want a *search.Error", tc.in, err)
			}
			if !strings.Contains(err.(*Error).Public, tc.want) {
				t.Errorf("Parse(%q) = %q, want it to contain %q", tc.in, err.(*Error).Public, tc.want)
			}
			if len(err.(*Error).Public) > 200 {
				t.Errorf("Parse(%q): public text of %d bytes, want a bounded message", tc.in, len(err.(*Error).Public))
			}
		})
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"web", "web-cfg", true}, // a prefix
		{"web", "my-web", false},
		{"", "anything", true},
		{"web-*", "web-cfg", true},
		{"web-*", "web-", true},
		{"web-*", "web", false},
		{"*-cfg", "web-cfg", true},
		{"*-cfg", "web-cfg-2", false}, // a glob matches the whole name
		{"w?b", "web", false},         // '?' is a byte, not a wildcard
		{"*", "x", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbY", false},
		{"a*a*a*a*b", strings.Repeat("a", 253), false}, // backtracking stays linear per star
		{"*.*", "a.b", true},
		{"[a-z]*", "abc", false}, // no character classes: '[' is a byte
		{"[a-z]*", "[a-z]x", true},
	}
	for _, tc := range tests {
		g, err := ParseGlob(tc.pattern)
		if err != nil {
			t.Fatalf("ParseGlob(%q) = %v", tc.pattern, err)
		}
		if got := g.Match(tc.name); got != tc.want {
			t.Errorf("ParseGlob(%q).Match(%q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

// TestMatch: each term against objects, alternatives within a field and
// all fields together.
func TestMatch(t *testing.T) {
	cm := Object{Kind: "ConfigMap", Name: "web-cfg", Labels: map[string]string{"tier": "web", "team": "shop"}}
	dep := Object{Group: "apps", Kind: "Deployment", Name: "web", Images: []string{"Registry.test/Web:1.2.0", "sidecar:3"}}
	pod := Object{Kind: "Pod", Name: "web-5d8f-abcde", Images: []string{"registry.test/web:1.1.0"}}
	objs := map[string]Object{"cm": cm, "dep": dep, "pod": pod}
	tests := []struct {
		q    string
		want []string // keys of objs that match, sorted
	}{
		{"web", []string{"cm", "dep", "pod"}},
		{"cfg", []string{"cm"}},
		{"web cfg", []string{"cm"}},
		{"kind:configmap", []string{"cm"}},
		{"kind:ConfigMap kind:Pod", []string{"cm", "pod"}},
		{"name:web", []string{"cm", "dep", "pod"}},
		{"name:web-*", []string{"cm", "pod"}},
		{"name:web", []string{"cm", "dep", "pod"}},
		{"name:*cfg", []string{"cm"}},
		{"label:tier=web", []string{"cm"}},
		{"label:tier=db", nil},
		{"label:team", []string{"cm"}},
		{"label:tier=web label:tier=db", []string{"cm"}},
		{"image:web:1.2", []string{"dep"}},
		{"image:sidecar", []string{"dep"}},
		{"image:registry.test/web", []string{"dep", "pod"}},
		{"kind:Pod image:1.2", nil},
		{"kind:Deployment name:web", []string{"dep"}},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			q, err := Parse(tc.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, k := range []string{"cm", "dep", "pod"} {
				o := objs[k]
				if q.Match(&o) {
					got = append(got, k)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%q matches (-want +got):\n%s", tc.q, d)
			}
		})
	}
}

func TestMatchApp(t *testing.T) {
	tests := []struct {
		q, cluster, ns string
		want           bool
	}{
		{"web", "eu-1", "shop", true},
		{"ns:shop", "eu-1", "shop", true},
		{"ns:shop", "eu-1", "pay", false},
		{"cluster:eu-1", "eu-1", "shop", true},
		{"cluster:eu-1 cluster:us-1", "us-1", "shop", true},
		{"cluster:eu-1", "us-1", "shop", false},
		{"cluster:eu-1 ns:pay", "eu-1", "shop", false},
	}
	for _, tc := range tests {
		q, err := Parse(tc.q)
		if err != nil {
			t.Fatal(err)
		}
		if got := q.MatchApp(tc.cluster, tc.ns); got != tc.want {
			t.Errorf("Parse(%q).MatchApp(%q, %q) = %v, want %v", tc.q, tc.cluster, tc.ns, got, tc.want)
		}
	}
}
