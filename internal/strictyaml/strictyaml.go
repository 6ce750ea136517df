// Package strictyaml decodes configuration files exactly. A document (YAML
// with Unmarshal, JSON with UnmarshalJSON) is read into a yaml.Node tree
// first and walked against the Go type it is decoded into, by the type's
// json tags:
//
//   - a key matches a field only with the tag's exact spelling
//     (encoding/json, and so sigs.k8s.io/yaml, match keys regardless of
//     letter case, so `PROTECTED: true` then `protected: false` decoded as
//     false, and `Protected: true` alone as true);
//   - a key written twice is an error, and so is a near-duplicate, the
//     same key up to letter case, '-' and '_' (`protected` and
//     `Protected`, `tokenEnv` and `tokenenv`);
//   - an unknown key is an error, with "did you mean" when a field is close;
//   - a scalar must have the field's type (`protected: "yes"` is not a
//     bool);
//   - anchors, aliases and merge keys are refused (a config never needs
//     them, and an alias is how a small file expands to a huge one), and
//     the number of nodes is capped (Options.MaxNodes);
//
// and only then decoded with encoding/json, so a type with its own
// UnmarshalJSON (metav1.Duration) keeps its rules. Every mistake is an
// *Error naming its line and its path, `environments[1] (prod).protected`
// (a list element that has a "name" key is labelled with it); all of them
// are returned at once, as Errors. Keys of a Go map are free-form (only
// exact duplicates are refused).
package strictyaml

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// DefaultMaxNodes is the node budget when Options.MaxNodes is zero: far
// above any real config or catalog (a catalog of 10,000 services is about
// 120,000 nodes), far below what would strain memory.
const DefaultMaxNodes = 1 << 20

// maxDepth bounds the nesting of a JSON document (yaml.v3 bounds YAML's).
const maxDepth = 1000

// Options says how a document is named and bounded.
type Options struct {
	// Root names the document itself in paths: "" leaves it out (a root
	// mapping's keys start the path: "environments[1].name"); "clusters"
	// names a root list's elements "clusters[1]", "catalog" prefixes
	// every path "catalog.services[2].tag".
	Root string
	// LineOffset is added to every line reported (a line of a JSON Lines
	// file: its line number minus one).
	LineOffset int
	// MaxNodes caps the nodes of the document (0: DefaultMaxNodes).
	MaxNodes int
}

// Error is one mistake of a document.
type Error struct {
	// Line and Column are 1-based; 0 when the mistake has no place (the
	// document cannot be parsed at all).
	Line, Column int
	// Path names the value at fault, "environments[1] (prod).protected";
	// "" for the document as a whole.
	Path string
	// Message says what is wrong and what to write instead, in this
	// package's words (or, for a document that does not parse, the
	// parser's words about its syntax): text a user may read.
	Message string
	// Err is the cause of a mistake that is this package's own gap, not
	// the document's: for the log, never in Public.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Public() + ": " + e.Err.Error()
	}
	return e.Public()
}

// Public is the mistake as a user may read it: its line, path and
// Message.
func (e *Error) Public() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Errors are every mistake of a document, in the order of the document.
type Errors []*Error

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Public is every mistake as a user may read it, one a line.
func (es Errors) Public() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Public()
	}
	return strings.Join(s, "\n")
}

// Unwrap lets errors.As find each *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Unmarshal decodes one YAML document into v, a non-nil pointer, by the
// rules of the package comment. An empty document leaves v as it is. The
// error is an Errors.
func Unmarshal(data []byte, v any, opts Options) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return decode(nil, v, opts, false)
		}
		return Errors{{Path: opts.Root, Message: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if err != nil {
			line = 0
		}
		return Errors{{Line: offset(line, opts), Path: opts.Root, Message: "a second YAML document (---): the file holds one document"}}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	return decode(root, v, opts, false)
}

// UnmarshalJSON decodes one JSON value into v, a non-nil pointer, by the
// rules of the package comment; a string field takes only a JSON string.
// The document is read token by token under the node budget, before any
// tree is built past it. The error is an Errors.
func UnmarshalJSON(data []byte, v any, opts Options) error {
	root, err := parseJSON(data, opts)
	if err != nil {
		return err
	}
	return decode(root, v, opts, true)
}

func offset(line int, opts Options) int {
	if line == 0 {
		return 0
	}
	return line + opts.LineOffset
}

func decode(root *yaml.Node, v any, opts Options, jsonTypes bool) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return Errors{{Message: fmt.Sprintf("strictyaml: decode into %T: want a non-nil pointer", v)}}
	}
	if root == nil {
		return nil
	}
	w := &walker{opts: opts, jsonTypes: jsonTypes, budget: opts.MaxNodes}
	if w.budget <= 0 {
		w.budget = DefaultMaxNodes
	}
	val, ok := w.value(root, rv.Type().Elem(), opts.Root)
	if !ok {
		sort.SliceStable(w.errs, func(i, j int) bool {
			a, b := w.errs[i], w.errs[j]
			return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
		})
		return w.errs
	}
	b, err := json.Marshal(val)
	if err != nil {
		return Errors{{Path: opts.Root, Message: "strictyaml: the checked document does not encode", Err: err}}
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		// The walk checked every key and scalar, so this is a gap of the
		// walker, reported rather than hidden.
		return Errors{{Path: opts.Root, Message: "strictyaml: the checked document does not decode", Err: err}}
	}
	return nil
}

type walker struct {
	opts       Options
	jsonTypes  bool
	budget     int
	overBudget bool
	errs       Errors
}

func (w *walker) fail(n *yaml.Node, path, format string, a ...any) {
	e := &Error{Path: path, Message: fmt.Sprintf(format, a...)}
	if n != nil {
		e.Line, e.Column = offset(n.Line, w.opts), n.Column
	}
	w.errs = append(w.errs, e)
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// kindName is how a node's kind reads in a message.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	switch n.ShortTag() {
	case "!!null":
		return "null"
	case "!!bool":
		return "a bool (" + n.Value + ")"
	case "!!int", "!!float":
		return "a number (" + n.Value + ")"
	}
	return fmt.Sprintf("a string (%q)", shorten(n.Value))
}

// shorten cuts a value quoted in a message to 40 bytes (at a rune
// boundary), so a mistake never echoes a whole file.
func shorten(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

// value checks n against t and returns it as a JSON value (nil: null);
// ok is false when n or anything under it is wrong (the mistakes are in
// w.errs).
func (w *walker) value(n *yaml.Node, t reflect.Type, path string) (any, bool) {
	if w.overBudget {
		return nil, false
	}
	if w.budget--; w.budget < 0 {
		w.overBudget = true
		w.fail(n, path, "more than %d nodes: the document is too large for a config", w.maxNodes())
		return nil, false
	}
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		w.fail(n, path, "anchors (&name) and aliases (*name) are not allowed in this file: write the value out")
		return nil, false
	}
	if n.ShortTag() == "!!null" {
		return nil, true
	}
	if n.Kind == yaml.ScalarNode && !coreTag(n.ShortTag()) {
		w.fail(n, path, "the tag %s is not allowed: write a plain value", n.Tag)
		return nil, false
	}
	for {
		if decodesItself(t) {
			return w.custom(n, t, path)
		}
		if t.Kind() != reflect.Pointer {
			break
		}
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		return w.object(n, t, path)
	case reflect.Map:
		return w.mapping(n, t, path)
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			w.fail(n, path, "want a list, got %s", kindName(n))
			return nil, false
		}
		out := make([]any, 0, len(n.Content))
		ok := true
		for i, c := range n.Content {
			v, cok := w.value(c, t.Elem(), elemPath(path, i, c))
			ok = ok && cok
			out = append(out, v)
		}
		if t.Kind() == reflect.Array && len(out) != t.Len() {
			w.fail(n, path, "want a list of %d, got %d", t.Len(), len(out))
			return nil, false
		}
		return out, ok
	case reflect.Interface:
		return w.generic(n, path)
	}
	return w.scalar(n, t, path)
}

func (w *walker) maxNodes() int {
	if w.opts.MaxNodes > 0 {
		return w.opts.MaxNodes
	}
	return DefaultMaxNodes
}

// coreTag reports whether a scalar's tag is one of YAML's core schema.
func coreTag(tag string) bool {
	switch tag {
	case "!!str", "!!int", "!!float", "!!bool", "!!null", "!!timestamp":
		return true
	}
	return false
}

// decodesItself reports whether t (or a pointer to it) has its own
// UnmarshalJSON or UnmarshalText.
func decodesItself(t reflect.Type) bool {
	if t.Implements(jsonUnmarshaler) || t.Implements(textUnmarshaler) {
		return true
	}
	pt := reflect.PointerTo(t)
	return t.Kind() != reflect.Pointer && (pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler))
}

// custom checks a value of a type with its own UnmarshalJSON (or
// UnmarshalText) by decoding it into a fresh one, so its error gets the
// path.
func (w *walker) custom(n *yaml.Node, t reflect.Type, path string) (any, bool) {
	v, ok := w.generic(n, path)
	if !ok {
		return nil, false
	}
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, reflect.New(t).Interface())
	}
	if err != nil {
		w.fail(n, path, "%s", strings.TrimPrefix(err.Error(), "json: "))
		return nil, false
	}
	return v, true
}

// generic converts a node of a free-form value (any): mappings have
// string keys, written once each.
func (w *walker) generic(n *yaml.Node, path string) (any, bool) {
	switch n.Kind {
	case yaml.MappingNode:
		return w.mapping(n, reflect.TypeFor[map[string]any](), path)
	case yaml.SequenceNode:
		return w.value(n, reflect.TypeFor[[]any](), path)
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!bool":
			return w.scalar(n, reflect.TypeFor[bool](), path)
		case "!!int":
			if v, ok := w.scalarQuiet(n, reflect.TypeFor[int64]()); ok {
				return v, true
			}
			return w.scalar(n, reflect.TypeFor[float64](), path)
		case "!!float":
			return w.scalar(n, reflect.TypeFor[float64](), path)
		}
		return n.Value, true
	}
	w.fail(n, path, "unexpected %s", kindName(n))
	return nil, false
}

// scalarQuiet converts a scalar without reporting a mistake.
func (w *walker) scalarQuiet(n *yaml.Node, t reflect.Type) (any, bool) {
	errs := len(w.errs)
	v, ok := w.scalar(n, t, "")
	w.errs = w.errs[:errs]
	return v, ok
}

func (w *walker) scalar(n *yaml.Node, t reflect.Type, path string) (any, bool) {
	if n.Kind != yaml.ScalarNode {
		w.fail(n, path, "want %s, got %s", typeWord(t), kindName(n))
		return nil, false
	}
	tag := n.ShortTag()
	switch t.Kind() {
	case reflect.String:
		if w.jsonTypes && tag != "!!str" {
			w.fail(n, path, "want a string, got %s: quote it", kindName(n))
			return nil, false
		}
		return n.Value, true
	case reflect.Bool:
		var b bool
		if tag != "!!bool" || n.Decode(&b) != nil {
			w.fail(n, path, "want true or false, got %s", kindName(n))
			return nil, false
		}
		return b, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var i int64
		if tag != "!!int" || n.Decode(&i) != nil {
			w.fail(n, path, "want a whole number, got %s", kindName(n))
			return nil, false
		}
		if reflect.Zero(t).OverflowInt(i) {
			w.fail(n, path, "%d is out of range", i)
			return nil, false
		}
		return json.Number(strconv.FormatInt(i, 10)), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		var u uint64
		if tag != "!!int" || n.Decode(&u) != nil {
			w.fail(n, path, "want a whole number of 0 or more, got %s", kindName(n))
			return nil, false
		}
		if reflect.Zero(t).OverflowUint(u) {
			w.fail(n, path, "%d is out of range", u)
			return nil, false
		}
		return json.Number(strconv.FormatUint(u, 10)), true
	case reflect.Float32, reflect.Float64:
		var f float64
		if tag != "!!int" && tag != "!!float" || n.Decode(&f) != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			w.fail(n, path, "want a number, got %s", kindName(n))
			return nil, false
		}
		if reflect.Zero(t).OverflowFloat(f) {
			w.fail(n, path, "%v is out of range", f)
			return nil, false
		}
		return f, true
	}
	w.fail(n, path, "strictyaml: cannot decode into a %s", t)
	return nil, false
}

// typeWord is how a Go type reads in a message.
func typeWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a whole number"
}

// mapping checks a Go map: free-form keys, each written once.
func (w *walker) mapping(n *yaml.Node, t reflect.Type, path string) (any, bool) {
	if n.Kind != yaml.MappingNode {
		w.fail(n, path, "want a mapping, got %s", kindName(n))
		return nil, false
	}
	out := make(map[string]any, len(n.Content)/2)
	seen := map[string]*yaml.Node{}
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name, kok := w.key(k, path)
		if !kok {
			ok = false
			continue
		}
		kp := keyPath(path, name)
		if prev, dup := seen[name]; dup {
			w.fail(k, kp, "written twice (also on line %d): keep one", offset(prev.Line, w.opts))
			ok = false
			continue
		}
		seen[name] = k
		val, vok := w.value(v, t.Elem(), kp)
		ok = ok && vok
		out[name] = val
	}
	return out, ok
}

// key checks a mapping key: a plain scalar, not a merge key.
func (w *walker) key(k *yaml.Node, path string) (string, bool) {
	if w.budget--; w.budget < 0 && !w.overBudget {
		w.overBudget = true
		w.fail(k, path, "more than %d nodes: the document is too large for a config", w.maxNodes())
	}
	if w.overBudget {
		return "", false
	}
	switch {
	case k.Kind == yaml.AliasNode || k.Anchor != "":
		w.fail(k, path, "anchors (&name) and aliases (*name) are not allowed in this file: write the key out")
		return "", false
	case k.Kind != yaml.ScalarNode:
		w.fail(k, path, "a key must be a plain string, got %s", kindName(k))
		return "", false
	case k.ShortTag() == "!!merge":
		w.fail(k, path, "merge keys (<<) are not allowed in this file: write the keys out")
		return "", false
	}
	return k.Value, true
}

// field is a key of a struct: its exact name and its type.
type field struct {
	name string
	typ  reflect.Type
}

// fields lists the keys of struct type t by encoding/json's rules: the
// tag's name, else the Go name; "-" and unexported fields left out; the
// fields of an untagged embedded struct promoted (the shallower wins).
func fields(t reflect.Type) []field {
	var out []field
	seen := map[string]bool{}
	var next []reflect.Type // embedded structs of the level being read
	walk := func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := f.Type
			if f.Anonymous && name == "" {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					next = append(next, et)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if !seen[name] {
				seen[name] = true
				out = append(out, field{name: name, typ: ft})
			}
		}
	}
	walk(t)
	for depth := 1; len(next) > 0 && depth < 32; depth++ {
		level := next
		next = nil
		for _, et := range level {
			walk(et)
		}
	}
	return out
}

// KeyPaths lists the path of every key of type t, as the decoder reads
// t: a struct field is its key, a list element "[]"; Go maps (free-form
// keys) and types that decode themselves (UnmarshalJSON) end a path.
// Tests use it to cover every key of a config type by reflection.
func KeyPaths(t reflect.Type) [][]string {
	var out [][]string
	var walk func(t reflect.Type, prefix []string, depth int)
	walk = func(t reflect.Type, prefix []string, depth int) {
		for !decodesItself(t) && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if depth > 32 || decodesItself(t) {
			return
		}
		switch t.Kind() {
		case reflect.Slice, reflect.Array:
			walk(t.Elem(), append(slices.Clip(prefix), "[]"), depth+1)
		case reflect.Struct:
			for _, f := range fields(t) {
				p := append(slices.Clip(prefix), f.name)
				out = append(out, p)
				walk(f.typ, p, depth+1)
			}
		}
	}
	walk(t, nil, 0)
	return out
}

// normalize is a key as near-duplicates compare: lower case, without '-'
// and '_'.
func normalize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '-' || r == '_' {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// object checks a struct: every key one of its fields, spelled exactly,
// once.
func (w *walker) object(n *yaml.Node, t reflect.Type, path string) (any, bool) {
	if n.Kind != yaml.MappingNode {
		w.fail(n, path, "want a mapping, got %s", kindName(n))
		return nil, false
	}
	fs := fields(t)
	byName := make(map[string]field, len(fs))
	byNorm := make(map[string]string, len(fs))
	for _, f := range fs {
		byName[f.name] = f
		byNorm[normalize(f.name)] = f.name
	}
	out := make(map[string]any, len(n.Content)/2)
	seen := map[string]*yaml.Node{}     // exact key -> its first node
	seenNorm := map[string]*yaml.Node{} // normalised key -> its first node
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name, kok := w.key(k, path)
		if !kok {
			ok = false
			continue
		}
		kp := keyPath(path, name)
		norm := normalize(name)
		if prev, dup := seen[name]; dup {
			w.fail(k, kp, "written twice (also on line %d): keep one", offset(prev.Line, w.opts))
			ok = false
			continue
		}
		seen[name] = k
		if prev, near := seenNorm[norm]; near {
			want := byNorm[norm]
			if want == "" {
				want = prev.Value
			}
			w.fail(k, kp, "%q on line %d is the same key in another spelling: keys are case-sensitive, write %q once", prev.Value, offset(prev.Line, w.opts), want)
			ok = false
			continue
		}
		seenNorm[norm] = k
		f, known := byName[name]
		if !known {
			ok = false
			if want, near := byNorm[norm]; near {
				w.fail(k, kp, "unknown key: keys are case-sensitive, did you mean %q?", want)
			} else if want := closest(name, fs); want != "" {
				w.fail(k, kp, "unknown key: did you mean %q?", want)
			} else {
				w.fail(k, kp, "unknown key (the keys here: %s)", knownKeys(fs))
			}
			continue
		}
		val, vok := w.value(v, f.typ, kp)
		ok = ok && vok
		out[name] = val
	}
	return out, ok
}

// closest returns the field whose name is within a small edit distance of
// name ("namesapce" -> "namespace"), or "".
func closest(name string, fs []field) string {
	best, bestD := "", 0
	n := normalize(name)
	for _, f := range fs {
		d := editDistance(n, normalize(f.name))
		limit := 1 // "nme" for "name"; longer names allow more
		switch {
		case len(f.name) > 8:
			limit = 3 // "thirdParties" for "thirdParty"
		case len(f.name) > 4:
			limit = 2
		}
		if d <= limit && (best == "" || d < bestD) {
			best, bestD = f.name, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of neighbours cost 1.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return math.MaxInt
	}
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

func knownKeys(fs []field) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func keyPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// elemPath names element i of a list; a mapping element with a "name" key
// is labelled with it: "environments[1] (prod)".
func elemPath(path string, i int, n *yaml.Node) string {
	p := fmt.Sprintf("%s[%d]", path, i)
	if n.Kind != yaml.MappingNode {
		return p
	}
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], n.Content[j+1]
		if k.Kind == yaml.ScalarNode && k.Value == "name" && v.Kind == yaml.ScalarNode && label(v.Value) {
			return p + " (" + v.Value + ")"
		}
	}
	return p
}

// label reports whether a name can label a path: short, printable, no
// spaces (a hostile name does not get to shape the message).
func label(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r >= 0x7f || r == '(' || r == ')' {
			return false
		}
	}
	return true
}
