package handlers

import (
	"encoding/json"
	"github.com/hanzoai/deploy-web/envconfig"
	"github.com/hanzoai/deploy-web/gitops"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/envrun"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
	"github.com/hanzoai/deploy-web/web/paths"
	"github.com/hanzoai/deploy-web/web/templates"
)

// span is what the span tests compare: kind, times as hours from the
// range's start, the freeze or environment, and whether ended early.
type tlSpan struct {
	Kind       string
	From, To   float64
	Ref        string
	Ended      bool
	ReasonByTk string
}

func spansOf(since time.Time, got []templates.TimelineSpan) []tlSpan {
	var out []tlSpan
	for _, s := range got {
		out = append(out, tlSpan{s.Kind, s.Start.Sub(since).Hours(), s.End.Sub(since).Hours(), s.Ref, s.Ended, s.Reason + "|" + s.By + "|" + s.Ticket})
	}
	return out
}

// TestFreezeSpans: the windows of the freezes that hold an App (the
// gate's scope rule) and overlap the range, whole, bounded.
func TestFreezeSpans(t *testing.T) {
	since := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	until := since.Add(24 * time.Hour)
	at := func(h float64) time.Time { return since.Add(time.Duration(h * float64(time.Hour))) }
	web := freeze.Target{Cluster: "in-cluster", Environment: "prod", Namespace: "shop", App: "web"}
	fz := func(id string, sc scope.Scope, from, to float64) freeze.Freeze {
		return freeze.Freeze{ID: id, Scope: sc, Start: at(from), End: at(to), Reason: "release " + id, Ticket: "https://t.example/" + id,
			Author: freeze.Author{Email: "alice@example.com", Subject: "alice"}}
	}
	nightly := func(id string, from, to float64) freeze.Freeze {
		f := fz(id, scope.Scope{Environments: []string{"prod"}}, from, to)
		f.RRule, f.Duration = "FREQ=DAILY;BYHOUR=22;BYMINUTE=0", freeze.Duration(8*time.Hour)
		return f
	}
	prod := scope.Scope{Environments: []string{"prod"}}
	for _, tt := range []struct {
		name   string
		list   freeze.List
		target freeze.Target
		max    int
		want   []tlSpan
		cut    bool
	}{
		{name: "one-off freeze of the App's environment", list: freeze.List{fz("fz-a", prod, 2, 5)}, target: web,
			want: []tlSpan{{"freeze", 2, 5, "fz-a", false, "release fz-a|alice@example.com (sub alice)|https://t.example/fz-a"}}},
		{name: "recurring across both range edges: windows given whole", list: freeze.List{nightly("fz-n", -48, 72)}, target: web,
			want: []tlSpan{{"freeze", -2, 6, "fz-n", false, "release fz-n|alice@example.com (sub alice)|https://t.example/fz-n"},
				{"freeze", 22, 30, "fz-n", false, "release fz-n|alice@example.com (sub alice)|https://t.example/fz-n"}}},
		{name: "series ending mid-window: the window ends at the series' end", list: freeze.List{nightly("fz-e", -48, 23)}, target: web,
			want: []tlSpan{{"freeze", -2, 6, "fz-e", false, "release fz-e|alice@example.com (sub alice)|https://t.example/fz-e"},
				{"freeze", 22, 23, "fz-e", false, "release fz-e|alice@example.com (sub alice)|https://t.example/fz-e"}}},
		{name: "scope that does not cover the App", list: freeze.List{fz("fz-s", scope.Scope{Environments: []string{"staging"}}, 2, 5)}, target: web},
		{name: "environment scope and an App no environment deploys", list: freeze.List{fz("fz-a", prod, 2, 5)},
			target: freeze.Target{Cluster: "in-cluster", Environment: freeze.NoEnvironment, Namespace: "shop", App: "web"}},
		{name: "every environment holds an App of none", list: freeze.List{fz("fz-all", scope.Scope{Environments: []string{"*"}}, 2, 5)},
			target: freeze.Target{Cluster: "in-cluster", Environment: freeze.NoEnvironment, Namespace: "shop", App: "web"},
			want:   []tlSpan{{"freeze", 2, 5, "fz-all", false, "release fz-all|alice@example.com (sub alice)|https://t.example/fz-all"}}},
		{name: "selector scope that matches", list: freeze.List{fz("fz-w", scope.Scope{Namespaces: []string{"sh*"}, Apps: []string{"w*"}}, 1, 2)}, target: web,
			want: []tlSpan{{"freeze", 1, 2, "fz-w", false, "release fz-w|alice@example.com (sub alice)|https://t.example/fz-w"}}},
		{name: "selector scope that does not match", list: freeze.List{fz("fz-x", scope.Scope{Apps: []string{"api-*"}}, 1, 2)}, target: web},
		{name: "range with no window: before and after it", list: freeze.List{fz("fz-b", prod, -10, 0), fz("fz-f", prod, 24, 30)}, target: web},
		{name: "bound: the newest kept", list: freeze.List{nightly("fz-n", -24*10, 24*10)}, target: web, max: 2, cut: true,
			want: []tlSpan{{"freeze", -2, 6, "fz-n", false, "release fz-n|alice@example.com (sub alice)|https://t.example/fz-n"},
				{"freeze", 22, 30, "fz-n", false, "release fz-n|alice@example.com (sub alice)|https://t.example/fz-n"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			limit := tt.max
			if limit == 0 {
				limit = maxTimelineSpans
			}
			// The wide range of the bound case holds 10 windows before it.
			s, u := since, until
			if tt.cut {
				s = since.Add(-10 * 24 * time.Hour)
			}
			got, cut := freezeSpans(tt.list, tt.target, s, u, limit)
			if d := cmp.Diff(tt.want, spansOf(since, got)); d != "" || cut != tt.cut {
				t.Errorf("freezeSpans(%s) = cut %v, want %v; spans mismatch (-want +got):\n%s", tt.name, cut, tt.cut, d)
			}
		})
	}
}

// TestPauseSpans: the auto-sync pauses of the App's environments, from
// their pause and resume records.
func TestPauseSpans(t *testing.T) {
	since := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	until := since.Add(24 * time.Hour)
	at := func(h float64) time.Time { return since.Add(time.Duration(h * float64(time.Hour))) }
	n := 0
	rec := func(verb audit.Verb, env string, h, untilH float64, outcome audit.Outcome) audit.Record {
		n++
		r := audit.Record{ID: "s-" + string(rune('a'+n)), Time: at(h), Verb: verb, Environment: env, Outcome: outcome,
			Actor: audit.Actor{Email: "bob@example.com", Subject: "bob"}}
		if verb == audit.VerbPause {
			r.Message = gitops.PauseMessage(env, at(untilH), "incident: 42")
		} else {
			r.Message = "auto-sync of " + env + " resumed (paused by bob: incident: 42)"
		}
		return r
	}
	ok := audit.OutcomeSucceeded
	by := "incident: 42|bob@example.com (sub bob)|"
	for _, tt := range []struct {
		name string
		recs []audit.Record
		max  int
		want []tlSpan
		cut  bool
	}{
		{name: "resumed early: ends when resumed", recs: []audit.Record{rec(audit.VerbResume, "prod", 5, 0, ok), rec(audit.VerbPause, "prod", 2, 10, ok)},
			want: []tlSpan{{"pause", 2, 5, "prod", true, by}}},
		{name: "lapses at its time", recs: []audit.Record{rec(audit.VerbPause, "prod", 2, 4, ok), rec(audit.VerbResume, "prod", 6, 0, ok)},
			want: []tlSpan{{"pause", 2, 4, "prod", false, by}}},
		{name: "replaced by a later pause", recs: []audit.Record{rec(audit.VerbPause, "prod", 2, 10, ok), rec(audit.VerbPause, "prod", 3, 30, ok)},
			want: []tlSpan{{"pause", 2, 3, "prod", false, by}, {"pause", 3, 30, "prod", false, by}}},
		{name: "started before the range", recs: []audit.Record{rec(audit.VerbPause, "prod", -30, 1, ok)},
			want: []tlSpan{{"pause", -30, 1, "prod", false, by}}},
		{name: "over before the range", recs: []audit.Record{rec(audit.VerbPause, "prod", -30, -1, ok)}},
		{name: "another environment, a refused pause, a message of another form",
			recs: []audit.Record{rec(audit.VerbPause, "staging", 2, 4, ok), rec(audit.VerbPause, "prod", 2, 4, audit.OutcomeRefused),
				{ID: "x", Time: at(3), Verb: audit.VerbPause, Environment: "prod", Outcome: ok, Message: "paused until whenever"}}},
		{name: "bound: the newest kept", max: 1, cut: true,
			recs: []audit.Record{rec(audit.VerbPause, "prod", 1, 2, ok), rec(audit.VerbPause, "prod", 3, 4, ok)},
			want: []tlSpan{{"pause", 3, 4, "prod", false, by}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			limit := tt.max
			if limit == 0 {
				limit = maxTimelineSpans
			}
			got, cut := pauseSpans(tt.recs, []string{"prod"}, since, until, limit)
			if d := cmp.Diff(tt.want, spansOf(since, got)); d != "" || cut != tt.cut {
				t.Errorf("pauseSpans(%s) = cut %v, want %v; spans mismatch (-want +got):\n%s", tt.name, cut, tt.cut, d)
			}
		})
	}
}

// TestAppTimelineFreezeBand: an App of a frozen environment shows the
// freeze and the environment's auto-sync pause on its Timeline tab (bands
// of their lanes, titled with reason, author and ticket; rows at their
// starts and ends) and in the JSON; the same App outside the environment
// shows neither. A freeze of the App ended early by hand shows in both,
// ending when it was ended.
func TestAppTimelineFreezeBand(t *testing.T) {
	for _, tt := range []struct {
		name, namespace string
		want            bool
	}{{"App of the frozen environment", "apps", true}, {"App outside it", "elsewhere", false}} {
		t.Run(tt.name, func(t *testing.T) {
			ts, _ := newTimelineServer(t, webEntries()...)
			cfg, err := envconfig.ParseConfig([]byte("environments:\n  - {name: dev, cluster: {context: test}, namespace: "+tt.namespace+", source: {path: m}, catalog: catalog.json}\n"), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			clock := &freezeClock{now: testNow.Add(-6 * time.Hour)}
			gate := freeze.NewGate(freeze.NewStore(fake.NewClientset().CoreV1(), "deploy-web", signtest.Keys()).WithClock(clock.Now))
			f, err := gate.Store().Add(t.Context(), freeze.Freeze{Scope: scope.Scope{Environments: []string{"dev"}}, Start: testNow.Add(-5 * time.Hour),
				End: testNow.Add(-4 * time.Hour), Reason: "release <b>week</b>", Ticket: "https://tickets.example.com/CHG-1",
				Author: freeze.Author{Email: "root@example.com", Subject: "root"}})
			if err != nil {
				t.Fatal(err)
			}
			// A freeze a person ended early: its band ends then.
			early, err := gate.Store().Add(t.Context(), freeze.Freeze{Scope: scope.Scope{Apps: []string{"web"}}, Start: testNow.Add(-2 * time.Hour),
				End: testNow.Add(5 * time.Hour), Reason: "hotfix window", Author: freeze.Author{Subject: "root"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := gate.Store().End(t.Context(), early.ID, testNow.Add(-100*time.Minute)); err != nil {
				t.Fatal(err)
			}
			clock.now = testNow
			au, _ := newTestAudit(t)
			appendTest(t, au, audit.Record{Time: testNow.Add(-3 * time.Hour), Verb: audit.VerbPause, Cluster: "in-cluster", Environment: "dev", Namespace: tt.namespace,
				Actor: audit.Actor{Email: "bob@example.com"}, Message: gitops.PauseMessage("dev", testNow.Add(time.Hour), "incident 42")})
			appendTest(t, au, audit.Record{Time: testNow.Add(-150 * time.Minute), Verb: audit.VerbResume, Cluster: "in-cluster", Environment: "dev", Namespace: tt.namespace,
				Actor: audit.Actor{Email: "bob@example.com"}})
			ts.srv.opts.Environments = envrun.New(cfg, slog.New(slog.DiscardHandler), envrun.Options{})
			ts.srv.opts.EnvClusters = map[string]string{"dev": "in-cluster"}
			ts.srv.opts.Freezes, ts.srv.opts.Audit = gate, au
			ts.srv.ops = ts.srv.newWorkflows() // the workflows see the options changed above
			ts.handler = ts.srv.Handler()

			w := ts.get(t, paths.AppTimeline("in-cluster", "apps", "web", url.Values{"range": {"24h"}}), nil)
			if w.Code != http.StatusOK {
				t.Fatalf("GET timeline = %d, want 200", w.Code)
			}
			doc := parseHTML(t, w.Body.String())
			var classes []string
			var titles string
			for _, b := range byTestID(doc, "tl-band") {
				if c := attr(b, "data-class"); c == "tl-freeze" || c == "tl-pause" {
					classes = append(classes, c)
					titles += text(b) + "\n"
				}
			}
			var changes []string
			for _, r := range byTestID(doc, "timeline-row") {
				if k := attr(r, "data-kind"); k == "freeze" || k == "auto-sync" {
					changes = append(changes, k+" "+strings.TrimSpace(text(byTestID(r, "timeline-change")[0])))
				}
			}
			// The App-scoped freeze holds web in either environment.
			want, wantRows := []string{"tl-freeze"}, []string{"freeze end", "freeze start"}
			if tt.want {
				want = []string{"tl-freeze", "tl-freeze", "tl-pause"}
				wantRows = []string{"freeze end", "freeze start", "auto-sync resumed", "auto-sync paused", "freeze end", "freeze start"}
			}
			if d := cmp.Diff(want, classes); d != "" {
				t.Errorf("freeze and pause bands of the page mismatch (-want +got):\n%s", d)
			}
			if d := cmp.Diff(wantRows, changes); d != "" {
				t.Errorf("freeze and pause rows of the table, newest first, mismatch (-want +got):\n%s", d)
			}
			for _, s := range []string{"release <b>week</b>", "root@example.com", "https://tickets.example.com/CHG-1", "incident 42", "bob@example.com"} {
				if tt.want && !strings.Contains(titles, s) {
					t.Errorf("band titles %q lack %q", titles, s)
				}
			}
			if strings.Contains(w.Body.String(), "release <b>week</b>") {
				t.Errorf("page holds the freeze's reason unescaped")
			}

			w = ts.get(t, paths.APITimeline("web", nil), nil)
			var got timelineJSON
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusOK {
				t.Fatalf("GET API timeline = %d %s, %v; want 200", w.Code, w.Body, err)
			}
			ended := templates.TimelineSpan{Kind: "freeze", Start: early.Start, End: testNow.Add(-100 * time.Minute), Reason: "hotfix window", By: "sub root", Ref: early.ID, Scope: "app=web"}
			wantSpans := []templates.TimelineSpan{ended}
			if tt.want {
				wantSpans = []templates.TimelineSpan{
					{Kind: "freeze", Start: f.Start, End: f.End, Reason: f.Reason, By: "root@example.com (sub root)", Ticket: f.Ticket, Ref: f.ID, Scope: "env=dev"},
					{Kind: "pause", Start: testNow.Add(-3 * time.Hour), End: testNow.Add(-150 * time.Minute), Reason: "incident 42", By: "bob@example.com", Ref: "dev", Scope: "dev", Ended: true},
					ended,
				}
			}
			if d := cmp.Diff(wantSpans, got.Spans, cmpopts.EquateEmpty()); d != "" || got.SpansTruncated {
				t.Errorf("API spans (truncated %v) mismatch (-want +got):\n%s", got.SpansTruncated, d)
			}
		})
	}
}
