package search

import (
	"slices"
	"strings"
)

// Digest is an App's objects folded into a few strings, built once when
// the App's index entry is (NewDigest), so a search rules out an App that
// cannot match with a handful of substring tests instead of a test per
// object; the Apps it lets through are matched object by object (a digest
// may let through an App none of whose objects matches, never the
// reverse). Each string is "\n"-separated and starts and ends with "\n".
type Digest struct {
	names, kinds, labels, images string
}

// NewDigest digests objs: their names, kinds (lower case), label pairs
// ("key=value") and images (lower case), each distinct value once.
func NewDigest(objs []Object) *Digest {
	var names, kinds, labels, images []string
	for _, o := range objs {
		names = append(names, o.Name)
		kinds = append(kinds, strings.ToLower(o.Kind))
		for k, v := range o.Labels {
			labels = append(labels, k+"="+v)
		}
		for _, img := range o.Images {
			images = append(images, strings.ToLower(img))
		}
	}
	join := func(s []string) string {
		slices.Sort(s)
		s = slices.Compact(s)
		return "\n" + strings.Join(s, "\n") + "\n"
	}
	return &Digest{names: join(names), kinds: join(kinds), labels: join(labels), images: join(images)}
}

// digestNeedles are the substrings a digest must hold for an App to
// match q, computed once per query (Parse): per kind term, per name term
// (the literal runs of a glob), per label term.
type digestNeedles struct {
	kinds  []string
	names  [][]string
	labels []string
}

func (q *Query) needles() digestNeedles {
	var n digestNeedles
	for _, k := range q.Kinds {
		n.kinds = append(n.kinds, "\n"+strings.ToLower(k)+"\n")
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
	return n
}

// mayMatch reports whether some object digested in d may match q: false
// only when none can.
func (q *Query) mayMatch(d *Digest) bool {
	if d == nil {
		return true
	}
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
		anyOf(q.Images, in(d.images))
}
