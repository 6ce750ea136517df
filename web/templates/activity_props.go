package templates

import (
	"github.com/hanzoai/deploy-web/timeline"
)

// ActivityProps is /activity: the timeline entries of the fleet, newest
// first, filtered by cluster, namespace, App and kind (all in the URL).
type ActivityProps struct {
	Layout LayoutProps
	Query  ActivityQuery
	// Clusters are the configured clusters (a selector when several);
	// Namespaces the platform namespaces of them all; Kinds every kind.
	Clusters, Namespaces, Kinds []string
	Rows                        []ActivityRow
	// NextURL is the next (older) page, FirstURL the newest ("" when
	// this is the first page).
	NextURL, FirstURL string
	// Off says why there is no feed ("" when there is).
	Off string
}

// ActivityQuery is the feed's filters as the URL holds them.
type ActivityQuery struct {
	Cluster, Namespace, App, Kind string
}

// ActivityRow is one entry of the feed: its App, linked to the App's
// Timeline tab, and the entry as the tab's table shows it.
type ActivityRow struct {
	App         timeline.App
	TimelineURL string
	Row         TimelineRow
}
