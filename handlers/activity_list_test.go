package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/auth"
	"github.com/hanzoai/deploy-web/timeline"
	"github.com/hanzoai/deploy-web/web/paths"
)

func TestParseActivity(t *testing.T) {
	clusters := []string{"in-cluster", "eu"}
	for _, tt := range []struct {
		q     url.Values
		kinds []timeline.Kind
		bad   bool
	}{
		{url.Values{}, nil, false},
		{url.Values{"cluster": {"eu"}, "namespace": {"apps"}, "app": {"web"}, "kind": {"deploy"}}, []timeline.Kind{timeline.KindDeploy}, false},
		{url.Values{"cluster": {"mars"}}, nil, true},
		{url.Values{"kind": {"<script>"}}, nil, true},
		{url.Values{"namespace": {strings.Repeat("n", 254)}}, nil, true},
	} {
		aq, f, err := parseActivity(tt.q, clusters)
		if tt.bad {
			if err == nil {
				t.Errorf("parseActivity(%v) = %+v, nil; want an error", tt.q, aq)
			}
			continue
		}
		if err != nil || f.Cluster != tt.q.Get("cluster") || f.Namespace != tt.q.Get("namespace") || f.App != tt.q.Get("app") ||
			!cmp.Equal(f.Kinds, tt.kinds) || f.Limit != activityPageSize {
			t.Errorf("parseActivity(%v) = %+v, %v; want its filters, kinds %v, a page of %d", tt.q, f, err, tt.kinds, activityPageSize)
		}
	}
}

// activityEntries: 60 restarts of apps/web (more than a page), a deploy of
// infra/cron and a Warning with a hostile message.
func activityEntries() []timeline.Entry {
	var es []timeline.Entry
	for i := range 60 {
		es = append(es, timeline.Entry{Time: testNow.Add(-time.Duration(i+10) * time.Minute), App: webApp, Kind: timeline.KindRestart,
			Ref: "web-1/web", From: "0", To: "1", Message: "n" + string(rune('a'+i%26))})
	}
	cron := timeline.App{Cluster: "in-cluster", Namespace: "infra", Name: "cron"}
	return append(es,
		timeline.Entry{Time: testNow.Add(-time.Minute), App: cron, Kind: timeline.KindDeploy, Ref: "r1"},
		timeline.Entry{Time: testNow.Add(-2 * time.Minute), App: cron, Kind: timeline.KindWarning, Ref: ":Pod:infra:cron-1", Message: "<script>alert(1)</script>"})
}

func TestActivityPage(t *testing.T) {
	ts, _ := newTimelineServer(t, activityEntries()...)
	rowsOf := func(t *testing.T, target string) ([]string, string) {
		t.Helper()
		w := ts.get(t, target, nil)
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s = %d, want 200; body %s", target, w.Code, w.Body)
		}
		if strings.Contains(w.Body.String(), "<script>alert(1)") {
			t.Errorf("GET %s holds the Warning's <script> unescaped", target)
		}
		doc := parseHTML(t, w.Body.String())
		var rows []string
		for _, r := range byTestID(doc, "activity-row") {
			rows = append(rows, attr(r, "data-namespace")+" "+attr(r, "data-kind"))
		}
		next := ""
		if n := byTestID(doc, "activity-next"); len(n) == 1 {
			next = attr(n[0], "href")
		}
		return rows, next
	}
	rows, next := rowsOf(t, paths.Activity(nil))
	if len(rows) != activityPageSize || rows[0] != "infra deploy" || rows[1] != "infra warning" || rows[2] != "apps restart" || next == "" {
		t.Errorf("first page = %d rows starting %q, next %q; want %d newest first (infra deploy, infra warning, apps restart...) and a next page",
			len(rows), rows[:min(3, len(rows))], next, activityPageSize)
	}
	rows, last := rowsOf(t, next)
	if len(rows) != 62-activityPageSize || last != "" {
		t.Errorf("second page = %d rows, next %q; want %d and no next", len(rows), last, 62-activityPageSize)
	}
	rows, _ = rowsOf(t, paths.Activity(url.Values{"namespace": {"infra"}}))
	if diff := cmp.Diff([]string{"infra deploy", "infra warning"}, rows); diff != "" {
		t.Errorf("namespace infra mismatch (-want +got):\n%s", diff)
	}
	rows, _ = rowsOf(t, paths.Activity(url.Values{"kind": {"warning"}}))
	if diff := cmp.Diff([]string{"infra warning"}, rows); diff != "" {
		t.Errorf("kind warning mismatch (-want +got):\n%s", diff)
	}
	for _, q := range []url.Values{{"kind": {"nope"}}, {"continue": {"not-a-token"}}} {
		if w := ts.get(t, paths.Activity(q), nil); w.Code != http.StatusBadRequest {
			t.Errorf("GET /activity?%s = %d, want 400", q.Encode(), w.Code)
		}
	}
}

// TestActivityScoped: a person who may view namespace apps only sees its
// entries, never infra's.
func TestActivityScoped(t *testing.T) {
	ts, _ := newTimelineServer(t, activityEntries()...)
	ts.srv.opts.Roles = walkPolicy(t)
	dee := auth.Identity{Subject: "dee", Email: "dee@example.com", Groups: auth.NewGroupList([]string{"deployers"}), Expires: testNow.Add(time.Hour)}
	ts.auth.id = &dee
	w := ts.get(t, paths.Activity(url.Values{"namespace": {"infra"}}), nil)
	if w.Code != http.StatusOK {
		t.Fatalf("GET /activity as a scoped deployer = %d, want 200", w.Code)
	}
	doc := parseHTML(t, w.Body.String())
	if n := len(byTestID(doc, "activity-row")); n != 0 {
		t.Errorf("GET /activity?namespace=infra as a deployer of apps = %d rows, want 0", n)
	}
	w = ts.get(t, paths.Activity(nil), nil)
	rows := byTestID(parseHTML(t, w.Body.String()), "activity-row")
	if len(rows) != activityPageSize {
		t.Errorf("GET /activity as a deployer of apps = %d rows, want a full page of apps' entries", len(rows))
	}
	for _, r := range rows {
		if ns := attr(r, "data-namespace"); ns != "apps" {
			t.Errorf("GET /activity as a deployer of apps holds a row of namespace %q", ns)
		}
	}
}
