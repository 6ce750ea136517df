package writeback

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Edit is one change to one file of the repository. Commit reads the file
// (which must exist and be a regular file inside the repository), calls
// Apply with its content and writes the result; no other file is written.
type Edit interface {
	// Target is the file the edit writes: slash-separated, relative to
	// the repository root.
	Target() string
	// Apply returns the file's new content from its current content.
	Apply(current []byte) ([]byte, error)
}

// SetKustomizeImage sets an entry of a kustomization's images: list, as
// `kustomize edit set image <name>=*:<tag>` does (the entry's newName is
// kept): the entry named Name gets NewTag and Digest (an empty one is
// removed); a missing entry is appended. Other entries, comments and the
// sequence indentation are kept (kyaml rewrites the rest of the file in its
// own layout: two-space indentation).
type SetKustomizeImage struct {
	File   string
	Name   string
	NewTag string
	Digest string
}

// SetAppImage sets spec.image of the one document of File (a file of one
// or more YAML documents) whose kind and metadata.name are Kind and Name.
// No such document, or more than one, is an error.
type SetAppImage struct {
	File  string
	Kind  string
	Name  string
	Image string
}

// SetCatalogEntries replaces a JSON file (an artifact catalog) with
// Content, which must be one JSON value (the caller builds the catalog
// with its commit and entries; writeback does not know the format).
type SetCatalogEntries struct {
	File    string
	Content []byte
}

// Target implements Edit.
func (e SetKustomizeImage) Target() string { return e.File }

// Target implements Edit.
func (e SetAppImage) Target() string { return e.File }

// Target implements Edit.
func (e SetCatalogEntries) Target() string { return e.File }

// tagRE and digestRE are the registry grammar of a tag and a sha256 digest.
var (
	tagRE    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	digestRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// Apply implements Edit.
func (e SetKustomizeImage) Apply(cur []byte) ([]byte, error) {
	fail := func(format string, a ...any) error {
		return &EditError{File: e.File, Reason: fmt.Sprintf(format, a...)}
	}
	switch {
	case e.Name == "" || strings.ContainsAny(e.Name, " \t\r\n@") || strings.Contains(e.Name, ":") && !strings.Contains(e.Name, "/"):
		return nil, fail("image name %q: want a repository without tag or digest (registry.example/org/api)", e.Name)
	case e.NewTag == "" && e.Digest == "":
		return nil, fail("image %s: give a tag or a digest", e.Name)
	case e.NewTag != "" && !tagRE.MatchString(e.NewTag):
		return nil, fail("tag %q is not a valid image tag", e.NewTag)
	case e.Digest != "" && !digestRE.MatchString(e.Digest):
		return nil, fail("digest %q is not sha256:<64 hex>", e.Digest)
	}
	nodes, err := readYAML(cur)
	if err != nil {
		return nil, fail("%v", err)
	}
	if len(nodes) != 1 {
		return nil, fail("a kustomization is one YAML document, the file has %d", len(nodes))
	}
	k := nodes[0]
	images, err := k.Pipe(yaml.LookupCreate(yaml.SequenceNode, "images"))
	if err != nil {
		return nil, fail("images: %v", err)
	}
	if images.YNode().Kind != yaml.SequenceNode {
		return nil, fail("images: is not a list")
	}
	var entry *yaml.RNode
	elems, err := images.Elements()
	if err != nil {
		return nil, fail("images: %v", err)
	}
	for _, el := range elems {
		if el.YNode().Kind != yaml.MappingNode {
			return nil, fail("images: an entry is not a mapping")
		}
		n, err := el.Pipe(yaml.Lookup("name"))
		if err != nil {
			return nil, fail("images: %v", err)
		}
		if n != nil && yaml.GetValue(n) == e.Name {
			if entry != nil {
				return nil, fail("images: %s is listed twice: keep one entry", e.Name)
			}
			entry = el
		}
	}
	if entry == nil {
		entry = yaml.NewMapRNode(&map[string]string{"name": e.Name})
		if err := images.PipeE(yaml.Append(entry.YNode())); err != nil {
			return nil, fail("images: %v", err)
		}
	}
	for _, f := range []struct{ key, val string }{{"newTag", e.NewTag}, {"digest", e.Digest}} {
		if f.val == "" {
			if err := entry.PipeE(yaml.Clear(f.key)); err != nil {
				return nil, fail("images: %v", err)
			}
			continue
		}
		if err := setString(entry, f.key, f.val); err != nil {
			return nil, fail("images: %v", err)
		}
	}
	return writeYAML(nodes)
}

// setString sets the field key of mapping m to the string v, in place
// when the field exists (its comments and quotes stay), quoted when YAML
// would read v as another type (a tag of digits alone, "1", must stay a
// string).
func setString(m *yaml.RNode, key, v string) error {
	if f := m.Field(key); f != nil && f.Value.YNode().Kind == yaml.ScalarNode {
		n := f.Value.YNode()
		n.Value, n.Tag = v, yaml.NodeTagString
		if q := quoteStyle(v); q != 0 || n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			n.Style = q
		}
		return nil
	}
	n := yaml.NewStringRNode(v)
	n.YNode().Style = quoteStyle(v)
	return m.PipeE(yaml.SetField(key, n))
}

// quoteStyle is double quotes for a value YAML would read as another type.
func quoteStyle(s string) yaml.Style {
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err == nil {
		if _, isString := v.(string); isString {
			return 0
		}
	}
	return yaml.DoubleQuotedStyle
}

// Apply implements Edit.
func (e SetAppImage) Apply(cur []byte) ([]byte, error) {
	fail := func(format string, a ...any) error {
		return &EditError{File: e.File, Reason: fmt.Sprintf(format, a...)}
	}
	if e.Kind == "" || e.Name == "" {
		return nil, fail("kind and name are required")
	}
	if e.Image == "" || strings.ContainsAny(e.Image, " \t\r\n") {
		return nil, fail("image %q is not an image reference", e.Image)
	}
	nodes, err := readYAML(cur)
	if err != nil {
		return nil, fail("%v", err)
	}
	var match *yaml.RNode
	for _, n := range nodes {
		m, err := n.GetMeta()
		if err != nil {
			continue // not an object (a list, a scalar): not the App
		}
		if m.Kind == e.Kind && m.Name == e.Name {
			if match != nil {
				return nil, fail("%d documents are %s %s: keep one", countMatches(nodes, e.Kind, e.Name), e.Kind, e.Name)
			}
			match = n
		}
	}
	if match == nil {
		return nil, fail("no document is %s %s", e.Kind, e.Name)
	}
	spec, err := match.Pipe(yaml.LookupCreate(yaml.MappingNode, "spec"))
	if err == nil && spec.YNode().Kind != yaml.MappingNode {
		err = fmt.Errorf("spec is not a mapping")
	}
	if err == nil {
		err = setString(spec, "image", e.Image)
	}
	if err != nil {
		return nil, fail("%s %s: spec.image: %v", e.Kind, e.Name, err)
	}
	return writeYAML(nodes)
}

func countMatches(nodes []*yaml.RNode, kind, name string) int {
	n := 0
	for _, d := range nodes {
		if m, err := d.GetMeta(); err == nil && m.Kind == kind && m.Name == name {
			n++
		}
	}
	return n
}

// Apply implements Edit.
func (e SetCatalogEntries) Apply(cur []byte) ([]byte, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(e.Content))
	if err := dec.Decode(&v); err != nil {
		return nil, &EditError{File: e.File, Reason: fmt.Sprintf("the new content is not JSON: %v", err)}
	}
	if dec.More() {
		return nil, &EditError{File: e.File, Reason: "the new content holds more than one JSON value"}
	}
	var old any
	if err := json.Unmarshal(cur, &old); err != nil {
		return nil, &EditError{File: e.File, Reason: fmt.Sprintf("the current file is not JSON (%v): it is not a catalog", err)}
	}
	out := e.Content
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(append([]byte{}, out...), '\n')
	}
	return out, nil
}

// readYAML parses one or more YAML documents, remembering each one's
// sequence indentation so writeYAML keeps it.
func readYAML(b []byte) ([]*yaml.RNode, error) {
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(b), PreserveSeqIndent: true}).Read()
	if err != nil {
		return nil, fmt.Errorf("not YAML: %v", err)
	}
	return nodes, nil
}

// writeYAML writes documents read by readYAML, without the annotations
// the reader added.
func writeYAML(nodes []*yaml.RNode) ([]byte, error) {
	var out bytes.Buffer
	if err := (kio.ByteWriter{Writer: &out}).Write(nodes); err != nil {
		return nil, fmt.Errorf("write YAML: %v", err)
	}
	return out.Bytes(), nil
}

// cleanTarget checks an edit's file path: relative, slash-separated,
// clean, inside the repository and outside .git. It returns the path's
// elements.
func cleanTarget(p string) ([]string, error) {
	switch {
	case p == "":
		return nil, fmt.Errorf("no file named")
	case strings.HasPrefix(p, "/") || strings.Contains(p, `\`):
		return nil, fmt.Errorf("%q is not a relative slash-separated path", p)
	case path.Clean(p) != p:
		return nil, fmt.Errorf("%q is not a clean path (write %q)", p, path.Clean(p))
	case p == "." || p == ".." || strings.HasPrefix(p, "../"):
		return nil, fmt.Errorf("%q leaves the repository", p)
	}
	parts := strings.Split(p, "/")
	for _, s := range parts {
		if strings.EqualFold(s, ".git") {
			return nil, fmt.Errorf("%q is inside .git", p)
		}
		if strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			return nil, fmt.Errorf("%q holds a control character", p)
		}
	}
	return parts, nil
}
