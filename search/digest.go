package search

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Digest is an App's objects folded into a few strings (digestOf, kept in
// an Index's chunks), so a search rules out an App that cannot match with
// a handful of substring tests instead of a test per object; the Apps it
// lets through are matched object by object (a digest may let through an
// App none of whose objects matches, never the reverse). Each string is
// "\n"-separated and starts and ends with "\n".
type Digest struct {
	names, kinds, labels, images string
}

// digestOf returns the segments of objs' digest, one per field: their
// names, kinds (foldKind), label pairs ("key=value") and images
// (lowerASCII, as containsFold compares), each distinct value once.
func digestOf(objs []Object) [numFields]string {
	var names, kinds, labels, images []string
	for _, o := range objs {
		names = append(names, o.Name)
		kinds = append(kinds, foldKind(o.Kind))
		for k, v := range o.Labels {
			labels = append(labels, k+"="+v)
		}
		for _, img := range o.Images {
			images = append(images, lowerASCII(img))
		}
	}
	join := func(s []string) string {
		if len(s) == 0 {
			return "\n"
		}
		slices.Sort(s)
		s = slices.Compact(s)
		return "\n" + strings.Join(s, "\n") + "\n"
	}
	var d [numFields]string
	d[fieldNames], d[fieldKinds], d[fieldLabels], d[fieldImages] = join(names), join(kinds), join(labels), join(images)
	return d
}

// foldKind maps a kind to one spelling of its case-folding class (each
// rune the smallest of its unicode.SimpleFold orbit), so two kinds are
// equal under strings.EqualFold exactly when their foldKind are (the
// Kelvin sign and "k", "ſ" and "s" included).
func foldKind(s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b = utf8.AppendRune(b, least)
	}
	return string(b)
}

// lowerASCII is s with ASCII upper case made lower, other bytes kept.
func lowerASCII(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// digestNeedles are the substrings a digest must hold for an App to
// match q, computed once per query (Parse): per kind term, per name term
// (the literal runs of a glob), per label term, per image term.
type digestNeedles struct {
	kinds  []string
	names  [][]string
	labels []string
	images []string
	// required are the needles every App that matches holds, each in
	// its field: the plain words, the runs of the only name term, the
	// only label and the only image term (terms of one field are
	// alternatives: of two, neither is required). Kinds are left out:
	// there are few and most Apps hold each.
	required []fieldNeedle
}

// fieldNeedle is a needle of one field of a digest.
type fieldNeedle struct {
	field  int
	needle string
}

func (q *Query) needles() digestNeedles {
	var n digestNeedles
	for _, k := range q.Kinds {
		n.kinds = append(n.kinds, "\n"+foldKind(k)+"\n")
	}
	for _, g := range q.Names {
		runs := strings.Split(g.Pattern, "*")
		runs[0] = "\n" + runs[0] // the part before the first '*' starts a name
		n.names = append(n.names, slices.DeleteFunc(runs, func(r string) bool { return r == "" }))
	}
	for _, l := range q.Labels {
		if l.HasValue {
			n.labels = append(n.labels, "\n"+l.Key+"="+l.Value+"\n")
		} else {
			n.labels = append(n.labels, "\n"+l.Key+"=")
		}
	}
	n.images = q.Images // lower case (Parse): as the digest's images
	for _, w := range q.Words {
		n.required = append(n.required, fieldNeedle{fieldNames, w})
	}
	if len(n.names) == 1 {
		for _, r := range n.names[0] {
			n.required = append(n.required, fieldNeedle{fieldNames, r})
		}
	}
	if len(n.labels) == 1 {
		n.required = append(n.required, fieldNeedle{fieldLabels, n.labels[0]})
	}
	if len(n.images) == 1 {
		n.required = append(n.required, fieldNeedle{fieldImages, n.images[0]})
	}
	return n
}

// scan picks the needle an Index scans its chunks for: the longest of
// the required needles (a plain word, a run of the only name glob, the
// only label or image term), else the only kind term's (kinds are few:
// most Apps hold each). "" when q has none: the Index then tests each
// App's digest.
func (q *Query) scan() (field int, needle string) {
	for _, n := range q.digest.required {
		if len(n.needle) > len(needle) {
			field, needle = n.field, n.needle
		}
	}
	if needle == "" && len(q.digest.kinds) == 1 {
		field, needle = fieldKinds, q.digest.kinds[0]
	}
	return field, needle
}

// mayMatch reports whether some object digested in d may match q: false
// only when none can.
func (q *Query) mayMatch(d *Digest) bool {
	for _, w := range q.Words {
		if !strings.Contains(d.names, w) {
			return false
		}
	}
	in := func(s string) func(string) bool { return func(n string) bool { return strings.Contains(s, n) } }
	return anyOf(q.digest.kinds, in(d.kinds)) &&
		anyOf(q.digest.names, func(runs []string) bool {
			return !slices.ContainsFunc(runs, func(r string) bool { return !strings.Contains(d.names, r) })
		}) &&
		anyOf(q.digest.labels, in(d.labels)) &&
		anyOf(q.digest.images, in(d.images))
}
