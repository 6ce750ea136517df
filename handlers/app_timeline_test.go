package handlers

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/timeline"
	"github.com/hanzoai/deploy-web/web/paths"
)

func TestTimelineWindow(t *testing.T) {
	for _, tt := range []struct {
		rng, label string
		span       time.Duration
		bad        bool
	}{
		{"", "24h", 24 * time.Hour, false},
		{"1h", "1h", time.Hour, false},
		{"7d", "7d", 7 * 24 * time.Hour, false},
		{"30d", "30d", 30 * 24 * time.Hour, false},
		{"31d", "", 0, true},
		{"<script>", "", 0, true},
	} {
		label, since, until, err := timelineWindow(tt.rng, testNow)
		if tt.bad {
			if err == nil {
				t.Errorf("timelineWindow(%q) = %q, nil; want an error", tt.rng, label)
			}
			continue
		}
		if err != nil || label != tt.label || !until.Equal(testNow) || until.Sub(since) != tt.span {
			t.Errorf("timelineWindow(%q) = %q, %v, %v, %v; want %q, a span of %v to now", tt.rng, label, since, until, err, tt.label, tt.span)
		}
	}
}

func TestAPITimelineWindow(t *testing.T) {
	at := func(d time.Duration) time.Time { return testNow.Add(d) }
	rfc := func(d time.Duration) string { return at(d).Format(time.RFC3339) }
	for _, tt := range []struct {
		name         string
		q            url.Values
		since, until time.Time
		bad          bool
	}{
		{"defaults", url.Values{}, at(-24 * time.Hour), testNow, false},
		{"since only", url.Values{"since": {rfc(-time.Hour)}}, at(-time.Hour), testNow, false},
		{"until only", url.Values{"until": {rfc(-time.Hour)}}, at(-25 * time.Hour), at(-time.Hour), false},
		{"both", url.Values{"since": {rfc(-3 * time.Hour)}, "until": {rfc(-2 * time.Hour)}}, at(-3 * time.Hour), at(-2 * time.Hour), false},
		{"not a time", url.Values{"since": {"yesterday"}}, time.Time{}, time.Time{}, true},
		{"since after until", url.Values{"since": {rfc(-time.Hour)}, "until": {rfc(-2 * time.Hour)}}, time.Time{}, time.Time{}, true},
		{"since equals until", url.Values{"since": {rfc(-time.Hour)}, "until": {rfc(-time.Hour)}}, time.Time{}, time.Time{}, true},
		{"more than 30 days", url.Values{"since": {rfc(-31 * 24 * time.Hour)}}, time.Time{}, time.Time{}, true},
	} {
		since, until, err := apiTimelineWindow(tt.q, testNow)
		if tt.bad {
			if err == nil {
				t.Errorf("%s: apiTimelineWindow(%v) = %v, %v, nil; want an error", tt.name, tt.q, since, until)
			}
			continue
		}
		if err != nil || !since.Equal(tt.since) || !until.Equal(tt.until) {
			t.Errorf("%s: apiTimelineWindow(%v) = %v, %v, %v; want %v, %v", tt.name, tt.q, since, until, err, tt.since, tt.until)
		}
	}
}

// loadedTimeline is a real timeline store on a fake clientset, on clock
// now, loaded (Ready) and running until the test ends.
func loadedTimeline(t *testing.T, now func() time.Time) *timeline.Store {
	t.Helper()
	store, err := timeline.New(fake.NewClientset().CoreV1(), timeline.Options{Namespace: "deploy-web", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = store.Run(t.Context()) }()
	select {
	case <-store.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("timeline store not loaded within 10s")
	}
	return store
}

// newTimelineServer is a test server whose view knows apps/web and whose
// timeline is a real store (on a fake clientset) holding entries.
func newTimelineServer(t *testing.T, entries ...timeline.Entry) (*testServer, *timeline.Store) {
	t.Helper()
	store := loadedTimeline(t, func() time.Time { return testNow })
	store.Record(entries...)
	ts := newTestServer(t, newFakeView(nil), func(o *Options) { o.Timeline = store })
	ts.srv.clusters[0].View = appView{ts.view}
	ts.handler = ts.srv.Handler()
	return ts, store
}

var webApp = timeline.App{Cluster: "in-cluster", Namespace: "apps", Name: "web"}

// webEntries: a deploy of environment production (its diff from record
// 1 to record 2), the App going Degraded after it, restarts, and a
// Warning with a hostile message.
func webEntries() []timeline.Entry {
	return []timeline.Entry{
		{Time: testNow.Add(-3 * time.Hour), App: webApp, Kind: timeline.KindHealth, From: "Progressing", To: "Healthy"},
		{Time: testNow.Add(-2 * time.Hour), App: webApp, Kind: timeline.KindDeploy, From: "0123456789abcdef-0000000001", To: "production",
			Ref: "0123456789abcdef-0000000002", Message: "apply of production by ada@example.com: succeeded"},
		{Time: testNow.Add(-90 * time.Minute), App: webApp, Kind: timeline.KindHealth, From: "Healthy", To: "Degraded", Message: "0 of 3 replicas available"},
		{Time: testNow.Add(-80 * time.Minute), App: webApp, Kind: timeline.KindRestart, From: "0", To: "1", Ref: "web-2/web"},
		{Time: testNow.Add(-70 * time.Minute), App: webApp, Kind: timeline.KindWarning, Ref: ":Pod:apps:web-2", Message: "BackOff: <script>alert(1)</script>"},
		{Time: testNow.Add(-time.Minute), App: timeline.App{Cluster: "in-cluster", Namespace: "apps", Name: "api"}, Kind: timeline.KindDeploy, Ref: "other"},
	}
}

func TestAppTimelinePage(t *testing.T) {
	ts, _ := newTimelineServer(t, webEntries()...)
	w := ts.get(t, paths.AppTimeline("in-cluster", "apps", "web", url.Values{"range": {"24h"}}), nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET timeline = %d, want 200; body %s", w.Code, w.Body)
	}
	body := w.Body.String()
	if strings.Contains(body, "<script>alert(1)") {
		t.Errorf("timeline page holds the Warning's <script> unescaped")
	}
	doc := parseHTML(t, body)
	rows := byTestID(doc, "timeline-row")
	var kinds []string
	for _, r := range rows {
		kinds = append(kinds, attr(r, "data-kind"))
	}
	if diff := cmp.Diff([]string{"warning", "restart", "health", "deploy", "health"}, kinds); diff != "" {
		t.Errorf("timeline rows, newest first, mismatch (-want +got):\n%s", diff)
	}
	wantDiff := paths.EnvDiff("production", url.Values{"from": {"0123456789abcdef-0000000001"}, "to": {"0123456789abcdef-0000000002"}})
	if got := attr(oneByTestID(t, doc, "timeline-diff"), "href"); got != wantDiff {
		t.Errorf("the deploy row's diff link = %q, want %q", got, wantDiff)
	}
	// The red band jumps to the deploy before it: its diff.
	var jumps []string
	for _, a := range byTestID(doc, "tl-band-link") {
		jumps = append(jumps, attr(a, "href"))
	}
	if diff := cmp.Diff([]string{wantDiff}, jumps); diff != "" {
		t.Errorf("band links mismatch (-want +got):\n%s", diff)
	}
	var marks []string
	for _, m := range byTestID(doc, "tl-mark") {
		marks = append(marks, attr(m, "data-class"))
	}
	if diff := cmp.Diff([]string{"tl-deploy", "tl-restart", "tl-warning"}, marks); diff != "" {
		t.Errorf("chart marks mismatch (-want +got):\n%s", diff)
	}
	if on := byTestID(doc, "range-24h"); len(on) != 1 || attr(on[0], "aria-current") != "page" {
		t.Errorf("range-24h is not marked current")
	}

	// One hour: only the Warning is in range; the Degraded band covers it.
	w = ts.get(t, paths.AppTimeline("in-cluster", "apps", "web", url.Values{"range": {"1h"}}), nil)
	doc = parseHTML(t, w.Body.String())
	if n := len(byTestID(doc, "timeline-row")); n != 0 {
		t.Errorf("range 1h: %d rows, want 0 (the newest entry is 70 minutes old)", n)
	}
	var classes []string
	for _, b := range byTestID(doc, "tl-band") {
		classes = append(classes, attr(b, "data-class"))
	}
	if diff := cmp.Diff([]string{"tl-health-degraded"}, classes); diff != "" {
		t.Errorf("range 1h: bands mismatch (-want +got):\n%s", diff)
	}
	if n := len(byTestID(doc, "tl-band-link")); n != 1 {
		t.Errorf("range 1h: %d band links, want 1 (the Degraded band, to the deploy before the range)", n)
	}

	w = ts.get(t, paths.AppTimeline("in-cluster", "apps", "web", url.Values{"range": {"2y"}}), nil)
	if w.Code != http.StatusBadRequest {
		t.Errorf("GET timeline?range=2y = %d, want 400", w.Code)
	}
	w = ts.get(t, paths.AppTimeline("in-cluster", "apps", "nope", nil), nil)
	if w.Code != http.StatusNotFound {
		t.Errorf("GET timeline of an unknown App = %d, want 404", w.Code)
	}
	w = ts.get(t, paths.AppTimeline("in-cluster", "apps", "web", url.Values{"range": {"24h"}, "fragment": {"chart"}}), htmxHeader)
	if w.Code != http.StatusOK || !strings.HasPrefix(strings.TrimSpace(w.Body.String()), `<figure id="tl-chart"`) {
		t.Errorf("GET timeline?fragment=chart = %d, %.80q; want the chart alone", w.Code, w.Body.String())
	}
}

func TestAppTimelineOff(t *testing.T) {
	ts := newTestServer(t, newFakeView(nil))
	ts.srv.clusters[0].View = appView{ts.view}
	ts.handler = ts.srv.Handler()
	w := ts.get(t, paths.AppTimeline("in-cluster", "apps", "web", nil), nil)
	if w.Code != http.StatusOK || len(byTestID(parseHTML(t, w.Body.String()), "timeline-off")) != 1 {
		t.Errorf("GET timeline without a store = %d, want 200 saying it is off", w.Code)
	}
	if w := ts.get(t, paths.APITimeline("web", nil), nil); w.Code != http.StatusNotFound {
		t.Errorf("GET API timeline without a store = %d, want 404", w.Code)
	}
}

func TestAPITimeline(t *testing.T) {
	ts, _ := newTimelineServer(t, webEntries()...)
	w := ts.get(t, paths.APITimeline("web", url.Values{"since": {testNow.Add(-100 * time.Minute).Format(time.RFC3339)}}), nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET API timeline = %d, want 200; body %s", w.Code, w.Body)
	}
	var got timelineJSON
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	var kinds []timeline.Kind
	for _, e := range got.Entries {
		kinds = append(kinds, e.Kind)
	}
	if diff := cmp.Diff([]timeline.Kind{timeline.KindHealth, timeline.KindRestart, timeline.KindWarning}, kinds); diff != "" {
		t.Errorf("API entries, oldest first, since 100m ago mismatch (-want +got):\n%s", diff)
	}
	if got.App != webApp || !got.Until.Equal(testNow) || got.Truncated {
		t.Errorf("API answer = app %v, until %v, truncated %v; want %v, %v, false", got.App, got.Until, got.Truncated, webApp, testNow)
	}
	if w := ts.get(t, paths.APITimeline("web", url.Values{"since": {"soon"}}), nil); w.Code != http.StatusBadRequest {
		t.Errorf("GET API timeline?since=soon = %d, want 400", w.Code)
	}
}

// TestAppTimelineStream: an entry of the App recorded while the stream is
// open arrives as one "entry" event holding its row; another App's does
// not.
func TestAppTimelineStream(t *testing.T) {
	ts, store := newTimelineServer(t)
	srv := httptest.NewServer(ts.handler)
	defer srv.Close()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+paths.AppTimelineStream("in-cluster", "apps", "web"), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(testUserHeader, "admin")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET stream = %d %s, want 200 text/event-stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	store.Record(
		timeline.Entry{Time: testNow.Add(-time.Second), App: timeline.App{Cluster: "in-cluster", Namespace: "apps", Name: "api"}, Kind: timeline.KindRestart, Ref: "api-1/api", To: "1"},
		timeline.Entry{Time: testNow, App: webApp, Kind: timeline.KindOOM, To: "OOMKilled", Ref: "web-2/web\n<b>x</b>"},
	)
	sc := bufio.NewScanner(resp.Body)
	var lines []string
	for sc.Scan() {
		if sc.Text() == "" && len(lines) > 0 {
			break
		}
		if sc.Text() != "" && !strings.HasPrefix(sc.Text(), ":") {
			lines = append(lines, sc.Text())
		}
	}
	if len(lines) < 2 || lines[0] != "event: entry" {
		t.Fatalf("stream = %q, want an entry event", lines)
	}
	data := strings.Join(lines[1:], "\n")
	for _, want := range []string{`data-kind="OOM kill"`, "web-2/web", "&lt;b&gt;x&lt;/b&gt;"} {
		if !strings.Contains(data, want) {
			t.Errorf("entry event %q does not hold %q", data, want)
		}
	}
	if strings.Contains(data, "api-1") {
		t.Errorf("entry event %q holds another App's entry", data)
	}
}
