package templates

import (
	"strconv"

	"github.com/hanzoai/deploy-web/search"
)

// SearchPage is the fleet-wide search page (/search): the query, and its
// results or the reason there are none.
type SearchPage struct {
	Layout  LayoutProps
	Results SearchResultsProps
}

// SearchResultsProps are the results fragment (#search-results), which
// the top bar's box swaps in as the person types. The JSON API answers
// the same fields.
type SearchResultsProps struct {
	// Query is the query as typed ("" before one is typed).
	Query string `json:"query"`
	// Error is why the query was refused (safe to show), "" when it ran.
	Error  string        `json:"error,omitempty"`
	Groups []SearchGroup `json:"groups"`
	// Offset is the page's first result, Count the results on it.
	Offset int `json:"offset"`
	Count  int `json:"count"`
	// Next and Prev are the neighbouring pages' URLs ("" when none).
	Next string `json:"next,omitempty"`
	Prev string `json:"prev,omitempty"`
	// Capped says the results go on past the cap: narrow the query.
	Capped bool `json:"capped,omitempty"`
	// Cap is the cap (search.MaxResults), for its message.
	Cap int `json:"-"`
}

// SearchGroup is the results of one App.
type SearchGroup struct {
	Cluster   string      `json:"cluster"`
	Namespace string      `json:"namespace"`
	App       string      `json:"app"`
	URL       string      `json:"url"`
	Objects   []SearchHit `json:"objects"`
}

// SearchHit is one object found, with its resource panel's URL.
type SearchHit struct {
	Kind   string   `json:"kind"`
	Group  string   `json:"group"`
	Name   string   `json:"name"`
	Ref    string   `json:"ref"`
	URL    string   `json:"url"`
	Images []string `json:"images,omitempty"`
}

// searchSummary says which results the page shows.
func searchSummary(p SearchResultsProps) string {
	switch {
	case p.Count == 0:
		return "no results"
	case p.Count == 1 && p.Offset == 0:
		return "1 result"
	}
	s := strconv.Itoa(p.Offset+1) + "–" + strconv.Itoa(p.Offset+p.Count)
	if p.Next != "" || p.Capped {
		return "results " + s + " (more)"
	}
	return "results " + s
}

// searchMaxLen is the top bar's search box's maxlength
// (search.MaxQueryLen; the server refuses longer queries anyway).
func searchMaxLen() string { return strconv.Itoa(search.MaxQueryLen) }
