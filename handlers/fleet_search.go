package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/roles"
	"github.com/hanzoai/deploy-web/search"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// searchRequest is a parsed fleet-wide search request.
type searchRequest struct {
	text   string
	query  search.Query
	offset int
	limit  int
	// refused is the parser's refusal (its Public is safe to show), nil
	// when q parsed.
	refused *httpError
}

// parseSearchRequest reads ?q=, ?offset= and ?limit= (the API's; the page
// shows search.DefaultLimit). A refused query is kept in refused, not
// returned: the page shows it beside the help, the API answers 400. A bad
// offset or limit is a 400 on both.
func parseSearchRequest(v url.Values) (searchRequest, error) {
	sr := searchRequest{text: v.Get("q"), limit: search.DefaultLimit}
	if len(sr.text) > search.MaxQueryLen {
		// Not echoed back: the box keeps what fits.
		sr.text = ""
		sr.refused = badRequest("q: at most %d characters", search.MaxQueryLen)
	} else {
		var err error
		if sr.query, err = search.Parse(sr.text); err != nil {
			var se *search.Error
			if !errors.As(err, &se) {
				se = search.ErrEmpty
			}
			sr.refused = badRequest("%s", se.Public)
		}
	}
	if o := v.Get("offset"); o != "" {
		n, err := strconv.Atoi(o)
		if err != nil || n < 0 || n >= search.MaxResults {
			return sr, badRequest("offset: %q is not between 0 and %d", o, search.MaxResults-1)
		}
		sr.offset = n
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > search.MaxLimit {
			return sr, badRequest("limit: %q is not between 1 and %d", l, search.MaxLimit)
		}
		sr.limit = n
	}
	return sr, nil
}

// searchPage serves GET /search: the page, or its content alone for the
// top bar's box (HTMX, as the person types).
func (s *Server) searchPage(w http.ResponseWriter, r *http.Request) error {
	sr, err := parseSearchRequest(r.URL.Query())
	if err != nil {
		return err
	}
	sr.limit = search.DefaultLimit
	res := s.searchResults(r.Context(), sr, paths.Search)
	if isHTMX(r) {
		return s.render(w, r, http.StatusOK, templates.SearchContent(res))
	}
	layout := s.layout(r, "search", "Search")
	layout.Search = sr.text
	return s.render(w, r, http.StatusOK, templates.SearchView(templates.SearchPage{Layout: layout, Results: res}))
}

// apiSearch serves GET /v1/deploy/search?q=: the same results as JSON; a
// refused query is a 400 with the parser's reason.
func (s *Server) apiSearch(w http.ResponseWriter, r *http.Request) error {
	sr, err := parseSearchRequest(r.URL.Query())
	if err != nil {
		return err
	}
	if sr.refused != nil {
		return sr.refused
	}
	res := s.searchResults(r.Context(), sr, func(q url.Values) string {
		q.Set("limit", strconv.Itoa(sr.limit))
		return paths.APISearch(q)
	})
	writeJSON(w, http.StatusOK, res)
	return nil
}

// searchResults runs a search over every cluster's caches (no API call),
// over the Apps the person may view by the fleet list's rule (mayView),
// and builds the results with their links; page builds a page's URL from
// its query.
func (s *Server) searchResults(ctx context.Context, sr searchRequest, page func(url.Values) string) templates.SearchResultsProps {
	res := templates.SearchResultsProps{Query: sr.text, Groups: []templates.SearchGroup{}, Cap: search.MaxResults}
	if sr.refused != nil {
		if sr.text != "" {
			res.Error = sr.refused.Public
		}
		return res
	}
	members := make([]search.Member, len(s.clusters))
	for i, c := range s.clusters {
		members[i] = search.Member{Cluster: c.Name, Source: c.View}
	}
	p := search.Run(members, sr.query, s.viewable(ctx), sr.offset, sr.limit)
	res.Offset, res.Count, res.Capped = p.Offset, p.Count, p.Capped
	for _, g := range p.Groups {
		sg := templates.SearchGroup{Cluster: g.Cluster, Namespace: g.Namespace, App: g.App, URL: paths.App(g.Cluster, g.Namespace, g.App)}
		for _, o := range g.Objects {
			// An App's tree is in its namespace: the ref the tree emits.
			ref := kubeview.Ref{Group: o.Group, Kind: o.Kind, Namespace: g.Namespace, Name: o.Name}.String()
			sg.Objects = append(sg.Objects, templates.SearchHit{Kind: o.Kind, Group: o.Group, Name: o.Name, Ref: ref,
				URL: paths.AppResource(g.Cluster, g.Namespace, g.App, ref), Images: o.Images})
		}
		res.Groups = append(res.Groups, sg)
	}
	at := func(offset int) string {
		q := url.Values{"q": {sr.text}}
		if offset > 0 {
			q.Set("offset", strconv.Itoa(offset))
		}
		return page(q)
	}
	if p.Next > 0 {
		res.Next = at(p.Next)
	}
	if p.Offset > 0 {
		res.Prev = at(max(p.Offset-sr.limit, 0))
	}
	return res
}

// viewable is the fleet list's visibility rule as a search.Visible: every
// App for one who may view everything, else the Apps mayView allows.
func (s *Server) viewable(ctx context.Context) search.Visible {
	g := s.grantsOf(ctx)
	if g.Allow(roles.View, roles.Target{}).Allowed {
		return func(string, string, string) bool { return true }
	}
	return func(cluster, namespace, app string) bool { return s.mayView(g, cluster, namespace, app) }
}
