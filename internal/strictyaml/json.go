package strictyaml

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// parseJSON reads one JSON value into a yaml.Node tree, token by token:
// the nodes are counted against the budget and the nesting against
// maxDepth as they are read, so a hostile document stops at the budget
// instead of being built first. Each node has the line and column of its
// first byte.
func parseJSON(data []byte, opts Options) (*yaml.Node, error) {
	p := &jsonParser{data: data, dec: json.NewDecoder(bytes.NewReader(data)), budget: opts.MaxNodes, opts: opts}
	if p.budget <= 0 {
		p.budget = DefaultMaxNodes
	}
	p.dec.UseNumber()
	for i, b := range data {
		if b == '\n' {
			p.lines = append(p.lines, i+1)
		}
	}
	root, err := p.parse(0)
	if err == nil {
		if _, terr := p.dec.Token(); !errors.Is(terr, io.EOF) {
			err = p.errorAt(p.dec.InputOffset(), "more than one JSON value: the file holds one")
		}
	}
	if err != nil {
		var es Errors
		if errors.As(err, &es) {
			return nil, es
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, p.errorAt(se.Offset, "invalid JSON: "+strings.TrimPrefix(se.Error(), "json: "))
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, p.errorAt(int64(len(data)), "invalid JSON: unexpected end of the document")
		}
		return nil, Errors{{Path: opts.Root, Message: "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")}}
	}
	return root, nil
}

type jsonParser struct {
	data   []byte
	dec    *json.Decoder
	lines  []int // offset of the start of each line after the first
	budget int
	opts   Options
}

// pos is the line and column of the first token at or after off.
func (p *jsonParser) pos(off int64) (line, col int) {
	i := int(off)
	for i < len(p.data) && strings.IndexByte(" \t\r\n,:", p.data[i]) >= 0 {
		i++
	}
	l := sort.SearchInts(p.lines, i+1) // lines starting at or before i
	start := 0
	if l > 0 {
		start = p.lines[l-1]
	}
	return l + 1, i - start + 1
}

func (p *jsonParser) errorAt(off int64, msg string) Errors {
	line, col := p.pos(off)
	return Errors{{Line: offset(line, p.opts), Column: col, Path: p.opts.Root, Message: msg}}
}

// node reads the next token as a node's start; it spends one node of the
// budget.
func (p *jsonParser) node() (*yaml.Node, json.Token, error) {
	start := p.dec.InputOffset()
	tok, err := p.dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if p.budget--; p.budget < 0 {
		return nil, nil, p.errorAt(start, fmt.Sprintf("more than %d nodes: the document is too large", p.maxNodes()))
	}
	line, col := p.pos(start)
	return &yaml.Node{Line: line, Column: col}, tok, nil
}

func (p *jsonParser) maxNodes() int {
	if p.opts.MaxNodes > 0 {
		return p.opts.MaxNodes
	}
	return DefaultMaxNodes
}

func (p *jsonParser) parse(depth int) (*yaml.Node, error) {
	n, tok, err := p.node()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxDepth {
			return nil, p.errorAt(p.dec.InputOffset()-1, fmt.Sprintf("nested more than %d deep", maxDepth))
		}
		switch t {
		case '{':
			n.Kind, n.Tag = yaml.MappingNode, "!!map"
			for p.dec.More() {
				k, ktok, err := p.node()
				if err != nil {
					return nil, err
				}
				name, _ := ktok.(string) // the decoder reads only strings as keys
				k.Kind, k.Tag, k.Value = yaml.ScalarNode, "!!str", name
				v, err := p.parse(depth + 1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, k, v)
			}
		case '[':
			n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
			for p.dec.More() {
				c, err := p.parse(depth + 1)
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, c)
			}
		}
		if _, err := p.dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
	case string:
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!str", t
	case json.Number:
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!int", string(t)
		if strings.ContainsAny(string(t), ".eE") {
			n.Tag = "!!float"
		}
	case bool:
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!bool", fmt.Sprint(t)
	case nil:
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!null", "null"
	}
	return n, nil
}
