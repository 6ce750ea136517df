package overlays

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/gitops"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/timeline"
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

func spansOf(since time.Time, got []timeline.Overlay) []tlSpan {
	var out []tlSpan
	for _, s := range got {
		out = append(out, tlSpan{s.Kind, s.Start.Sub(since).Hours(), s.End.Sub(since).Hours(), s.Ref, s.Ended, s.Reason + "|" + s.By + "|" + s.Ticket})
	}
	return out
}

// TestFreezes: the windows of the freezes that hold an App (the
// gate's scope rule) and overlap the range, whole, bounded.
func TestFreezes(t *testing.T) {
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
				limit = Max
			}
			// The wide range of the bound case holds 10 windows before it.
			s, u := since, until
			if tt.cut {
				s = since.Add(-10 * 24 * time.Hour)
			}
			got, cut := Freezes(tt.list, tt.target, s, u, limit)
			if d := cmp.Diff(tt.want, spansOf(since, got)); d != "" || cut != tt.cut {
				t.Errorf("Freezes(%s) = cut %v, want %v; spans mismatch (-want +got):\n%s", tt.name, cut, tt.cut, d)
			}
		})
	}
}

// TestPauses: the auto-sync pauses of the App's environments, from
// their pause and resume records.
func TestPauses(t *testing.T) {
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
				limit = Max
			}
			got, cut := Pauses(tt.recs, []string{"prod"}, since, until, limit)
			if d := cmp.Diff(tt.want, spansOf(since, got)); d != "" || cut != tt.cut {
				t.Errorf("Pauses(%s) = cut %v, want %v; spans mismatch (-want +got):\n%s", tt.name, cut, tt.cut, d)
			}
		})
	}
}
