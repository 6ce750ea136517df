package search

import (
	"slices"
	"strings"
)

// Object is one cached object of an App's tree as the search sees it.
// Labels and Images are the cache's own (shared, never modified). Its
// ref (the resource panel's address) is not kept: it is the tree's
// group:kind:namespace:name of the App's namespace, built for the
// results shown (kubeview.Ref), not for every object of the fleet.
type Object struct {
	Group  string            `json:"group"`
	Kind   string            `json:"kind"`
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	Images []string          `json:"images,omitempty"`
}

// MatchApp reports whether the cluster and namespace terms allow an App in
// cluster and namespace (checked once per App, before its objects).
func (q *Query) MatchApp(cluster, namespace string) bool {
	return q.matchCluster(cluster) && anyOf(q.Namespaces, func(n string) bool { return n == namespace })
}

// matchCluster reports whether the cluster terms allow cluster.
func (q *Query) matchCluster(cluster string) bool {
	return anyOf(q.Clusters, func(c string) bool { return strings.EqualFold(c, cluster) })
}

// Match reports whether o matches the object terms: its kind, name,
// labels, images, and every plain word in its name.
func (q *Query) Match(o *Object) bool {
	name := o.Name
	for _, w := range q.Words {
		if !strings.Contains(name, w) {
			return false
		}
	}
	return anyOf(q.Kinds, func(k string) bool { return strings.EqualFold(k, o.Kind) }) &&
		anyOf(q.Names, func(g Glob) bool { return g.Match(name) }) &&
		anyOf(q.Labels, func(l Label) bool {
			v, ok := o.Labels[l.Key]
			return ok && (!l.HasValue || v == l.Value)
		}) &&
		anyOf(q.Images, func(sub string) bool {
			return slices.ContainsFunc(o.Images, func(img string) bool { return containsFold(img, sub) })
		})
}

// anyOf is true for no terms (the field is not asked) or when one matches.
func anyOf[T any](terms []T, match func(T) bool) bool {
	return len(terms) == 0 || slices.ContainsFunc(terms, match)
}

// containsFold reports whether s contains sub (lower case), ignoring
// ASCII case in s, without allocating.
func containsFold(s, sub string) bool {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for j < n {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
			j++
		}
		if j == n {
			return true
		}
	}
	return false
}
