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
	"github.com/hanzoai/deploy-web/timeline"
	"github.com/hanzoai/deploy-web/web/paths"
)

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
			ended := timeline.Overlay{Kind: "freeze", Start: early.Start, End: testNow.Add(-100 * time.Minute), Reason: "hotfix window", By: "sub root", Ref: early.ID, Scope: "app=web"}
			wantSpans := []timeline.Overlay{ended}
			if tt.want {
				wantSpans = []timeline.Overlay{
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
