package helmrender

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// schemaURL is the name a chart's schema is compiled under: a name only,
// nothing is ever loaded from it.
const schemaURL = "mem:///values.schema.json"

// refKeywords are the schema keywords that load another schema.
var refKeywords = []string{"$ref", "$dynamicRef", "$recursiveRef"}

// noLoader refuses to load any schema: the validator never reads a file
// or opens a connection (Helm's follows $ref to file:// and http(s)://).
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schemas are not loaded from anywhere (%s)", url)
}

// validateSchemas validates the values of ch (at prefix) against its
// values.schema.json, and each enabled subchart's values against its own,
// as Helm does; a schema with any $ref is refused.
func validateSchemas(name, prefix string, ch *chart.Chart, values map[string]any) error {
	if len(ch.Schema) > 0 {
		if err := validateSchema(name, prefix+"values.schema.json", ch.Schema, values); err != nil {
			return err
		}
	}
	for _, sub := range ch.Dependencies() {
		raw, ok := values[sub.Name()]
		if !ok || raw == nil {
			continue
		}
		sv, ok := raw.(map[string]any)
		if !ok {
			return &Error{Chart: name, File: prefix + "values.yaml", Reason: fmt.Sprintf("the values of subchart %s are a %T, not a map", sub.Name(), raw), Hint: "fix the values files"}
		}
		if err := validateSchemas(name, prefix+"charts/"+sub.Name()+"/", sub, sv); err != nil {
			return err
		}
	}
	return nil
}

func validateSchema(name, file string, schema []byte, values map[string]any) error {
	bad := func(reason, hint string) error { return &Error{Chart: name, File: file, Reason: reason, Hint: hint} }
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return bad("does not parse as JSON: "+err.Error(), "fix the schema")
	}
	if kw, where := findRef(doc, "#"); kw != "" {
		return bad(fmt.Sprintf("%s at %s: a schema that refers to another is not followed (it could be read from a file or the network)", kw, where),
			"inline the referenced schema into values.schema.json, or remove the schema")
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return bad("does not compile: "+err.Error(), "fix the schema")
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return bad("does not compile: "+err.Error(), "fix the schema (only the JSON Schema drafts built into deploy-web are known)")
	}
	// Through JSON, so the values have the types the validator knows.
	b, err := json.Marshal(values)
	if err != nil {
		return bad("values do not encode: "+err.Error(), "")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return bad("values do not encode: "+err.Error(), "")
	}
	if err := s.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		msg := err.Error()
		if errors.As(err, &ve) {
			msg = strings.TrimSpace(strings.TrimPrefix(ve.Error(), "jsonschema validation failed with '"+schemaURL+"#'"))
		}
		return bad("the values do not meet the chart's schema: "+msg, "fix the values files")
	}
	return nil
}

// findRef returns the first reference keyword in a decoded schema and
// where it is (a JSON pointer), "" when there is none.
func findRef(v any, at string) (string, string) {
	switch x := v.(type) {
	case map[string]any:
		for _, kw := range refKeywords {
			if _, ok := x[kw]; ok {
				return kw, at
			}
		}
		for k, c := range x {
			if kw, where := findRef(c, at+"/"+k); kw != "" {
				return kw, where
			}
		}
	case []any:
		for i, c := range x {
			if kw, where := findRef(c, fmt.Sprintf("%s/%d", at, i)); kw != "" {
				return kw, where
			}
		}
	}
	return "", ""
}
