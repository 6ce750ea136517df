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
	return anyOf(q.Kinds, func(k string) bool { return strings.Contains(d.kinds, "\n"+strings.ToLower(k)+"\n") }) &&
		anyOf(q.Names, func(g Glob) bool {
			lit, _, _ := strings.Cut(g.Pattern, "*") // the part before the first '*' is a prefix
			return strings.Contains(d.names, "\n"+lit)
		}) &&
		anyOf(q.Labels, func(l Label) bool {
			if l.HasValue {
				return strings.Contains(d.labels, "\n"+l.Key+"="+l.Value+"\n")
			}
			return strings.Contains(d.labels, "\n"+l.Key+"=")
		}) &&
		anyOf(q.Images, func(sub string) bool { return strings.Contains(d.images, sub) })
}
