package strictyaml

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type testItem struct {
	Name     string `json:"name"`
	On       bool   `json:"on"`
	TokenEnv string `json:"tokenEnv,omitempty"`
}

type testInner struct {
	Count int `json:"count"`
}

type Embedded struct {
	Extra string `json:"extra"`
}

type testDoc struct {
	Items   []testItem        `json:"items"`
	Labels  map[string]string `json:"labels"`
	Timeout metav1.Duration   `json:"timeout"`
	Inner   *testInner        `json:"inner"`
	Ratio   float64           `json:"ratio"`
	Small   int8              `json:"small"`
	Free    any               `json:"free"`
	Skipped string            `json:"-"`
	Embedded
}

func TestUnmarshal(t *testing.T) {
	good := `
items:
  - {name: a, on: true, tokenEnv: T}
  - name: b
labels: {A: x, a: y, "": z}
timeout: 90s
inner: {count: 3}
ratio: 1.5
small: -7
free: {k: [1, two, true, null]}
extra: e
`
	want := testDoc{
		Items:    []testItem{{Name: "a", On: true, TokenEnv: "T"}, {Name: "b"}},
		Labels:   map[string]string{"A": "x", "a": "y", "": "z"},
		Timeout:  metav1.Duration{Duration: 90 * time.Second},
		Inner:    &testInner{Count: 3},
		Ratio:    1.5,
		Small:    -7,
		Free:     map[string]any{"k": []any{float64(1), "two", true, nil}},
		Embedded: Embedded{Extra: "e"},
	}
	var got testDoc
	if err := Unmarshal([]byte(good), &got, Options{}); err != nil {
		t.Fatalf("Unmarshal(good) = %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Unmarshal(good) (-want +got):\n%s", diff)
	}
	// A string field takes any scalar as written (a version stays 1.10).
	var s struct {
		V string `json:"v"`
	}
	if err := Unmarshal([]byte("v: 1.10\n"), &s, Options{}); err != nil || s.V != "1.10" {
		t.Errorf("Unmarshal(v: 1.10) = %q, %v; want \"1.10\"", s.V, err)
	}
	// An empty document leaves the value as it is.
	keep := testDoc{Ratio: 2}
	if err := Unmarshal(nil, &keep, Options{}); err != nil || keep.Ratio != 2 {
		t.Errorf("Unmarshal(empty) = %v, %v; want no change", keep.Ratio, err)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		opts Options
		want []Error // each error, in order; Message is a substring
	}{
		{"upper case key then the right one (the PROTECTED exploit)", "items:\n  - name: a\n    ON: true\n    on: false\n", Options{}, []Error{
			{Line: 3, Path: "items[0] (a).ON", Message: `unknown key: keys are case-sensitive, did you mean "on"?`},
			{Line: 4, Path: "items[0] (a).on", Message: `"ON" on line 3 is the same key in another spelling: keys are case-sensitive, write "on" once`},
		}},
		{"title case key alone", "items: [{name: a, On: true}]\n", Options{}, []Error{
			{Line: 1, Path: "items[0] (a).On", Message: `did you mean "on"?`},
		}},
		{"lower case camel key", "items: [{tokenenv: X}]\n", Options{}, []Error{
			{Line: 1, Path: "items[0].tokenenv", Message: `keys are case-sensitive, did you mean "tokenEnv"?`},
		}},
		{"snake case key", "items: [{token_env: X}]\n", Options{}, []Error{
			{Line: 1, Path: "items[0].token_env", Message: `did you mean "tokenEnv"?`},
		}},
		{"a key written twice", "ratio: 1\nextra: a\nratio: 2\n", Options{}, []Error{
			{Line: 3, Path: "ratio", Message: "written twice (also on line 1): keep one"},
		}},
		{"a map key written twice", "labels:\n  a: x\n  a: y\n", Options{}, []Error{
			{Line: 3, Path: "labels.a", Message: "written twice (also on line 2)"},
		}},
		{"a free-form key written twice", "free: {a: 1, a: 2}\n", Options{}, []Error{
			{Line: 1, Path: "free.a", Message: "written twice"},
		}},
		{"a misspelt key", "items:\n  - name: a\n  - nmae: b\n", Options{}, []Error{
			{Line: 3, Path: "items[1].nmae", Message: `unknown key: did you mean "name"?`},
		}},
		{"an unknown key far from any", "inner: {count: 1, zebra: 2}\n", Options{}, []Error{
			{Line: 1, Path: "inner.zebra", Message: "unknown key (the keys here: count)"},
		}},
		{"a json:\"-\" field is no key", "Skipped: x\n", Options{}, []Error{
			{Line: 1, Path: "Skipped", Message: "unknown key"},
		}},
		{"an anchor and an alias", "extra: &e x\nitems: [{name: *e}]\n", Options{}, []Error{
			{Line: 1, Path: "extra", Message: "anchors (&name) and aliases (*name) are not allowed"},
			{Line: 2, Path: "items[0].name", Message: "anchors (&name) and aliases (*name) are not allowed"},
		}},
		{"a merge key", "inner:\n  <<: {count: 1}\n", Options{}, []Error{
			{Line: 2, Path: "inner", Message: "merge keys (<<) are not allowed"},
		}},
		{"yes is no bool", "items: [{on: yes}]\n", Options{}, []Error{
			{Line: 1, Path: "items[0].on", Message: `want true or false, got a string ("yes")`},
		}},
		{"a long value is cut in the message", "items: [{on: " + strings.Repeat("é", 30) + "}]\n", Options{}, []Error{
			{Line: 1, Path: "items[0].on", Message: `want true or false, got a string ("` + strings.Repeat("é", 20) + `...")`},
		}},
		{"a quoted bool", "items: [{on: \"true\"}]\n", Options{}, []Error{
			{Line: 1, Path: "items[0].on", Message: "want true or false"},
		}},
		{"a fraction for a whole number", "inner: {count: 1.5}\n", Options{}, []Error{
			{Line: 1, Path: "inner.count", Message: "want a whole number, got a number (1.5)"},
		}},
		{"out of range", "small: 300\n", Options{}, []Error{
			{Line: 1, Path: "small", Message: "300 is out of range"},
		}},
		{"a bad duration", "timeout: soon\n", Options{}, []Error{
			{Line: 1, Path: "timeout", Message: `invalid duration "soon"`},
		}},
		{"a list for a mapping", "inner: [1]\n", Options{}, []Error{
			{Line: 1, Path: "inner", Message: "want a mapping, got a list"},
		}},
		{"a mapping for a string", "extra: {a: b}\n", Options{}, []Error{
			{Line: 1, Path: "extra", Message: "want a string, got a mapping"},
		}},
		{"a custom tag", "extra: !secret x\n", Options{}, []Error{
			{Line: 1, Path: "extra", Message: "the tag !secret is not allowed"},
		}},
		{"two documents", "extra: a\n---\nextra: b\n", Options{}, []Error{
			{Line: 2, Message: "a second YAML document"},
		}},
		{"not YAML", "extra: [\n", Options{}, []Error{
			{Message: "invalid YAML"},
		}},
		{"the root named", "- {name: eu, on: 1}\n", Options{Root: "clusters"}, []Error{
			{Line: 1, Path: "clusters[0] (eu).on", Message: "want true or false"},
		}},
		{"a hostile name does not label the path", "items: [{name: \"a) (b\", On: true}]\n", Options{}, []Error{
			{Line: 1, Path: "items[0].On", Message: "did you mean"},
		}},
		{"over the node budget", "items: [{name: a}, {name: b}, {name: c}]\n", Options{MaxNodes: 6}, []Error{
			{Line: 1, Path: "items[1] (b)", Message: "more than 6 nodes"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc testDoc
			if tt.name == "the root named" {
				err := Unmarshal([]byte(tt.doc), &[]testItem{}, tt.opts)
				checkErrors(t, err, tt.want)
				return
			}
			checkErrors(t, Unmarshal([]byte(tt.doc), &doc, tt.opts), tt.want)
		})
	}
}

// checkErrors checks err is an Errors of exactly want (Message a
// substring; Column not compared).
func checkErrors(t *testing.T, err error, want []Error) {
	t.Helper()
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("error = %v (%T), want Errors", err, err)
	}
	if len(es) != len(want) {
		t.Fatalf("error = %v\nwant %d errors: %+v", err, len(want), want)
	}
	for i, w := range want {
		g := es[i]
		if g.Line != w.Line || g.Path != w.Path || !strings.Contains(g.Message, w.Message) {
			t.Errorf("error %d = line %d, path %q, %q\nwant line %d, path %q, containing %q", i, g.Line, g.Path, g.Message, w.Line, w.Path, w.Message)
		}
	}
	var one *Error
	if !errors.As(err, &one) || one != es[0] {
		t.Errorf("errors.As(err, *Error) does not find the first error")
	}
}

func TestUnmarshalJSON(t *testing.T) {
	var got testDoc
	doc := "{\n\t\"items\": [{\"name\": \"a\", \"on\": true}],\n\t\"ratio\": 2e0, \"small\": 3, \"timeout\": \"1m\", \"free\": {\"n\": null}}"
	if err := UnmarshalJSON([]byte(doc), &got, Options{}); err != nil {
		t.Fatalf("UnmarshalJSON(good) = %v", err)
	}
	want := testDoc{Items: []testItem{{Name: "a", On: true}}, Ratio: 2, Small: 3, Timeout: metav1.Duration{Duration: time.Minute}, Free: map[string]any{"n": nil}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("UnmarshalJSON(good) (-want +got):\n%s", diff)
	}

	tests := []struct {
		name string
		doc  string
		opts Options
		want []Error
	}{
		{"a key written twice", `{"extra": "a",` + "\n" + ` "extra": "b"}`, Options{}, []Error{
			{Line: 2, Path: "extra", Message: "written twice (also on line 1)"},
		}},
		{"another spelling", `{"items": [{"name": "a", "ON": true, "on": false}]}`, Options{Root: "catalog"}, []Error{
			{Line: 1, Path: "catalog.items[0] (a).ON", Message: `did you mean "on"?`},
			{Line: 1, Path: "catalog.items[0] (a).on", Message: "the same key in another spelling"},
		}},
		{"a number for a string", `{"extra": 12}`, Options{}, []Error{
			{Line: 1, Path: "extra", Message: "want a string, got a number (12): quote it"},
		}},
		{"a line of a JSON Lines file", `{"nmae": "x"}`, Options{LineOffset: 41}, []Error{
			{Line: 42, Path: "nmae", Message: "unknown key"},
		}},
		{"a syntax error", "{\"extra\": \"a\",\n \"x\" 1}", Options{}, []Error{
			{Line: 2, Message: "invalid JSON"},
		}},
		{"cut short", `{"items": [`, Options{}, []Error{
			{Line: 1, Message: "invalid JSON"},
		}},
		{"two values", `{} {}`, Options{}, []Error{
			{Line: 1, Message: "more than one JSON value"},
		}},
		{"over the node budget", `{"free": [` + strings.Repeat("0,", 100) + `0]}`, Options{MaxNodes: 50}, []Error{
			{Line: 1, Message: "more than 50 nodes"},
		}},
		{"nested too deep", strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), Options{}, []Error{
			{Line: 1, Message: "nested more than 1000 deep"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc testDoc
			checkErrors(t, UnmarshalJSON([]byte(tt.doc), &doc, tt.opts), tt.want)
		})
	}
}

// TestUnmarshalJSONBudgetBeforeTree: a document far over the budget is
// refused after reading the budget's worth of tokens, not after building
// its tree.
func TestUnmarshalJSONBudgetBeforeTree(t *testing.T) {
	doc := []byte(`{"free": [` + strings.Repeat("[],", 1<<20) + `[]]}`)
	var d testDoc
	allocs := testing.AllocsPerRun(1, func() {
		if err := UnmarshalJSON(doc, &d, Options{MaxNodes: 1000}); err == nil {
			t.Fatal("UnmarshalJSON(over budget) = nil")
		}
	})
	// A node is a few allocations; a built tree would be millions.
	if allocs > 50000 {
		t.Errorf("UnmarshalJSON(over budget) allocated %v times, want the budget's worth", allocs)
	}
}

func TestKeyPaths(t *testing.T) {
	got := KeyPaths(reflect.TypeFor[testDoc]())
	want := [][]string{
		{"items"}, {"items", "[]", "name"}, {"items", "[]", "on"}, {"items", "[]", "tokenEnv"},
		{"labels"}, {"timeout"}, {"inner"}, {"inner", "count"}, {"ratio"}, {"small"}, {"free"}, {"extra"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("KeyPaths(testDoc) (-want +got):\n%s", diff)
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"namespace", "namespace", 0},
		{"namesapce", "namespace", 1},
		{"nmespace", "namespace", 1},
		{"catalgo", "catalog", 1},
		{"zebra", "count", 5},
		{"thirdparties", "thirdparty", 3},
		{"", "ab", 2},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestErrorsPublic: the public text of a document's mistakes is their
// lines, paths and messages, one a line; the cause of a gap of this
// package is in Error (for the log), never in Public.
func TestErrorsPublic(t *testing.T) {
	es := Errors{
		{Line: 3, Column: 2, Path: "environments[0].name", Message: "required"},
		{Path: "doc", Message: "strictyaml: the checked document does not decode", Err: errors.New("json: secret detail")},
	}
	want := "line 3: environments[0].name: required\ndoc: strictyaml: the checked document does not decode"
	if got := es.Public(); got != want {
		t.Errorf("Errors.Public() = %q, want %q", got, want)
	}
	if got := es.Error(); got != want+": json: secret detail" {
		t.Errorf("Errors.Error() = %q, want the public text and the cause", got)
	}
}
