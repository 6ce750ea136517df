package kubeview

import (
	"errors"
	"fmt"
	"strings"
)

// Ref addresses one object of an app's tree: "group:kind:namespace:name"
// (the core group is empty, so a Service is ":Service:ns:web").
type Ref struct {
	Group, Kind, Namespace, Name string
}

// String formats the ref as the tree emits it.
func (r Ref) String() string {
	return r.Group + ":" + r.Kind + ":" + r.Namespace + ":" + r.Name
}

// Errors of ParseRef, checked with errors.Is.
var (
	ErrMalformedRef = errors.New("kubeview: malformed ref")
	ErrUnknownKind  = errors.New("kubeview: kind not in the registry")
)

// ParseRef parses and validates a ref: four fields, DNS-style names, and a
// kind of the closed registry (or the App kind itself).
func ParseRef(s string, appGroup, appKind string) (Ref, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 4 {
		return Ref{}, fmt.Errorf("%w: want group:kind:namespace:name", ErrMalformedRef)
	}
	r := Ref{Group: parts[0], Kind: parts[1], Namespace: parts[2], Name: parts[3]}
	if !validName(r.Namespace, 63) || !validName(r.Name, 253) || r.Kind == "" || len(r.Group) > 253 {
		return Ref{}, fmt.Errorf("%w: bad namespace or name", ErrMalformedRef)
	}
	if r.Group == appGroup && r.Kind == appKind {
		return r, nil
	}
	if _, ok := LookupKind(r.Group, r.Kind); !ok {
		return Ref{}, fmt.Errorf("%w: %s", ErrUnknownKind, groupKindString(r.Group, r.Kind))
	}
	return r, nil
}

// validName accepts lowercase RFC 1123 names (with dots) up to max.
func validName(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || (c == '-' || c == '.') && i > 0 && i < len(s)-1
		if !ok {
			return false
		}
	}
	return true
}

func groupKindString(group, kind string) string {
	if group == "" {
		return kind
	}
	return group + "/" + kind
}
