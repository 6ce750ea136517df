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

	"github.com/hanzoai/deploy-web/internal/textfmt"
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

// maxSchemaDocs caps the documents one chart's schemas refer to, and
// maxSchemaBytes their bytes together (each is decoded and kept).
const (
	maxSchemaDocs  = 256
	maxSchemaBytes = 8 << 20
)

// maxSchemaMessage caps the text of a refusal by the schema.
const maxSchemaMessage = 4096

// refKeywords are the schema keywords that load another schema.
var refKeywords = []string{"$ref", "$dynamicRef", "$recursiveRef"}

// schemaDocs are the JSON documents of a chart and its subcharts, the
// only ones its schemas may refer to.
type schemaDocs struct {
	// files are the chart's JSON files by path in the chart folder
	// ("values.schema.json", "charts/common/values.schema.json").
	files map[string][]byte
	// ids maps an absolute $id a file declares to the files declaring
	// it, in path order; built on first need.
	ids map[string][]string
	// idOrder are the keys of ids, longest first: the order find tries
	// their folders in.
	idOrder []string
	// dropped are the references not followed, by the file they are in.
	dropped map[string]map[string]bool
	// dynamic are the files whose $dynamicRef or $recursiveRef were
	// dropped.
	dynamic map[string]bool
	loads   int
	bytes   int64
}

func newSchemaDocs(ch *chart.Chart) *schemaDocs {
	d := &schemaDocs{files: map[string][]byte{}, dropped: map[string]map[string]bool{}, dynamic: map[string]bool{}}
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
// top to the files, in path order.
func (d *schemaDocs) idIndex() map[string][]string {
	if d.ids != nil {
		return d.ids
	}
	d.ids = map[string][]string{}
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
		if _, seen := d.ids[u.String()]; !seen {
			d.idOrder = append(d.idOrder, u.String())
		}
		d.ids[u.String()] = append(d.ids[u.String()], n)
	}
	// Longest first, then in order: one answer for one question.
	sort.Slice(d.idOrder, func(i, j int) bool {
		a, b := d.idOrder[i], d.idOrder[j]
		if len(a) != len(b) {
			return len(a) > len(b)
		}
		return a < b
	})
	return d.ids
}

// chartOf is the chart folder prefix of a file of the chart ("" for the
// chart's own, "charts/common/" for a subchart's).
func chartOf(file string) string {
	prefix := ""
	for {
		rest, ok := strings.CutPrefix(file[len(prefix):], "charts/")
		if !ok {
			return prefix
		}
		name, _, ok := strings.Cut(rest, "/")
		if !ok {
			return prefix
		}
		prefix += "charts/" + name + "/"
	}
}

// nearest is the candidate file closest to the file from, which refers to
// it: in from's own chart first, then the chart sharing the longest folder
// prefix with it; ties go to the first in path order. A subchart cannot
// shadow its parent's documents for the parent's own references.
func nearest(from string, cands []string) string {
	own := chartOf(from)
	best, bestLen := "", -1
	for _, c := range cands {
		l := 0
		if strings.HasPrefix(c, own) && chartOf(c) == own {
			l = len(own) + 1<<20
		} else {
			for l < len(c) && l < len(own) && c[l] == own[l] {
				l++
			}
		}
		if l > bestLen {
			best, bestLen = c, l
		}
	}
	return best
}

// find returns the chart file a document URL (no fragment) names, for a
// reference made in the file from: a mem:/// path, a file's $id, or a path
// relative to the folder of a file's $id (the longest such folder).
func (d *schemaDocs) find(doc, from string) (string, bool) {
	if p, ok := strings.CutPrefix(doc, memScheme); ok {
		_, found := d.files[p]
		return p, found
	}
	ids := d.idIndex()
	if ps, ok := ids[doc]; ok {
		return nearest(from, ps), true
	}
	for _, id := range d.idOrder {
		dir := id[:strings.LastIndex(id, "/")+1]
		rest, ok := strings.CutPrefix(doc, dir)
		if !ok || rest == "" {
			continue
		}
		var cands []string
		for _, p := range ids[id] {
			cand := path.Join(path.Dir(p), rest)
			if strings.HasPrefix(cand, "../") || cand == ".." {
				continue
			}
			if _, found := d.files[cand]; found {
				cands = append(cands, cand)
			}
		}
		if len(cands) > 0 {
			return nearest(from, cands), true
		}
	}
	return "", false
}

// schemaLoader serves one compiler: the chart's own documents, each under one
// URL, with the references they hold that lead elsewhere dropped; it
// refuses every other URL.
type schemaLoader struct {
	d *schemaDocs
	// from is the file whose schema is compiled (references resolve
	// nearest to it); served are the files given out, by URL.
	from   string
	served map[string]string
}

func (l *schemaLoader) Load(u string) (any, error) {
	p, ok := l.d.find(u, l.from)
	if !ok {
		return nil, fmt.Errorf("schemas are not loaded from anywhere (%s)", u)
	}
	for other, q := range l.served {
		if q == p && other != u {
			return nil, fmt.Errorf("%s is referred to as %s and as %s: refer to one document by one URL", p, other, u)
		}
	}
	l.served[u] = p
	return l.d.decode(p, u)
}

// decode parses the chart file p, known by the URL u, and drops the
// references in it that lead out of the chart.
func (d *schemaDocs) decode(p, u string) (any, error) {
	if d.loads++; d.loads > maxSchemaDocs {
		return nil, fmt.Errorf("the schemas refer to more than %d documents", maxSchemaDocs)
	}
	if d.bytes += int64(len(d.files[p])); d.bytes > maxSchemaBytes {
		return nil, fmt.Errorf("the schemas refer to more than %d bytes of documents", maxSchemaBytes)
	}
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
	d.dropRefsIn(file, base, v, false)
}

// namedSchemas are the keywords whose value maps names to schemas: a
// name there ("enum", "default") is a property's, not a keyword.
var namedSchemas = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true, "dependencies": true}

// dropRefsIn is dropRefs of v, a schema, or (names true) a map of names to
// schemas.
func (d *schemaDocs) dropRefsIn(file string, base *url.URL, v any, names bool) {
	switch x := v.(type) {
	case map[string]any:
		if names {
			for _, c := range x {
				d.dropRefsIn(file, base, c, false)
			}
			return
		}
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
			if kw != "$ref" {
				// Resolved at validation to the outermost matching anchor
				// in scope, which the cost bound cannot foresee: never
				// followed (Helm charts hardly use them).
				delete(x, kw)
				d.dynamic[file] = true
				continue
			}
			if !d.followed(file, base, ref) {
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
			d.dropRefsIn(file, base, c, namedSchemas[k])
		}
	case []any:
		for _, c := range x {
			d.dropRefsIn(file, base, c, false)
		}
	}
}

// followed reports whether the reference ref, at base, leads to the
// document itself or to a document of the chart.
func (d *schemaDocs) followed(file string, base *url.URL, ref string) bool {
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
	_, ok := d.find(u.String(), file)
	return ok
}

// refDoc is the document a reference names, for a warning: one line,
// no format characters, at most 120 bytes (the chart is hostile).
func refDoc(base *url.URL, ref string) string {
	r, err := url.Parse(ref)
	if err != nil {
		return textfmt.Cut(textfmt.Clean(ref, false), 120)
	}
	u := base.ResolveReference(r)
	u.Fragment = ""
	return textfmt.Cut(textfmt.Clean(strings.TrimPrefix(u.String(), memScheme), false), 120)
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
	for file := range d.dynamic {
		out = append(out, fmt.Sprintf("chart %s: %s uses $dynamicRef or $recursiveRef, which are not followed here: the values are not checked against what they refer to", name, file))
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
		if inner := errors.Unwrap(err); inner != nil {
			return bad("does not parse as JSON: "+inner.Error(), "fix the schema")
		}
		return bad(err.Error(), "refer to fewer or smaller schemas")
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(&schemaLoader{d: docs, from: file, served: map[string]string{at: file}})
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
	if n := schemaCost(s, v); n > maxSchemaApplications {
		return bad(costError(), "simplify the schema's references")
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
		return bad("the values do not meet the chart's schema: "+textfmt.Cut(msg, maxSchemaMessage), "fix the values files")
	}
	return nil
}
