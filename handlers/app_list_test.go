package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/web/templates"
)

// testRows is a small fleet: one app mid-rollout, one healthy, one without
// a Deployment.
func testRows() []kubeview.AppRow {
	return []kubeview.AppRow{
		{
			Name: "api", Namespace: "apps", Image: "ghcr.io/hanzoai/api:2.0.0", Version: "2.0.0",
			Running:  []kubeview.VersionCount{{Version: "2.0.0", Image: "ghcr.io/hanzoai/api:2.0.0", Ready: 2}},
			Health:   objrules.Health{Status: objrules.HealthHealthy},
			Sync:     kubeview.Sync{Status: kubeview.SyncSynced},
			Replicas: kubeview.Replicas{Desired: 2, Ready: 2, Updated: 2, Available: 2}, HasDeployment: true,
			LastDeployed: testNow.Add(-3 * time.Hour), Created: testNow.Add(-72 * time.Hour),
		},
		{
			Name: "web", Namespace: "apps", Image: "ghcr.io/hanzoai/web:1.2.0", Version: "1.2.0",
			Running: []kubeview.VersionCount{
				{Version: "1.1.0", Image: "ghcr.io/hanzoai/web:1.1.0", Ready: 2, Revision: 3},
				{Version: "1.2.0", Image: "ghcr.io/hanzoai/web:1.2.0", Ready: 1, Revision: 4},
			},
			Health:   objrules.Health{Status: objrules.HealthProgressing, Message: "Deployment web: 1 of 3 updated replicas are available"},
			Sync:     kubeview.Sync{Status: kubeview.SyncOutOfSync, Message: "running 1.1.0, declared 1.2.0"},
			Replicas: kubeview.Replicas{Desired: 3, Ready: 1, Updated: 1, Available: 1}, HasDeployment: true,
			LastDeployed: testNow.Add(-5 * time.Minute), Created: testNow.Add(-48 * time.Hour),
		},
		{
			Name: "cron", Namespace: "infra",
			Health:  objrules.Health{Status: objrules.HealthMissing, Message: "Deployment cron not found"},
			Sync:    kubeview.Sync{Status: kubeview.SyncUnknown},
			Created: testNow.Add(-time.Hour),
		},
	}
}

func TestParseListRequest(t *testing.T) {
	namespaces := []string{"apps", "infra"}
	long := strings.Repeat("a", 253)
	for _, tt := range []struct {
		name    string
		query   string
		want    listRequest
		wantErr string // the message a user sees; "" for no error
	}{
		{name: "empty", query: ""},
		{name: "search trimmed", query: "q=%20%20web%20", want: listRequest{query: templates.FleetQuery{Search: "web"}}},
		{name: "search at the limit", query: "q=" + long, want: listRequest{query: templates.FleetQuery{Search: long}}},
		{name: "search too long", query: "q=" + long + "a", wantErr: "q: at most 253 characters"},
		{name: "namespace", query: "namespace=infra", want: listRequest{query: templates.FleetQuery{Namespace: "infra"}}},
		{name: "namespace not a platform one", query: "namespace=kube-system", wantErr: `namespace: "kube-system" is not a platform namespace`},
		{name: "health Healthy", query: "health=Healthy", want: listRequest{query: templates.FleetQuery{Health: "Healthy"}}},
		{name: "health Progressing", query: "health=Progressing", want: listRequest{query: templates.FleetQuery{Health: "Progressing"}}},
		{name: "health Degraded", query: "health=Degraded", want: listRequest{query: templates.FleetQuery{Health: "Degraded"}}},
		{name: "health Suspended", query: "health=Suspended", want: listRequest{query: templates.FleetQuery{Health: "Suspended"}}},
		{name: "health Missing", query: "health=Missing", want: listRequest{query: templates.FleetQuery{Health: "Missing"}}},
		{name: "health Unknown", query: "health=Unknown", want: listRequest{query: templates.FleetQuery{Health: "Unknown"}}},
		{name: "health lower case", query: "health=degraded", wantErr: `health: "degraded" is not one of Healthy, Progressing, Degraded, Suspended, Missing, Unknown`},
		{name: "sync Synced", query: "sync=Synced", want: listRequest{query: templates.FleetQuery{Sync: "Synced"}}},
		{name: "sync OutOfSync", query: "sync=OutOfSync", want: listRequest{query: templates.FleetQuery{Sync: "OutOfSync"}}},
		{name: "sync Unknown", query: "sync=Unknown", want: listRequest{query: templates.FleetQuery{Sync: "Unknown"}}},
		{name: "sync bad", query: "sync=InSync", wantErr: `sync: "InSync" is not one of Synced, OutOfSync, Unknown`},
		{name: "sort name", query: "sort=name", want: listRequest{query: templates.FleetQuery{Sort: "name"}}},
		{name: "sort health", query: "sort=health", want: listRequest{query: templates.FleetQuery{Sort: "health"}}},
		{name: "sort deployed", query: "sort=deployed", want: listRequest{query: templates.FleetQuery{Sort: "deployed"}}},
		{name: "sort bad", query: "sort=age", wantErr: `sort: "age" is not one of name, health, deployed`},
		{name: "page", query: "page=3", want: listRequest{query: templates.FleetQuery{Page: 3}}},
		{name: "page zero", query: "page=0", wantErr: `page: "0" is not a page number`},
		{name: "page negative", query: "page=-1", wantErr: `page: "-1" is not a page number`},
		{name: "page not a number", query: "page=two", wantErr: `page: "two" is not a page number`},
		{name: "page fraction", query: "page=1.5", wantErr: `page: "1.5" is not a page number`},
		{name: "limit min", query: "limit=1", want: listRequest{limit: 1}},
		{name: "limit max", query: "limit=10000", want: listRequest{limit: 10000}},
		{name: "limit zero", query: "limit=0", wantErr: `limit: "0" is not between 1 and 10000`},
		{name: "limit over max", query: "limit=10001", wantErr: `limit: "10001" is not between 1 and 10000`},
		{name: "limit not a number", query: "limit=all", wantErr: `limit: "all" is not between 1 and 10000`},
		{name: "continue", query: "continue=abc", want: listRequest{after: "abc"}},
		{name: "since", query: "since=42.1782907200", want: listRequest{since: "42.1782907200"}},
		{name: "cluster", query: "cluster=eu-west", want: listRequest{query: templates.FleetQuery{Cluster: "eu-west"}}},
		{name: "namespace of another cluster", query: "namespace=eu-only", want: listRequest{query: templates.FleetQuery{Namespace: "eu-only"}}},
		{name: "namespace of the cluster", query: "cluster=eu-west&namespace=eu-only", want: listRequest{query: templates.FleetQuery{Cluster: "eu-west", Namespace: "eu-only"}}},
		{name: "namespace of another cluster than the filter's", query: "cluster=eu-west&namespace=apps", want: listRequest{query: templates.FleetQuery{Cluster: "eu-west", Namespace: "apps"}}},
		{name: "namespace of no cluster", query: "cluster=eu-west&namespace=kube-system", wantErr: `namespace: "kube-system" is not a platform namespace`},
		{
			name:  "everything",
			query: "q=web&namespace=apps&health=Degraded&sync=OutOfSync&sort=deployed&page=2&limit=50&continue=tok&since=1.2",
			want: listRequest{
				query: templates.FleetQuery{Search: "web", Namespace: "apps", Health: "Degraded", Sync: "OutOfSync", Sort: "deployed", Page: 2},
				limit: 50, after: "tok", since: "1.2",
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatalf("url.ParseQuery(%q) error = %v", tt.query, err)
			}
			got, err := parseListRequest(v, map[string][]string{"in-cluster": namespaces, "eu-west": {"eu-only"}})
			if tt.wantErr != "" {
				var he *httpError
				if !errors.As(err, &he) {
					t.Fatalf("parseListRequest(%q) error = %v, want an *httpError %q", tt.query, err, tt.wantErr)
				}
				if he.Status != http.StatusBadRequest || he.Reason != "BadRequest" || he.Public != tt.wantErr {
					t.Errorf("parseListRequest(%q) error = %d %s %q, want 400 BadRequest %q", tt.query, he.Status, he.Reason, he.Public, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseListRequest(%q) error = %v, want nil", tt.query, err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(listRequest{})); diff != "" {
				t.Errorf("parseListRequest(%q) mismatch (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

func TestUnchanged(t *testing.T) {
	stamp := func(version uint64, at time.Time) string {
		return strconv.FormatUint(version, 10) + "." + strconv.FormatInt(at.Unix(), 10)
	}
	for _, tt := range []struct {
		name  string
		since string
		want  bool
	}{
		{"same version, now", stamp(42, testNow), true},
		{"same version, 59s ago", stamp(42, testNow.Add(-59*time.Second)), true},
		{"same version, a minute ago", stamp(42, testNow.Add(-time.Minute)), false},
		{"same version, an hour ago", stamp(42, testNow.Add(-time.Hour)), false},
		{"other version", stamp(41, testNow), false},
		{"empty", "", false},
		{"no dot", "42", false},
		{"bad version", "x." + strconv.FormatInt(testNow.Unix(), 10), false},
		{"bad time", "42.soon", false},
		{"negative version", "-42." + strconv.FormatInt(testNow.Unix(), 10), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := unchanged(tt.since, 42, testNow); got != tt.want {
				t.Errorf("unchanged(%q, 42, %v) = %t, want %t", tt.since, testNow, got, tt.want)
			}
		})
	}
}

// rowView is what a person reads in one row of the list.
type rowView struct {
	App, Namespace, Href string
	Health, HealthTitle  string
	Sync, SyncTitle      string
	Declared, Image      string
	Running              []string
	Replicas             string
}

func rowViews(doc *html.Node) []rowView {
	var out []rowView
	for _, tr := range byTestID(doc, "app-row") {
		rv := rowView{App: attr(tr, "data-app"), Namespace: attr(tr, "data-namespace")}
		if as := byTag(tr, "a"); len(as) > 0 {
			rv.Href = attr(as[0], "href")
		}
		for _, n := range byTestID(tr, "health") {
			rv.Health, rv.HealthTitle = text(n), attr(n, "title")
		}
		for _, n := range byTestID(tr, "sync") {
			rv.Sync, rv.SyncTitle = text(n), attr(n, "title")
		}
		for _, n := range byTestID(tr, "declared") {
			rv.Declared, rv.Image = text(n), attr(n, "title")
		}
		for _, n := range byTestID(tr, "running") {
			for _, run := range findAll(n, func(e *html.Node) bool { return attr(e, "data-testid") == "version-chip" }) {
				rv.Running = append(rv.Running, text(run))
			}
		}
		for _, n := range byTestID(tr, "replicas") {
			rv.Replicas = text(n)
		}
		out = append(out, rv)
	}
	return out
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

func TestAppListPage(t *testing.T) {
	ts := newTestServer(t, newFakeView(testRows()))
	w := ts.get(t, "/", nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET /: status = %d, want %d; body:\n%s", w.Code, http.StatusOK, w.Body)
	}
	if got, want := w.Header().Get("Content-Type"), "text/html; charset=utf-8"; got != want {
		t.Errorf("GET /: Content-Type = %q, want %q", got, want)
	}
	doc := parseHTML(t, w.Body.String())

	want := []rowView{
		{
			App: "api", Namespace: "apps", Href: "/clusters/in-cluster/apps/apps/api",
			Health: "Healthy", Sync: "Synced",
			Declared: "2.0.0", Image: "ghcr.io/hanzoai/api:2.0.0",
			Running: []string{"2.0.0 (2)"}, Replicas: "2/2",
		},
		{
			App: "web", Namespace: "apps", Href: "/clusters/in-cluster/apps/apps/web",
			Health: "Progressing", HealthTitle: "Deployment web: 1 of 3 updated replicas are available",
			Sync: "Out of sync", SyncTitle: "running 1.1.0, declared 1.2.0",
			Declared: "1.2.0", Image: "ghcr.io/hanzoai/web:1.2.0",
			Running: []string{"1.1.0 (2)", "1.2.0 (1)"}, Replicas: "1/3",
		},
		{
			App: "cron", Namespace: "infra", Href: "/clusters/in-cluster/apps/infra/cron",
			Health: "Missing", HealthTitle: "Deployment cron not found",
			Sync:     "Unknown",
			Declared: "–", Replicas: "–",
		},
	}
	if diff := cmp.Diff(want, rowViews(doc)); diff != "" {
		t.Errorf("GET /: rows mismatch (-want +got):\n%s", diff)
	}

	for id, want := range map[string]string{
		"count-health-Healthy":     "Healthy 1",
		"count-health-Progressing": "Progressing 1",
		"count-health-Missing":     "Missing 1",
		"count-health-Degraded":    "Degraded 0",
		"count-sync-OutOfSync":     "Out of sync 1",
		"matched":                  "1–3 of 3",
		"user-name":                "Ada Admin",
	} {
		if got := text(oneByTestID(t, doc, id)); got != want {
			t.Errorf("GET /: text of data-testid=%q = %q, want %q", id, got, want)
		}
	}

	q, ok := ts.view.lastQuery()
	if diff := cmp.Diff(kubeview.Query{Offset: 0, Limit: 100}, q); !ok || diff != "" {
		t.Errorf("GET /: Applications query mismatch (-want +got):\n%s", diff)
	}

	// Fit for the CSP: no inline script, no event handlers or style
	// attributes; one inline <style> in <head>, the one the CSP allows by its
	// hash (TestInlineStyleHash).
	for _, n := range findAll(doc, func(*html.Node) bool { return true }) {
		if n.DataAtom == atom.Script && !strings.HasPrefix(attr(n, "src"), "/static/") {
			t.Errorf("GET /: <script> without a /static/ src: %v", n.Attr)
		}
		if n.DataAtom == atom.Style && (n.Parent == nil || n.Parent.DataAtom != atom.Head) {
			t.Errorf("GET /: inline <style> element outside <head>")
		}
		for _, a := range n.Attr {
			if a.Key == "style" || strings.HasPrefix(a.Key, "on") {
				t.Errorf("GET /: <%s> has attribute %s=%q, not allowed by the CSP", n.Data, a.Key, a.Val)
			}
		}
	}
	// The logout form carries the session's CSRF token.
	var csrf []string
	for _, in := range findAll(doc, func(e *html.Node) bool { return attr(e, "name") == "csrf_token" }) {
		csrf = append(csrf, attr(in, "value"))
	}
	if diff := cmp.Diff([]string{testCSRF}, csrf); diff != "" {
		t.Errorf("GET /: csrf_token fields mismatch (-want +got):\n%s", diff)
	}
}

func TestAppListQuery(t *testing.T) {
	for _, tt := range []struct {
		target string
		want   kubeview.Query
	}{
		{"/", kubeview.Query{Offset: 0, Limit: 10}},
		{"/?page=1", kubeview.Query{Offset: 0, Limit: 10}},
		{"/?page=2", kubeview.Query{Offset: 10, Limit: 10}},
		{"/?page=3", kubeview.Query{Offset: 20, Limit: 10}},
		{
			"/?q=web&namespace=apps&health=Degraded&sync=OutOfSync&sort=health&page=2",
			kubeview.Query{Namespace: "apps", Health: objrules.HealthDegraded, Sync: kubeview.SyncOutOfSync, Search: "web", Sort: "health", Offset: 10, Limit: 10},
		},
		// The page pages by number; the API's limit and continue do not apply.
		{"/?limit=5&continue=abc", kubeview.Query{Offset: 0, Limit: 10}},
	} {
		t.Run(tt.target, func(t *testing.T) {
			view := newFakeView(testRows())
			view.page.Matched = 25
			ts := newTestServer(t, view, perPage(10))
			if w := ts.get(t, tt.target, nil); w.Code != http.StatusOK {
				t.Fatalf("GET %s: status = %d, want %d", tt.target, w.Code, http.StatusOK)
			}
			got, _ := view.lastQuery()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("GET %s: Applications query mismatch (-want +got):\n%s", tt.target, diff)
			}
		})
	}
}

func TestAppListPages(t *testing.T) {
	for _, tt := range []struct {
		target      string
		matched     int
		wantStatus  int
		wantMatched string
		wantNext    string
	}{
		{"/", 25, http.StatusOK, "1–3 of 25", "/?page=2"},
		{"/?page=2&health=Degraded", 25, http.StatusOK, "11–13 of 25 matching", "/?health=Degraded&page=3"},
		{"/?page=3", 25, http.StatusOK, "21–23 of 25", ""},
		{"/?page=4", 25, http.StatusNotFound, "", ""},
		{"/?page=9223372036854775807", 25, http.StatusNotFound, "", ""},
	} {
		t.Run(tt.target, func(t *testing.T) {
			view := newFakeView(testRows())
			view.page.Matched = tt.matched
			ts := newTestServer(t, view, perPage(10))
			w := ts.get(t, tt.target, nil)
			if w.Code != tt.wantStatus {
				t.Fatalf("GET %s: status = %d, want %d", tt.target, w.Code, tt.wantStatus)
			}
			if tt.wantStatus != http.StatusOK {
				return
			}
			doc := parseHTML(t, w.Body.String())
			if got := text(oneByTestID(t, doc, "matched")); got != tt.wantMatched {
				t.Errorf("GET %s: matched = %q, want %q", tt.target, got, tt.wantMatched)
			}
			var next string
			for _, a := range byTestID(doc, "next-page") {
				next = attr(a, "href")
			}
			if next != tt.wantNext {
				t.Errorf("GET %s: next-page href = %q, want %q", tt.target, next, tt.wantNext)
			}
		})
	}
}

func TestAppListEmpty(t *testing.T) {
	for _, tt := range []struct {
		name   string
		page   kubeview.Page
		wantID string
	}{
		{"empty fleet", kubeview.Page{Counts: countsOf(nil)}, "empty-fleet"},
		{"nothing matches", kubeview.Page{Counts: countsOf(testRows())}, "empty-filter"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			view := newFakeView(nil)
			view.page = tt.page
			ts := newTestServer(t, view)
			w := ts.get(t, "/?health=Degraded", nil)
			if w.Code != http.StatusOK {
				t.Fatalf("GET /?health=Degraded: status = %d, want %d", w.Code, http.StatusOK)
			}
			doc := parseHTML(t, w.Body.String())
			oneByTestID(t, doc, tt.wantID)
			if n := len(byTestID(doc, "app-row")); n != 0 {
				t.Errorf("GET /?health=Degraded: %d app rows, want 0", n)
			}
		})
	}
}

func TestAppListStaleBanner(t *testing.T) {
	view := newFakeView(testRows())
	view.status = kubeview.Status{
		Synced: true, Reachable: false, LastContact: testNow.Add(-2 * time.Minute),
		Error: "apiserver did not answer", Warnings: []string{"batch/v1 Job"},
	}
	ts := newTestServer(t, view)
	doc := parseHTML(t, ts.get(t, "/", nil).Body.String())
	if got, want := text(oneByTestID(t, doc, "stale-banner")), "Cluster unreachable. apiserver did not answer. Showing data from 2m ago (last contact 2026-07-01T11:58:00Z)."; got != want {
		t.Errorf("GET /: stale banner = %q, want %q", got, want)
	}
	if got, want := text(oneByTestID(t, doc, "warning-banner")), "batch/v1 Job: those objects are missing from this view."; got != want {
		t.Errorf("GET /: warning banner = %q, want %q", got, want)
	}
}

func TestAppListFragment(t *testing.T) {
	ts := newTestServer(t, newFakeView(testRows()))
	w := ts.get(t, "/?health=Progressing", htmxHeader)
	if w.Code != http.StatusOK {
		t.Fatalf("GET / (HTMX): status = %d, want %d", w.Code, http.StatusOK)
	}
	body := w.Body.String()
	for _, tag := range []string{"<html", "<!doctype", "<head", "<body", `id="filters"`} {
		if strings.Contains(strings.ToLower(body), strings.ToLower(tag)) {
			t.Errorf("GET / (HTMX): body contains %q, want the #fleet-results fragment alone", tag)
		}
	}
	nodes, err := html.ParseFragment(strings.NewReader(body), &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body})
	if err != nil {
		t.Fatalf("html.ParseFragment() error = %v", err)
	}
	var top []*html.Node
	for _, n := range nodes {
		if n.Type == html.ElementNode {
			top = append(top, n)
		} else if n.Type != html.TextNode || strings.TrimSpace(n.Data) != "" {
			t.Errorf("GET / (HTMX): top-level node %q outside the fragment", n.Data)
		}
	}
	if len(top) != 1 || top[0].Data != "section" || attr(top[0], "id") != "fleet-results" {
		t.Fatalf("GET / (HTMX): top-level elements = %d, want one <section id=\"fleet-results\">", len(top))
	}
	frag := top[0]
	if got, want := attr(frag, "hx-get"), "/?health=Progressing&since=42."+strconv.FormatInt(testNow.Unix(), 10); got != want {
		t.Errorf("GET / (HTMX): poll URL = %q, want %q", got, want)
	}
	if got, want := attr(frag, "data-version"), "42"; got != want {
		t.Errorf("GET / (HTMX): data-version = %q, want %q", got, want)
	}
	if n := len(byTestID(frag, "app-row")); n != 3 {
		t.Errorf("GET / (HTMX): %d app rows, want 3", n)
	}

	// The full page embeds the same fragment, with the same poll URL.
	doc := parseHTML(t, ts.get(t, "/?health=Progressing", nil).Body.String())
	sections := findAll(doc, func(e *html.Node) bool { return attr(e, "id") == "fleet-results" })
	if len(sections) != 1 || attr(sections[0], "hx-get") != attr(frag, "hx-get") {
		t.Errorf("GET / (page): #fleet-results = %d sections, want 1 polling %q", len(sections), attr(frag, "hx-get"))
	}
}

func TestAppListPoll(t *testing.T) {
	stamp := func(version uint64, at time.Time) string {
		return fmt.Sprintf("%d.%d", version, at.Unix())
	}
	for _, tt := range []struct {
		name       string
		since      string
		htmx       bool
		wantStatus int
	}{
		{"current and fresh", stamp(42, testNow.Add(-10*time.Second)), true, http.StatusNoContent},
		{"current, just rendered", stamp(42, testNow), true, http.StatusNoContent},
		{"current but old", stamp(42, testNow.Add(-2*time.Minute)), true, http.StatusOK},
		{"changed", stamp(41, testNow.Add(-10*time.Second)), true, http.StatusOK},
		{"garbage", "yesterday", true, http.StatusOK},
		{"not HTMX", stamp(42, testNow.Add(-10*time.Second)), false, http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, newFakeView(testRows()))
			target := "/?since=" + url.QueryEscape(tt.since)
			var header map[string]string
			if tt.htmx {
				header = htmxHeader
			}
			w := ts.get(t, target, header)
			if w.Code != tt.wantStatus {
				t.Errorf("GET %s (htmx %t): status = %d, want %d", target, tt.htmx, w.Code, tt.wantStatus)
			}
			if tt.wantStatus == http.StatusNoContent && w.Body.Len() != 0 {
				t.Errorf("GET %s: body = %q, want empty", target, w.Body)
			}
			if tt.wantStatus == http.StatusOK && len(byTestID(parseHTML(t, w.Body.String()), "app-row")) != 3 {
				t.Errorf("GET %s: want the 3 rows", target)
			}
		})
	}
}

// applicationsJSON is the wire shape of GET /v1/deploy/applications.
type applicationsJSON struct {
	Items    []kubeview.AppRow `json:"items"`
	Total    int               `json:"total"`
	Continue string            `json:"continue"`
	Counts   kubeview.Counts   `json:"counts"`
}

func TestAPIApplications(t *testing.T) {
	view := newFakeView(testRows())
	view.page.Matched = 7
	view.page.Continue = "next-token"
	ts := newTestServer(t, view)
	target := "/v1/deploy/applications?namespace=apps&health=Healthy&sync=Synced&q=a&sort=name&limit=3&continue=tok"
	w := ts.get(t, target, nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: status = %d, want %d; body %s", target, w.Code, http.StatusOK, w.Body)
	}
	if got, want := w.Header().Get("Content-Type"), "application/json"; got != want {
		t.Errorf("GET %s: Content-Type = %q, want %q", target, got, want)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &keys); err != nil {
		t.Fatalf("GET %s: body %q: %v", target, w.Body, err)
	}
	var gotKeys []string
	for k := range keys {
		gotKeys = append(gotKeys, k)
	}
	if diff := cmp.Diff([]string{"continue", "counts", "items", "total"}, gotKeys, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("GET %s: keys mismatch (-want +got):\n%s", target, diff)
	}
	var got applicationsJSON
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("GET %s: body %q: %v", target, w.Body, err)
	}
	wantRows := testRows()
	for i := range wantRows {
		wantRows[i].HasDeployment = false // not on the wire
		wantRows[i].Cluster = "in-cluster"
	}
	wantCounts := countsOf(testRows())
	wantCounts.Cluster = map[string]int{"in-cluster": 7}
	want := applicationsJSON{Items: wantRows, Total: 7, Continue: "next-token", Counts: wantCounts}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GET %s: body mismatch (-want +got):\n%s", target, diff)
	}
	q, _ := view.lastQuery()
	wantQ := kubeview.Query{Namespace: "apps", Health: objrules.HealthHealthy, Sync: kubeview.SyncSynced, Search: "a", Sort: "name", Limit: 3, After: "tok"}
	if diff := cmp.Diff(wantQ, q); diff != "" {
		t.Errorf("GET %s: Applications query mismatch (-want +got):\n%s", target, diff)
	}

	t.Run("last page", func(t *testing.T) {
		view := newFakeView(testRows())
		ts := newTestServer(t, view)
		w := ts.get(t, "/v1/deploy/applications", nil)
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(w.Body.Bytes(), &keys); err != nil {
			t.Fatalf("GET /v1/deploy/applications: body %q: %v", w.Body, err)
		}
		if _, ok := keys["continue"]; ok {
			t.Errorf("GET /v1/deploy/applications: body has \"continue\" on the last page: %s", w.Body)
		}
		if q, _ := view.lastQuery(); q != (kubeview.Query{}) {
			t.Errorf("GET /v1/deploy/applications: query = %+v, want the zero Query (all rows)", q)
		}
	})
}

func TestAPIApplicationsLimit(t *testing.T) {
	for _, tt := range []struct {
		limit      string
		wantStatus int
		wantLimit  int
	}{
		{"1", http.StatusOK, 1},
		{"10000", http.StatusOK, 10000},
		{"0", http.StatusBadRequest, 0},
		{"-1", http.StatusBadRequest, 0},
		{"10001", http.StatusBadRequest, 0},
		{"ten", http.StatusBadRequest, 0},
		{"1e3", http.StatusBadRequest, 0},
	} {
		t.Run(tt.limit, func(t *testing.T) {
			view := newFakeView(testRows())
			ts := newTestServer(t, view)
			target := "/v1/deploy/applications?limit=" + url.QueryEscape(tt.limit)
			w := ts.get(t, target, nil)
			if w.Code != tt.wantStatus {
				t.Fatalf("GET %s: status = %d, want %d", target, w.Code, tt.wantStatus)
			}
			q, called := view.lastQuery()
			if tt.wantStatus != http.StatusOK {
				if called {
					t.Errorf("GET %s: Applications called with %+v, want no call for a bad request", target, q)
				}
				return
			}
			if q.Limit != tt.wantLimit {
				t.Errorf("GET %s: Query.Limit = %d, want %d", target, q.Limit, tt.wantLimit)
			}
		})
	}
}

func TestAPIApplicationsBadContinue(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"ErrBadContinue", kubeview.ErrBadContinue},
		{"wrapped", fmt.Errorf("kubeview: page: %w", kubeview.ErrBadContinue)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			view := newFakeView(testRows())
			view.err = tt.err
			ts := newTestServer(t, view)
			w := ts.get(t, "/v1/deploy/applications?continue=forged", nil)
			if w.Code != http.StatusBadRequest {
				t.Errorf("GET ?continue=forged: status = %d, want %d", w.Code, http.StatusBadRequest)
			}
			var got map[string]string
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatalf("GET ?continue=forged: body %q: %v", w.Body, err)
			}
			want := map[string]string{"error": "continue: not a token this server issued", "reason": "BadRequest"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("GET ?continue=forged: body mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAppListBadRequestPage(t *testing.T) {
	ts := newTestServer(t, newFakeView(testRows()))
	w := ts.get(t, "/?sort=age", nil)
	if w.Code != http.StatusBadRequest {
		t.Fatalf("GET /?sort=age: status = %d, want %d", w.Code, http.StatusBadRequest)
	}
	doc := parseHTML(t, w.Body.String())
	if got, want := text(oneByTestID(t, doc, "error-message")), `sort: "age" is not one of name, health, deployed`; got != want {
		t.Errorf("GET /?sort=age: error message = %q, want %q", got, want)
	}
}

// TestAppListHistoryRestore: on a history cache miss htmx 2 re-fetches a
// pushed URL with HX-Request: true and HX-History-Restore-Request: true and
// swaps the answer into <body>, so it must get the full page, never the
// fragment or a 204.
func TestAppListHistoryRestore(t *testing.T) {
	ts := newTestServer(t, newFakeView(testRows()))
	restore := map[string]string{"HX-Request": "true", "HX-History-Restore-Request": "true"}
	for _, target := range []string{
		"/?health=Progressing",
		"/?since=" + fmt.Sprintf("42.%d", testNow.Unix()),
	} {
		t.Run(target, func(t *testing.T) {
			w := ts.get(t, target, restore)
			if w.Code != http.StatusOK {
				t.Fatalf("GET %s (history restore): status = %d, want %d", target, w.Code, http.StatusOK)
			}
			doc := parseHTML(t, w.Body.String())
			if len(byTag(doc, "header")) != 1 || len(byTestID(doc, "search")) != 1 || len(byTestID(doc, "app-row")) != 3 {
				t.Errorf("GET %s (history restore): want the full page (header, filters, 3 rows)", target)
			}
		})
	}
}

// TestFleetVersionFollowsReachability: with several clusters, a cluster
// going stale (or coming back) changes the list's poll version, so an open
// page redraws at its next poll; with one, the version is the list's own.
func TestFleetVersionFollowsReachability(t *testing.T) {
	up := []templates.ClusterState{{Name: "a", Status: kubeview.Status{Reachable: true}}, {Name: "b", Status: kubeview.Status{Reachable: true}}}
	down := []templates.ClusterState{{Name: "a", Status: kubeview.Status{Reachable: true}}, {Name: "b"}}
	if fleetVersion(7, up) == fleetVersion(7, down) {
		t.Error("a cluster going unreachable leaves the poll version unchanged")
	}
	again := []templates.ClusterState{{Name: "a", Status: kubeview.Status{Reachable: true}}, {Name: "b", Status: kubeview.Status{Reachable: true}}}
	if fleetVersion(7, up) != fleetVersion(7, again) {
		t.Error("the poll version is not stable")
	}
	if fleetVersion(7, up) == fleetVersion(8, up) {
		t.Error("a new list version leaves the poll version unchanged")
	}
	if got := fleetVersion(7, up[:1]); got != 7 {
		t.Errorf("one cluster: version %d, want the list's 7", got)
	}
}

// TestFleetTableRoles: the fleet's rows are grid boxes, not table rows
// (app.css), so the table's semantics come from its explicit roles: one
// table, a column header per column, and in every row a cell under each
// header. Only the first row's name cell is marked for Element Timing.
func TestFleetTableRoles(t *testing.T) {
	two, _, _ := twoClusters(t)
	for _, tt := range []struct {
		name    string
		ts      *testServer
		rows    int
		headers []string
	}{
		{"one cluster", newTestServer(t, newFakeView(testRows())), 3, []string{"Application", "Health", "Sync", "Declared", "Running", "Ready", "Last deploy"}},
		{"two clusters", two, 3, []string{"Application", "Cluster", "Health", "Sync", "Declared", "Running", "Ready", "Last deploy"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := parseHTML(t, tt.ts.get(t, "/", nil).Body.String())
			table := oneByTestID(t, doc, "apps-table")
			if got := attr(table, "role"); got != "table" {
				t.Errorf("apps-table role = %q, want table", got)
			}
			var headers []string
			for _, th := range byTag(table, "th") {
				if attr(th, "role") == "columnheader" {
					headers = append(headers, text(th))
				}
			}
			if diff := cmp.Diff(tt.headers, headers); diff != "" {
				t.Errorf("column headers mismatch (-want +got):\n%s", diff)
			}
			rows := byTestID(doc, "app-row")
			if len(rows) != tt.rows {
				t.Fatalf("rows = %d, want %d", len(rows), tt.rows)
			}
			for i, tr := range rows {
				if attr(tr, "role") != "row" {
					t.Errorf("row %d role = %q, want row", i, attr(tr, "role"))
				}
				cells := 0
				for _, td := range byTag(tr, "td") {
					if attr(td, "role") == "cell" {
						cells++
					}
				}
				if cells != len(tt.headers) {
					t.Errorf("row %d (%s) has %d cells with role cell, want one per column header (%d)", i, attr(tr, "data-app"), cells, len(tt.headers))
				}
			}
			marked := findAll(doc, func(n *html.Node) bool { return attr(n, "elementtiming") != "" })
			if len(marked) != 1 || attr(marked[0], "elementtiming") != "first-row" || !slices.Contains(byTag(rows[0], "td"), marked[0]) {
				t.Errorf("elementtiming marks %d elements, want one: the first row's name cell, as first-row", len(marked))
			}
		})
	}
}
