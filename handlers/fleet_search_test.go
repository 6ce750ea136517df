package handlers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"github.com/hanzoai/deploy-web/search"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// searchView is a fakeView whose search source yields apps, or, when
// apps is nil, each row of the fake's list with an App, a Deployment
// running the row's image and a ConfigMap "<name>-cfg" labelled
// tier=<name>.
type searchView struct {
	*fakeView
	apps []search.App
}

func (v searchView) SearchApps(_ *search.Query, yield func(search.App) bool) {
	apps := v.apps
	if apps == nil {
		for _, r := range v.page.Rows {
			apps = append(apps, search.App{Namespace: r.Namespace, Name: r.Name, Objects: []search.Object{
				{Group: "hanzo.ai", Kind: "App", Name: r.Name, Images: []string{r.Image}},
				{Group: "apps", Kind: "Deployment", Name: r.Name, Images: []string{r.Image}},
				{Kind: "ConfigMap", Name: r.Name + "-cfg", Labels: map[string]string{"tier": r.Name}},
			}})
		}
		slices.SortFunc(apps, func(a, b search.App) int { return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name) })
	}
	for _, a := range apps {
		if !yield(a) {
			return
		}
	}
}

// searchServer is a test server over testRows (api and web in apps,
// cron in infra) whose cache answers searches, with the walk's roles,
// signed in as persona ("" for the test's superadmin).
func searchServer(t *testing.T, persona string, apps []search.App) *testServer {
	t.Helper()
	fv := newFakeView(testRows())
	ts := newTestServer(t, fv, func(o *Options) {
		o.Roles = walkPolicy(t)
		o.Clusters[0].View = searchView{fakeView: fv, apps: apps}
	})
	if persona != "" {
		signIn(t, ts, persona)
	}
	return ts
}

func apiSearchResults(t *testing.T, ts *testServer, q url.Values) templates.SearchResultsProps {
	t.Helper()
	w := ts.get(t, paths.APISearch(q), nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s = %d, want 200: %s", paths.APISearch(q), w.Code, w.Body)
	}
	var got templates.SearchResultsProps
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func hitNames(p templates.SearchResultsProps) []string {
	var out []string
	for _, g := range p.Groups {
		for _, o := range g.Objects {
			out = append(out, g.App+"/"+o.Kind+"/"+o.Name)
		}
	}
	return out
}

// TestSearchAPI: the JSON API answers the results grouped by App, each
// object with its resource panel's URL (paths.AppResource), for each term.
func TestSearchAPI(t *testing.T) {
	ts := searchServer(t, "", nil)
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"cfg", []string{"api/ConfigMap/api-cfg", "web/ConfigMap/web-cfg", "cron/ConfigMap/cron-cfg"}},
		{"kind:ConfigMap name:w*", []string{"web/ConfigMap/web-cfg"}},
		{"ns:infra kind:app", []string{"cron/App/cron"}},
		{"label:tier=api", []string{"api/ConfigMap/api-cfg"}},
		{"image:hanzoai/web kind:Deployment", []string{"web/Deployment/web"}},
		{"cluster:in-cluster name:api", []string{"api/App/api", "api/Deployment/api", "api/ConfigMap/api-cfg"}},
		{"cluster:elsewhere", nil},
	} {
		got := apiSearchResults(t, ts, url.Values{"q": {tc.q}})
		if d := cmp.Diff(tc.want, hitNames(got)); d != "" {
			t.Errorf("search %q (-want +got):\n%s", tc.q, d)
		}
	}
	got := apiSearchResults(t, ts, url.Values{"q": {"web-cfg"}})
	if len(got.Groups) != 1 || got.Groups[0].URL != paths.App("in-cluster", "apps", "web") ||
		got.Groups[0].Objects[0].URL != paths.AppResource("in-cluster", "apps", "web", ":ConfigMap:apps:web-cfg") {
		t.Errorf("search web-cfg = %+v, want one group linking to the App and the ConfigMap's panel", got.Groups)
	}
}

// TestSearchPaging: results are paged by offset; next and prev are
// bookmarkable URLs of the same route; the last page has no next.
func TestSearchPaging(t *testing.T) {
	ts := searchServer(t, "", nil)
	p1 := apiSearchResults(t, ts, url.Values{"q": {"cfg"}, "limit": {"2"}})
	if d := cmp.Diff([]string{"api/ConfigMap/api-cfg", "web/ConfigMap/web-cfg"}, hitNames(p1)); d != "" {
		t.Fatalf("page 1 (-want +got):\n%s", d)
	}
	if want := paths.APISearch(url.Values{"q": {"cfg"}, "offset": {"2"}, "limit": {"2"}}); p1.Next != want || p1.Prev != "" {
		t.Fatalf("page 1 next %q prev %q, want next %q and no prev", p1.Next, p1.Prev, want)
	}
	w := ts.get(t, p1.Next, nil)
	var p2 templates.SearchResultsProps
	if err := json.Unmarshal(w.Body.Bytes(), &p2); err != nil || w.Code != http.StatusOK {
		t.Fatalf("GET %s = %d %s", p1.Next, w.Code, w.Body)
	}
	if d := cmp.Diff([]string{"cron/ConfigMap/cron-cfg"}, hitNames(p2)); d != "" || p2.Next != "" || p2.Offset != 2 {
		t.Errorf("page 2 = next %q offset %d (-want +got):\n%s", p2.Next, p2.Offset, d)
	}

	doc := parseHTML(t, ts.get(t, paths.Search(url.Values{"q": {"cfg"}, "offset": {"1"}}), nil).Body.String())
	if got := len(byTestID(doc, "search-hit")); got != 2 {
		t.Errorf("/search?q=cfg&offset=1: %d hits, want 2", got)
	}
	if prev := attr(oneByTestID(t, doc, "search-prev"), "href"); prev != paths.Search(url.Values{"q": {"cfg"}}) {
		t.Errorf("/search?q=cfg&offset=1: prev %q, want the first page", prev)
	}
}

// TestSearchVisibility: a person who may view only some Apps finds only
// their objects (the fleet list's rule); one with no role is refused.
func TestSearchVisibility(t *testing.T) {
	for _, tc := range []struct {
		persona string
		want    []string
	}{
		{"deployer (scoped)", []string{"api/ConfigMap/api-cfg", "web/ConfigMap/web-cfg"}},
		{"viewer", []string{"api/ConfigMap/api-cfg", "web/ConfigMap/web-cfg", "cron/ConfigMap/cron-cfg"}},
	} {
		got := apiSearchResults(t, searchServer(t, tc.persona, nil), url.Values{"q": {"kind:ConfigMap"}})
		if d := cmp.Diff(tc.want, hitNames(got)); d != "" {
			t.Errorf("%s: search kind:ConfigMap (-want +got):\n%s", tc.persona, d)
		}
	}
	ts := searchServer(t, "no role", nil)
	for _, target := range []string{paths.APISearch(url.Values{"q": {"cfg"}}), paths.Search(url.Values{"q": {"cfg"}})} {
		if w := ts.get(t, target, nil); w.Code != http.StatusForbidden || strings.Contains(w.Body.String(), "cfg</") {
			t.Errorf("no role: GET %s = %d, want 403 with no result", target, w.Code)
		}
	}
}

// TestSearchRefusals: a refused query is a 400 with the parser's public
// reason on the API, and the page shows the reason beside the help.
func TestSearchRefusals(t *testing.T) {
	ts := searchServer(t, "", nil)
	for _, tc := range []struct{ q, want string }{
		{"q=", "type a name"},
		{"q=owner:bob", "owner: is not a search term"},
		{"q=" + strings.Repeat("a", search.MaxQueryLen+1), "at most 256 characters"},
		{"q=" + url.QueryEscape(strings.Repeat("a ", 9)), "at most 8 terms"},
		{"q=web&offset=-1", "offset"},
		{"q=web&offset=1000", "offset"},
		{"q=web&limit=201", "limit"},
		{"q=web%00", "control"},
	} {
		w := ts.get(t, "/v1/deploy/search?"+tc.q, nil)
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("GET /v1/deploy/search?%.40s = %d %s, want 400 containing %q", tc.q, w.Code, w.Body, tc.want)
		}
	}
	w := ts.get(t, "/search?q=owner:bob", nil)
	doc := parseHTML(t, w.Body.String())
	if w.Code != http.StatusOK || !strings.Contains(text(oneByTestID(t, doc, "search-error")), "owner: is not a search term") || len(byTestID(doc, "search-help")) != 1 {
		t.Errorf("GET /search?q=owner:bob = %d, want 200 with the reason and the help", w.Code)
	}
	doc = parseHTML(t, ts.get(t, "/search", nil).Body.String())
	if len(byTestID(doc, "search-error")) != 0 || len(byTestID(doc, "search-help")) != 1 {
		t.Error("GET /search without a query: want the help and no error")
	}
}

// TestSearchPageAndFragment: a full load is the page with the query in
// the top bar's box; the box's HTMX request gets the content alone.
func TestSearchPageAndFragment(t *testing.T) {
	ts := searchServer(t, "", nil)
	target := paths.Search(url.Values{"q": {"web"}})
	doc := parseHTML(t, ts.get(t, target, nil).Body.String())
	box := oneByTestID(t, doc, "topbar-search-input")
	if attr(box, "value") != "web" || attr(box, "hx-get") != paths.Search(nil) || attr(box, "hx-target") != "#main" {
		t.Errorf("top bar box = value %q hx-get %q hx-target %q, want the query, /search, #main", attr(box, "value"), attr(box, "hx-get"), attr(box, "hx-target"))
	}
	if got := len(byTestID(doc, "search-group")); got != 1 {
		t.Errorf("full page: %d groups, want 1 (web)", got)
	}
	w := ts.get(t, target, htmxHeader)
	body := w.Body.String()
	if w.Code != http.StatusOK || strings.Contains(body, "<html") || strings.Contains(body, "topbar") || !strings.Contains(body, `id="search-results"`) {
		t.Errorf("HTMX GET %s = %d, want the results content alone:\n%.300s", target, w.Code, body)
	}
	// Every page's top bar has the box, empty.
	doc = parseHTML(t, ts.get(t, "/", nil).Body.String())
	if box := oneByTestID(t, doc, "topbar-search-input"); attr(box, "value") != "" {
		t.Errorf("fleet page: search box value %q, want empty", attr(box, "value"))
	}
}

// TestSearchInjection: hostile names, images and queries come back
// escaped.
func TestSearchInjection(t *testing.T) {
	evil := `<script>alert(1)</script>`
	apps := []search.App{{Namespace: "apps", Name: "web", Objects: []search.Object{
		{Kind: "ConfigMap", Name: "x" + evil, Images: []string{`"><img src=x onerror=alert(2)>`}},
	}}}
	ts := searchServer(t, "", apps)
	for _, q := range []string{"x", evil} {
		body := ts.get(t, paths.Search(url.Values{"q": {q}}), nil).Body.String()
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
			t.Errorf("/search?q=%s: a hostile name, image or query came back unescaped", q)
		}
		if !strings.Contains(body, "&lt;script&gt;") {
			t.Errorf("/search?q=%s: want the hostile text escaped on the page", q)
		}
	}
}

// TestThemeCookie: the theme cookie draws <html data-theme> (no flash);
// no cookie, "system" or any other value follows the system.
func TestThemeCookie(t *testing.T) {
	ts := searchServer(t, "", nil)
	for _, tc := range []struct{ cookie, want string }{
		{"", ""}, {"theme=dark", "dark"}, {"theme=light", "light"}, {"theme=system", ""},
		{`theme=dark"><script>`, ""}, {"theme=DARK", ""},
	} {
		h := map[string]string{}
		if tc.cookie != "" {
			h["Cookie"] = tc.cookie
		}
		doc := parseHTML(t, ts.get(t, "/", h).Body.String())
		root := doc.FirstChild
		for root != nil && (root.Type != html.ElementNode || root.Data != "html") {
			root = root.NextSibling
		}
		if root == nil {
			t.Fatal("no <html>")
		}
		if got := attr(root, "data-theme"); got != tc.want {
			t.Errorf("cookie %q: <html data-theme=%q>, want %q", tc.cookie, got, tc.want)
		}
		sel := oneByTestID(t, doc, "theme-toggle")
		want := tc.want
		if want == "" {
			want = "system"
		}
		for c := sel.FirstChild; c != nil; c = c.NextSibling {
			if c.Data == "option" && hasAttr(c, "selected") != (attr(c, "value") == want) {
				t.Errorf("cookie %q: option %q selected=%v, want only %q selected", tc.cookie, attr(c, "value"), hasAttr(c, "selected"), want)
			}
		}
	}
}
