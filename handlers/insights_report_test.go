package handlers

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/insights"
	"github.com/hanzoai/deploy-web/planstore"
	"github.com/hanzoai/deploy-web/timeline"
	"github.com/hanzoai/deploy-web/web/paths"
)

func TestParseInsights(t *testing.T) {
	envs := []string{"dev", "prod"}
	for _, tt := range []struct {
		q     url.Values
		page  bool
		want  insightsRequest
		field string // "" when the query is good
	}{
		{url.Values{}, false, insightsRequest{window: insights.Window30d}, ""},
		{url.Values{"env": {"dev"}, "app": {"web"}, "since": {"7d"}}, false, insightsRequest{env: "dev", app: "web", window: insights.Window7d}, ""},
		{url.Values{"since": {"90d"}, "format": {"csv"}}, true, insightsRequest{window: insights.Window90d, csv: true}, ""},
		{url.Values{"since": {"1d"}}, false, insightsRequest{}, "since"},
		{url.Values{"since": {"<script>"}}, true, insightsRequest{}, "since"},
		{url.Values{"env": {"mars"}}, false, insightsRequest{}, "env"},
		{url.Values{"app": {"Web/../x"}}, false, insightsRequest{}, "app"},
		{url.Values{"app": {strings.Repeat("a", 254)}}, false, insightsRequest{}, "app"},
		{url.Values{"since": {"7d", "30d"}}, false, insightsRequest{}, "since"},
		{url.Values{"limit": {"10"}}, false, insightsRequest{}, "limit"},
		{url.Values{"format": {"csv"}}, false, insightsRequest{}, "format"},
		{url.Values{"format": {"xml"}}, true, insightsRequest{}, "format"},
	} {
		got, err := parseInsights(tt.q, envs, tt.page)
		if tt.field != "" {
			var qe *insights.QueryError
			if !errors.As(err, &qe) || qe.Field != tt.field || !strings.HasPrefix(qe.Public, tt.field+": ") {
				t.Errorf("parseInsights(%v, page %v) error = %v, want a *insights.QueryError of %s", tt.q, tt.page, err, tt.field)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseInsights(%v, page %v) = %+v, %v, want %+v", tt.q, tt.page, got, err, tt.want)
		}
	}
}

// insightsServer is a test server with testEnvConfig's environments (dev
// deploys to namespace staging, prod to production, both in-cluster), an
// audit store and a timeline holding entries.
func insightsServer(t *testing.T, recs []audit.Record, entries ...timeline.Entry) *testServer {
	t.Helper()
	store, _ := newTestAudit(t)
	for _, r := range recs {
		appendTest(t, store, r)
	}
	cfg, err := envconfig.ParseConfig([]byte(testEnvConfig), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runner := envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{Store: planstore.New(fake.NewClientset().CoreV1(), "deploy-web", 10)})
	tl := loadedTimeline(t, func() time.Time { return testNow })
	tl.Record(entries...)
	return newTestServer(t, newFakeView(nil), withAudit(store), func(o *Options) {
		o.Environments = runner
		o.Timeline = tl
		o.EnvClusters = map[string]string{"dev": "in-cluster", "prod": "in-cluster"}
	})
}

// devApply is a succeeded apply of environment dev at commit, started ago
// before testNow and taking a minute, applying the App CRs of names.
func devApply(commit string, ago time.Duration, names ...string) audit.Record {
	r := audit.Record{Time: testNow.Add(-ago), Duration: audit.Duration(time.Minute), Verb: audit.VerbApply, Cluster: "in-cluster",
		Environment: "dev", Namespace: "staging", Commit: commit, Outcome: audit.OutcomeSucceeded, Blockers: []string{}}
	for _, n := range names {
		r.Objects = append(r.Objects, audit.Object{Group: "hanzo.ai", Version: "v1", Kind: "App", Namespace: "staging", Name: n})
	}
	return r
}

// insightsFixture: two applies of dev (web and api), web turning
// Degraded 10 minutes after the second and restored 30 minutes later.
func insightsFixture(t *testing.T) *testServer {
	web := timeline.App{Cluster: "in-cluster", Namespace: "staging", Name: "web"}
	return insightsServer(t, []audit.Record{
		devApply("aaaa", 50*time.Hour, "web", "api"),
		devApply("bbbb", 3*time.Hour, "web", "api"),
	},
		timeline.Entry{Time: testNow.Add(-170 * time.Minute), App: web, Kind: timeline.KindHealth, From: "Healthy", To: "Degraded"},
		timeline.Entry{Time: testNow.Add(-140 * time.Minute), App: web, Kind: timeline.KindHealth, From: "Degraded", To: "Healthy"},
	)
}

// TestInsightsAPI: the JSON has the four metrics' keys, computed from the
// audit records and the timeline, per environment and App; a bad query is
// a 400 with the typed error's text.
func TestInsightsAPI(t *testing.T) {
	ts := insightsFixture(t)
	w := ts.get(t, paths.APIInsights(url.Values{"since": {"7d"}}), nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET insights = %d %s, want 200", w.Code, w.Body)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"deploymentFrequency", "leadTime", "changeFailureRate", "timeToRestore", "rows", "buckets", "window"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("insights JSON has no key %q: %s", k, w.Body)
		}
	}
	var rep insights.Report
	if err := json.Unmarshal(w.Body.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if got := rep.DeploymentFrequency.Deployments; got != 2 {
		t.Errorf("deployments = %d, want 2", got)
	}
	if got := rep.ChangeFailureRate; got.Failures != 1 || got.Rate != 0.5 {
		t.Errorf("changeFailureRate = %+v, want 1 of 2", got)
	}
	if got := rep.TimeToRestore; got.Count != 1 || got.MedianSeconds != 1800 {
		t.Errorf("timeToRestore = %+v, want one of 30 minutes", got)
	}
	rows := map[string]int{}
	for _, r := range rep.Rows {
		rows[r.Environment+"/"+r.App] = r.ChangeFailureRate.Failures
	}
	if diff := cmp.Diff(map[string]int{"dev/": 1, "dev/api": 0, "dev/web": 1}, rows); diff != "" {
		t.Errorf("failures per row mismatch (-want +got):\n%s", diff)
	}

	w = ts.get(t, paths.APIInsights(url.Values{"since": {"365d"}}), nil)
	var e map[string]string
	_ = json.Unmarshal(w.Body.Bytes(), &e)
	if w.Code != http.StatusBadRequest || e["reason"] != reasonInvalidQuery || !strings.Contains(e["error"], "7d, 30d, 90d") {
		t.Errorf("GET insights?since=365d = %d %s, want 400 %s naming the windows", w.Code, w.Body, reasonInvalidQuery)
	}
	if w := ts.get(t, paths.APIInsights(url.Values{"env": {"<b>nope</b>"}}), nil); w.Code != http.StatusBadRequest {
		t.Errorf("GET insights?env=<b>nope</b> = %d, want 400", w.Code)
	}
}

// TestInsightsPage: the page draws a chart per metric and the table, its
// window links and CSV link keep the selection, an HTMX request gets the
// results alone, and ?format=csv answers the rows as CSV.
func TestInsightsPage(t *testing.T) {
	ts := insightsFixture(t)
	target := paths.Insights(url.Values{"env": {"dev"}, "since": {"7d"}})
	w := ts.get(t, target, nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s = %d %s, want 200", target, w.Code, w.Body)
	}
	doc := parseHTML(t, w.Body.String())
	for _, id := range []string{"chart-deploymentFrequency", "chart-leadTime", "chart-changeFailureRate", "chart-timeToRestore"} {
		c := oneByTestID(t, doc, id)
		if got := len(byTestID(c, "chart-bar")); got != 7 {
			t.Errorf("%s has %d bars, want 7 (a day each)", id, got)
		}
	}
	if got := text(oneByTestID(t, doc, "chart-changeFailureRate")); !strings.Contains(got, "50%") {
		t.Errorf("the failure rate chart says %q, want 50%%", got)
	}
	var rows []string
	for _, r := range byTestID(doc, "insights-row") {
		rows = append(rows, attr(r, "data-env")+"/"+attr(r, "data-app"))
	}
	if diff := cmp.Diff([]string{"dev/", "dev/api", "dev/web"}, rows); diff != "" {
		t.Errorf("table rows mismatch (-want +got):\n%s", diff)
	}
	csvURL := attr(oneByTestID(t, doc, "insights-csv"), "href")
	if want := paths.Insights(url.Values{"env": {"dev"}, "since": {"7d"}, "format": {"csv"}}); csvURL != want {
		t.Errorf("CSV link = %q, want %q", csvURL, want)
	}
	for _, l := range byTestID(doc, "insights-window") {
		u, _ := url.Parse(attr(l, "href"))
		if u.Query().Get("env") != "dev" || u.Path != "/insights" {
			t.Errorf("window link %q drops the environment", attr(l, "href"))
		}
	}
	if a := oneByTestID(t, doc, "nav-insights"); !strings.Contains(attr(a, "class"), "active") {
		t.Errorf("the top bar's Insights link is not active on /insights")
	}

	w = ts.get(t, target, htmxHeader)
	if w.Code != http.StatusOK || strings.Contains(w.Body.String(), "<html") || !strings.Contains(w.Body.String(), `id="insights-results"`) {
		t.Errorf("HTMX GET %s = %d, want the results fragment alone", target, w.Code)
	}

	w = ts.get(t, csvURL, nil)
	if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/csv") {
		t.Fatalf("GET %s = %d %s, want 200 text/csv", csvURL, w.Code, w.Header().Get("Content-Type"))
	}
	got, err := csv.NewReader(w.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || !cmp.Equal(got[0], insightsCSVHeader) || got[3][3] != "web" || got[3][9] != "1" || got[3][12] != "1800" {
		t.Errorf("CSV = %v, want the header and the rows dev, api, web (web: 1 failure, restored in 1800s)", got)
	}

	if w := ts.get(t, paths.Insights(url.Values{"since": {"1y"}}), nil); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "since: ") {
		t.Errorf("GET /insights?since=1y = %d, want a 400 page saying what since takes", w.Code)
	}
}

// TestInsightsOnlyVisibleApps: a person who may view only namespace apps
// (the walk's scoped deployer) gets the metrics of those Apps alone.
func TestInsightsOnlyVisibleApps(t *testing.T) {
	web := timeline.App{Cluster: "in-cluster", Namespace: "apps", Name: "web"}
	cron := timeline.App{Cluster: "in-cluster", Namespace: "infra", Name: "cron"}
	rollback := func(a timeline.App) audit.Record {
		return audit.Record{Time: testNow.Add(-time.Hour), Verb: audit.VerbRollback, Cluster: a.Cluster, Namespace: a.Namespace, App: a.Name,
			Outcome: audit.OutcomeSucceeded, Blockers: []string{}}
	}
	ts := insightsServer(t, []audit.Record{rollback(web), rollback(cron)},
		timeline.Entry{Time: testNow.Add(-30 * time.Minute), App: cron, Kind: timeline.KindHealth, From: "Healthy", To: "Degraded"})
	ts.srv.opts.Roles = walkPolicy(t)
	ts.handler = ts.srv.Handler()
	signIn(t, ts, "deployer (scoped)")
	w := ts.do(t, request{target: paths.APIInsights(nil), admin: true})
	if w.Code != http.StatusOK {
		t.Fatalf("GET insights as the scoped deployer = %d %s, want 200", w.Code, w.Body)
	}
	var rep insights.Report
	if err := json.Unmarshal(w.Body.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.DeploymentFrequency.Deployments != 1 || rep.TimeToRestore.Unrestored != 0 || strings.Contains(w.Body.String(), "cron") {
		t.Errorf("the scoped deployer's insights = %s, want web's one rollback and nothing of infra/cron", w.Body)
	}
}

// TestReadPaged: the reads stop at their bound (truncated) and read
// every page below it.
func TestReadPaged(t *testing.T) {
	pages := func(n, size int) func(string) ([]int, string, error) {
		return func(cont string) ([]int, string, error) {
			i := 0
			if cont != "" {
				i, _ = strconv.Atoi(cont)
			}
			items := make([]int, size)
			if i+1 == n {
				return items, "", nil
			}
			return items, strconv.Itoa(i + 1), nil
		}
	}
	for _, tc := range []struct {
		pages, size, limit, want int
		truncated                bool
	}{
		{1, 3, 10, 3, false},
		{3, 3, 10, 9, false},
		{100, 3, 10, 12, true},
		{4, 3, 12, 12, false},
	} {
		got, cut, err := readPaged(tc.limit, pages(tc.pages, tc.size))
		if err != nil || len(got) != tc.want || cut != tc.truncated {
			t.Errorf("readPaged(%d, %d pages of %d) = %d items, truncated %v, %v; want %d, %v", tc.limit, tc.pages, tc.size, len(got), cut, err, tc.want, tc.truncated)
		}
	}
	if _, _, err := readPaged(10, func(string) ([]int, string, error) { return nil, "", errors.New("down") }); err == nil {
		t.Errorf("readPaged of a failing read = nil error, want the error")
	}
}

// TestInsightsInjection: an App name from a record comes back escaped on
// the page.
func TestInsightsInjection(t *testing.T) {
	const hostile = `<img src=x onerror=alert(1)>`
	ts := insightsServer(t, []audit.Record{{Time: testNow.Add(-time.Hour), Verb: audit.VerbRollback, Cluster: "in-cluster", Namespace: "apps",
		App: hostile, Outcome: audit.OutcomeSucceeded, Blockers: []string{}}})
	w := ts.get(t, paths.Insights(nil), nil)
	if w.Code != http.StatusOK || strings.Contains(w.Body.String(), hostile) || !strings.Contains(w.Body.String(), "&lt;img src=x") {
		t.Errorf("GET /insights = %d; want the App's name escaped, not %q", w.Code, hostile)
	}
}
