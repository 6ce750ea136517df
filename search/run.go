package search

// Paging bounds.
const (
	// DefaultLimit is a page's size when none is asked.
	DefaultLimit = 50
	// MaxLimit is the largest page.
	MaxLimit = 200
	// MaxResults caps the results a query reaches (offset + limit): past
	// it the page says there are more and asks for a narrower query.
	MaxResults = 1000
)

// App is one App of a cluster with the objects of its tree (the App
// first), as a Source yields it.
type App struct {
	Namespace, Name string
	Objects         []Object
}

// Source is one cluster's cached Apps (an Index: kubeview.Cache keeps
// one).
type Source interface {
	// SearchApps calls yield with each App that may match q, ordered by
	// namespace then name, until yield returns false: every App one of
	// whose objects matches, maybe more (Run matches each object). It
	// makes no API call.
	SearchApps(q *Query, yield func(App) bool)
}

// Member is one cluster of the fleet.
type Member struct {
	Cluster string
	Source  Source
}

// Visible decides whether the person may see an App (the fleet list's
// rule).
type Visible func(cluster, namespace, app string) bool

// Group is the results of one App.
type Group struct {
	Cluster   string   `json:"cluster"`
	Namespace string   `json:"namespace"`
	App       string   `json:"app"`
	Objects   []Object `json:"objects"`
}

// Page is one page of results, grouped by App in the walk's order
// (members in the order given, then namespace and App name).
type Page struct {
	Groups []Group `json:"groups"`
	// Offset is the page's first result; Count the results on it.
	Offset int `json:"offset"`
	Count  int `json:"count"`
	// Next is the offset of the next page, 0 when there is none.
	Next int `json:"next,omitempty"`
	// Capped is true when results go on past MaxResults: the query
	// should be narrowed.
	Capped bool `json:"capped,omitempty"`
}

// Run walks every member's Apps the person may see (visible) and returns
// the results offset..offset+limit of q. The walk stops at the first
// result past the page; each Source yields only the Apps that may match
// (an Index scans its chunks for the query's needle), so a first page
// costs the Apps up to it that may match, not the fleet. limit is
// clamped to 1..MaxLimit and offset to 0..MaxResults-limit.
func Run(members []Member, q Query, visible Visible, offset, limit int) Page {
	limit = min(max(limit, 1), MaxLimit)
	offset = min(max(offset, 0), MaxResults-limit)
	p := Page{Offset: offset, Groups: []Group{}}
	seen := 0 // results before this one
	for _, m := range members {
		if !q.matchCluster(m.Cluster) {
			continue // a cluster: term rules the whole member out
		}
		done := false
		m.Source.SearchApps(&q, func(a App) bool {
			if !q.MatchApp(m.Cluster, a.Namespace) || !visible(m.Cluster, a.Namespace, a.Name) {
				return true
			}
			var g *Group
			for i := range a.Objects {
				o := &a.Objects[i]
				if !q.Match(o) {
					continue
				}
				seen++
				if seen <= offset {
					continue
				}
				if p.Count == limit {
					// One more result than the page: there is a next page,
					// or the cap is reached.
					if offset+limit >= MaxResults {
						p.Capped = true
					} else {
						p.Next = offset + limit
					}
					done = true
					return false
				}
				if g == nil {
					p.Groups = append(p.Groups, Group{Cluster: m.Cluster, Namespace: a.Namespace, App: a.Name})
					g = &p.Groups[len(p.Groups)-1]
				}
				g.Objects = append(g.Objects, *o)
				p.Count++
			}
			return true
		})
		if done {
			break
		}
	}
	return p
}
