package helmrender

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// renderSchema renders the webapp chart with a schema, extra files and
// values, and returns the error and the warnings.
func renderSchema(t *testing.T, schema string, files map[string]string, values map[string]any) (*Result, error) {
	t.Helper()
	f := readChart(t, "webapp")
	f["values.schema.json"] = []byte(schema)
	for n, d := range files {
		f[n] = []byte(d)
	}
	return Render(context.Background(), Request{Chart: "c", Files: f, ReleaseName: "r", Namespace: "dev", Values: values})
}

// TestSchemaCostBounded: a schema whose references branch and meet again,
// or recurse with the values, would keep the validator busy for hours (it
// takes no context); it is refused before validating, at once.
func TestSchemaCostBounded(t *testing.T) {
	noExec(t)
	// 40 levels of anyOf over two references to the next level: 2^40
	// applications (18 levels took 15 s and 535 MB before the bound).
	var defs []string
	for i := 0; i < 40; i++ {
		defs = append(defs, fmt.Sprintf(`"a%d": {"anyOf": [{"$ref": "#/$defs/a%d"}, {"$ref": "#/$defs/a%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, `"a40": {"type": "string"}`)
	dag := `{"$defs": {` + strings.Join(defs, ", ") + `}, "properties": {"x": {"$ref": "#/$defs/a0"}}}`
	// A reference back to the root under a property: 2^depth for values
	// nested depth deep.
	rec := `{"properties": {"n": {"anyOf": [{"$ref": "#"}, {"$ref": "#"}]}}}`
	nested := map[string]any{}
	cur := nested
	for i := 0; i < 40; i++ {
		next := map[string]any{}
		cur["n"] = next
		cur = next
	}
	// An enum of 300,000 entries: each application compares them all.
	huge := `{"properties": {"x": {"items": {"enum": [` + strings.Repeat("0,", 300_000) + `0]}}}}`
	for _, tt := range []struct {
		name   string
		schema string
		values map[string]any
	}{
		{"branching references", dag, map[string]any{"x": 1}},
		{"recursion with the values", rec, nested},
		{"an enum as long as the bound", huge, map[string]any{"x": []any{1}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := renderSchema(t, tt.schema, nil, tt.values)
			var he *Error
			if !errors.As(err, &he) || he.File != "values.schema.json" || !strings.Contains(he.Reason, "more than 200000 times") {
				t.Fatalf("Render = %v, want the schema refused for its cost", err)
			}
			t.Logf("refused in %s", time.Since(start))
		})
	}
	// A legitimate recursive schema (a tree of nodes) with values a few
	// levels deep still validates, and still refuses a bad value.
	tree := `{"$defs": {"node": {"type": "object", "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}, "properties": {"tree": {"$ref": "#/$defs/node"}}}`
	deep := map[string]any{"name": "a", "children": []any{map[string]any{"name": "b", "children": []any{map[string]any{"name": "c"}}}}}
	if _, err := renderSchema(t, tree, nil, map[string]any{"tree": deep}); err != nil {
		t.Errorf("Render(a recursive schema) = %v", err)
	}
	deep["children"].([]any)[0].(map[string]any)["name"] = 5
	if _, err := renderSchema(t, tree, nil, map[string]any{"tree": deep}); err == nil || !strings.Contains(err.Error(), "/tree/children/0/name") {
		t.Errorf("Render(a bad value deep in a recursive schema) = %v, want the refusal naming it", err)
	}
}

// TestSchemaDocumentsBounded: one file is served under one URL (many $id
// folders aliasing one big file multiplied its memory), and the
// documents decoded for a chart are capped in bytes.
func TestSchemaDocumentsBounded(t *testing.T) {
	noExec(t)
	files := map[string]string{"schemas/big.json": `{"type": "object"}`}
	var refs []string
	for k := 0; k < 3; k++ {
		files[fmt.Sprintf("schemas/d%d.json", k)] = fmt.Sprintf(`{"$id": "https://h.example/d%d/s.json"}`, k)
		refs = append(refs, fmt.Sprintf(`"p%d": {"$ref": "https://h.example/d%d/big.json"}`, k, k))
	}
	_, err := renderSchema(t, `{"properties": {`+strings.Join(refs, ", ")+`}}`, files, nil)
	if err == nil || !strings.Contains(err.Error(), "refer to one document by one URL") {
		t.Errorf("Render(one file under three URLs) = %v, want a refusal", err)
	}
	big := `{"type": "object"}` + strings.Repeat(" ", maxSchemaBytes)
	_, err = renderSchema(t, `{"properties": {"p": {"$ref": "schemas/big.json"}}}`, map[string]string{"schemas/big.json": big}, nil)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d bytes", maxSchemaBytes)) {
		t.Errorf("Render(a schema over %d bytes) = %v, want a refusal", maxSchemaBytes, err)
	}
}

// TestSchemaIDNearest: a subchart's file claiming the $id of its parent's
// document does not replace it for the parent's own references.
func TestSchemaIDNearest(t *testing.T) {
	noExec(t)
	files := map[string]string{
		"schemas/defs.json":                   `{"$id": "https://example.com/app/defs.json", "type": "string"}`,
		"charts/sub/Chart.yaml":               "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
		"charts/sub/schemas/x.json":           `{"$id": "https://example.com/app/defs.json"}`,
		"charts/sub/templates/_helpers.tpl":   "",
		"charts/sub/templates/configmap.yaml": "",
	}
	schema := `{"$id": "https://example.com/app/values.schema.json", "properties": {"x": {"$ref": "defs.json"}}}`
	for i := 0; i < 5; i++ { // map order must not decide
		_, err := renderSchema(t, schema, files, map[string]any{"x": 1})
		if err == nil || !strings.Contains(err.Error(), "/x") {
			t.Fatalf("Render(x: 1 against the parent's string definition) = %v, want a refusal (the subchart's claim must not win)", err)
		}
	}
}

// TestSchemaWarningIsClean: a dropped reference is one line without
// format or control characters, cut.
func TestSchemaWarningIsClean(t *testing.T) {
	noExec(t)
	res, err := renderSchema(t, `{"properties": {"a": {"$ref": "urn:\u202egnp.exe\nwarning: all clear\u001b[2J`+strings.Repeat("x", 500)+`"}}}`, nil, nil)
	if err != nil {
		t.Fatalf("Render = %v", err)
	}
	var w string
	for _, l := range res.Warnings {
		if strings.Contains(l, "refers to") {
			w = l
		}
	}
	if !strings.Contains(w, "gnp.exe") {
		t.Fatalf("warnings = %q, want the dropped reference", res.Warnings)
	}
	if strings.ContainsAny(w, "\u202e\n\u001b") || len(w) > 600 {
		t.Errorf("warning = %q: want one clean line, the reference cut", w)
	}
}

// TestRandomThroughSharedValues: a template whose own output is not
// applied but that puts a random value into .Values is warned (the
// value reaches the objects of another); a chart test that only draws
// random names is not; hostile object names are cleaned in warnings.
func TestRandomThroughSharedValues(t *testing.T) {
	noExec(t)
	files := chartWith(map[string]string{
		"gen/x.yaml":   `{{- $_ := set .Values "pw" (randAlphaNum 16) -}}`,
		"secret.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {pw: {{ .Values.pw | quote }}}\n",
		"tests/t.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: \"t-{{ randAlphaNum 5 | lower }}\"\n  annotations: {helm.sh/hook: test}\nspec: {containers: [{name: t, image: busybox}]}\n",
		"hook.yaml":    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: \"evil\\u202e\\nwarning: ok\"\n  annotations: {helm.sh/hook: pre-delete}\nspec: {template: {spec: {containers: [{name: t, image: busybox}], restartPolicy: Never}}}\n",
	})
	res, err := Render(context.Background(), Request{Chart: "c", Files: files, ReleaseName: "r", Namespace: "dev"})
	if err != nil {
		t.Fatalf("Render = %v", err)
	}
	if !containsLine(res.Warnings, "templates/gen/x.yaml calls randAlphaNum") {
		t.Errorf("warnings = %q, want the template that set a random value warned", res.Warnings)
	}
	if containsLine(res.Warnings, "templates/tests/t.yaml calls randAlphaNum") {
		t.Errorf("warnings = %q: the chart test's random name changes nothing applied", res.Warnings)
	}
	for _, w := range res.Warnings {
		if strings.ContainsAny(w, "\u202e\n") {
			t.Errorf("warning %q carries a format or control character", w)
		}
	}
	if !containsLine(res.Warnings, "evil", "pre-delete") {
		t.Errorf("warnings = %q, want the delete hook left out", res.Warnings)
	}
}

// TestSchemaDynamicRefsNotFollowed: $dynamicRef resolves at validation to
// the outermost matching $dynamicAnchor in scope, which the cost bound
// cannot foresee (a heavy chain reached that way ran 3 s at 18 levels);
// it is dropped with a warning and the render stays cheap.
func TestSchemaDynamicRefsNotFollowed(t *testing.T) {
	noExec(t)
	var defs []string
	for i := 0; i < 40; i++ {
		defs = append(defs, fmt.Sprintf(`"a%d": {"anyOf": [{"$ref": "#/$defs/a%d"}, {"$ref": "#/$defs/a%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, `"a40": false`, `"heavy": {"$dynamicAnchor": "n", "$ref": "#/$defs/a0"}`)
	root := `{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://x.example/root.json", "$ref": "inner.json", "$defs": {` + strings.Join(defs, ", ") + `}}`
	inner := `{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://x.example/inner.json", "$dynamicRef": "#n", "$defs": {"light": {"$dynamicAnchor": "n"}}}`
	res, err := renderSchema(t, root, map[string]string{"schemas/inner.json": inner}, map[string]any{"x": 1})
	if err != nil {
		t.Fatalf("Render = %v", err)
	}
	if !containsLine(res.Warnings, "schemas/inner.json uses $dynamicRef", "not checked") {
		t.Errorf("warnings = %q, want the dynamic reference told", res.Warnings)
	}
}
