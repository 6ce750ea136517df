package helmrender

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// A chart's values.schema.json may refer ($ref) to other schemas. Helm's
// validator follows such a reference anywhere: to http(s):// (a popular
// library chart's schema refers to its own files on GitHub, so `helm
// template` fetches them) and to file://. Here a reference is followed
// only to a JSON document of the chart itself, already in memory: by its
// path ("schemas/a.json" beside the schema, "mem:///charts/common/..."),
// or by the $id a vendored schema declares (a chart that refers to its
// library's schema by URL finds the vendored copy, and that copy's
// relative references find its folder). Nothing is ever read from a file
// or the network. A reference to anything else is dropped, so the values
// are checked against every other part of the schema, and the render
// warns that those parts are not checked.

// memScheme is the scheme of the URL a chart file's schema is known by.
const memScheme = "mem:///"

// maxSchemaDocs caps the documents one chart's schemas refer to.
const maxSchemaDocs = 256

// refKeywords are the schema keywords that load another schema.
var refKeywords = []string{"$ref", "$dynamicRef", "$recursiveRef"}

// schemaDocs are the JSON documents of a chart and its subcharts, the
// only ones its schemas may refer to.
type schemaDocs struct {
	// files are the chart's JSON files by path in the chart folder
	// ("values.schema.json", "charts/common/values.schema.json").
	files map[string][]byte
	// ids maps an absolute $id a file declares to its path; built on
	// first need.
	ids map[string]string
	// dropped are the references not followed, by the file they are in.
	dropped map[string]map[string]bool
	loads   int
}

func newSchemaDocs(ch *chart.Chart) *schemaDocs {
	d := &schemaDocs{files: map[string][]byte{}, dropped: map[string]map[string]bool{}}
	var walk func(prefix string, c *chart.Chart)
	walk = func(prefix string, c *chart.Chart) {
		if len(c.Schema) > 0 {
			d.files[prefix+"values.schema.json"] = c.Schema
		}
		for _, f := range c.Files {
			if f != nil && strings.HasSuffix(f.Name, ".json") {
				d.files[prefix+f.Name] = f.Data
			}
		}
		for _, sub := range c.Dependencies() {
			walk(prefix+"charts/"+sub.Name()+"/", sub)
		}
	}
	walk("", ch)
	return d
}

// idIndex maps every absolute $id the chart's JSON files declare at their
// top to the file.
func (d *schemaDocs) idIndex() map[string]string {
	if d.ids != nil {
		return d.ids
	}
	d.ids = map[string]string{}
	names := make([]string, 0, len(d.files))
	for n := range d.files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var top struct {
			ID string `json:"$id"`
		}
		if json.Unmarshal(d.files[n], &top) != nil || top.ID == "" {
			continue
		}
		u, err := url.Parse(top.ID)
		if err != nil || !u.IsAbs() {
			continue
		}
		u.Fragment = ""
		if _, dup := d.ids[u.String()]; !dup {
			d.ids[u.String()] = n
		}
	}
	return d.ids
}

// find returns the chart file a document URL (no fragment) names: a
// mem:/// path, a file's $id, or a path relative to the folder of a
// file's $id.
func (d *schemaDocs) find(doc string) (string, bool) {
	if p, ok := strings.CutPrefix(doc, memScheme); ok {
		_, found := d.files[p]
		return p, found
	}
	ids := d.idIndex()
	if p, ok := ids[doc]; ok {
		return p, true
	}
	for id, p := range ids {
		dir := id[:strings.LastIndex(id, "/")+1]
		rest, ok := strings.CutPrefix(doc, dir)
		if !ok || rest == "" {
			continue
		}
		cand := path.Join(path.Dir(p), rest)
		if strings.HasPrefix(cand, "../") || cand == ".." {
			continue
		}
		if _, found := d.files[cand]; found {
			return cand, true
		}
	}
	return "", false
}

// Load is the validator's loader: it serves the chart's own documents,
// with the references they hold that lead elsewhere dropped, and
// refuses every other URL.
func (d *schemaDocs) Load(u string) (any, error) {
	p, ok := d.find(u)
	if !ok {
		return nil, fmt.Errorf("schemas are not loaded from anywhere (%s)", u)
	}
	if d.loads++; d.loads > maxSchemaDocs {
		return nil, fmt.Errorf("the schemas refer to more than %d documents", maxSchemaDocs)
	}
	return d.decode(p, u)
}

// decode parses the chart file p, known by the URL u, and drops the
// references in it that lead out of the chart.
func (d *schemaDocs) decode(p, u string) (any, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(d.files[p]))
	if err != nil {
		return nil, fmt.Errorf("%s does not parse as JSON: %w", p, err)
	}
	base, _ := url.Parse(u)
	d.dropRefs(p, base, doc)
	return doc, nil
}

// dropRefs removes from v every reference that does not lead to a
// document of the chart (or within the document itself), recording it
// against file. base is the URL relative references resolve against.
func (d *schemaDocs) dropRefs(file string, base *url.URL, v any) {
	switch x := v.(type) {
	case map[string]any:
		if id, ok := x["$id"].(string); ok {
			if u, err := base.Parse(id); err == nil {
				u.Fragment = ""
				base = u
			}
		}
		for _, kw := range refKeywords {
			ref, ok := x[kw].(string)
			if !ok {
				continue
			}
			if !d.followed(base, ref) {
				delete(x, kw)
				if d.dropped[file] == nil {
					d.dropped[file] = map[string]bool{}
				}
				d.dropped[file][refDoc(base, ref)] = true
			}
		}
		for k, c := range x {
			if k == "enum" || k == "const" || k == "default" || k == "examples" {
				continue // values, not schemas
			}
			d.dropRefs(file, base, c)
		}
	case []any:
		for _, c := range x {
			d.dropRefs(file, base, c)
		}
	}
}

// followed reports whether the reference ref, at base, leads to the
// document itself or to a document of the chart.
func (d *schemaDocs) followed(base *url.URL, ref string) bool {
	r, err := url.Parse(ref)
	if err != nil {
		return false
	}
	if r.Scheme == "" && r.Host == "" && r.Path == "" {
		return true // "#..." within this document
	}
	u := base.ResolveReference(r)
	u.Fragment = ""
	if b := *base; b.Fragment == "" && u.String() == b.String() {
		return true
	}
	_, ok := d.find(u.String())
	return ok
}

// refDoc is the document a reference names, for a warning.
func refDoc(base *url.URL, ref string) string {
	r, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	u := base.ResolveReference(r)
	u.Fragment = ""
	return strings.TrimPrefix(u.String(), memScheme)
}

// warnings tell, per file, the references dropped.
func (d *schemaDocs) warnings(name string) []string {
	var out []string
	for file, refs := range d.dropped {
		list := make([]string, 0, len(refs))
		for r := range refs {
			list = append(list, r)
		}
		sort.Strings(list)
		out = append(out, fmt.Sprintf("chart %s: %s refers to %d schema(s) outside the chart (%s): the values are not checked against them (deploy-web never fetches a schema; vendor them into the chart to check them)",
			name, file, len(list), listSome(list, 3)))
	}
	sort.Strings(out)
	return out
}

// validateSchemas validates the values of ch against its
// values.schema.json, and each enabled subchart's values against its own,
// as Helm does, following references only within the chart. It returns
// the warnings of references not followed.
func validateSchemas(name string, ch *chart.Chart, values map[string]any) ([]string, error) {
	docs := newSchemaDocs(ch)
	if err := validateChartSchemas(name, "", ch, values, docs); err != nil {
		return nil, err
	}
	return docs.warnings(name), nil
}

func validateChartSchemas(name, prefix string, ch *chart.Chart, values map[string]any, docs *schemaDocs) error {
	if len(ch.Schema) > 0 {
		if err := validateSchema(name, prefix+"values.schema.json", values, docs); err != nil {
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
		if err := validateChartSchemas(name, prefix+"charts/"+sub.Name()+"/", sub, sv, docs); err != nil {
			return err
		}
	}
	return nil
}

func validateSchema(name, file string, values map[string]any, docs *schemaDocs) error {
	bad := func(reason, hint string) error { return &Error{Chart: name, File: file, Reason: reason, Hint: hint} }
	at := memScheme + file
	doc, err := docs.decode(file, at)
	if err != nil {
		return bad("does not parse as JSON: "+errors.Unwrap(err).Error(), "fix the schema")
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(docs)
	if err := c.AddResource(at, doc); err != nil {
		return bad("does not compile: "+err.Error(), "fix the schema")
	}
	s, err := c.Compile(at)
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
		msg := err.Error()
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			// The first line names the schema's URL; the causes follow.
			msg = ve.Error()
			if first, rest, ok := strings.Cut(msg, "\n"); ok && strings.HasPrefix(first, "jsonschema validation failed") {
				msg = rest
			}
			msg = strings.TrimSpace(msg)
		}
		return bad("the values do not meet the chart's schema: "+msg, "fix the values files")
	}
	return nil
}
