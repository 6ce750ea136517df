package freeze

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/internal/scope"
)

// edgeStrings lists edges as "start|end <key>" for comparison.
func edgeStrings(es []Edge) []string {
	var out []string
	for _, e := range es {
		what := "start"
		if e.End {
			what = "end"
		}
		out = append(out, what+" "+e.At().UTC().Format("2006-01-02T15:04")+" "+e.Key())
	}
	return out
}

func TestListEdges(t *testing.T) {
	sc := scope.Scope{Environments: []string{"prod"}}
	daily := Freeze{ID: "fz-daily", Scope: sc, Zone: "Europe/Berlin", RRule: "FREQ=DAILY;BYHOUR=18;BYMINUTE=0",
		Duration: Duration(2 * time.Hour), Start: at(t, "", "2026-12-01T00:00"), End: at(t, "", "2026-12-04T00:00"),
		Created: at(t, "", "2026-11-30T09:00")}
	ahead := Freeze{ID: "fz-ahead", Scope: sc, Start: at(t, "", "2026-12-02T08:00"), End: at(t, "", "2026-12-02T10:00"),
		Created: at(t, "", "2026-12-01T12:00")}
	now := Freeze{ID: "fz-now", Scope: sc, Start: at(t, "", "2026-12-02T08:00").Add(300 * time.Millisecond), End: at(t, "", "2026-12-02T09:00"),
		Created: at(t, "", "2026-12-02T08:00")}
	tests := []struct {
		name        string
		l           List
		after, upTo string
		want        []string
	}{
		{"a daily window in Berlin time: starts and ends, in order", List{daily}, "2026-12-01T00:00", "2026-12-04T00:00", []string{
			"start 2026-12-01T17:00 fz-daily@2026-12-01T17:00:00Z", "end 2026-12-01T19:00 fz-daily@2026-12-01T17:00:00Z",
			"start 2026-12-02T17:00 fz-daily@2026-12-02T17:00:00Z", "end 2026-12-02T19:00 fz-daily@2026-12-02T17:00:00Z",
			"start 2026-12-03T17:00 fz-daily@2026-12-03T17:00:00Z", "end 2026-12-03T19:00 fz-daily@2026-12-03T17:00:00Z"}},
		{"(after, upTo]: an edge at after is out, one at upTo in", List{daily}, "2026-12-01T17:00", "2026-12-02T17:00", []string{
			"end 2026-12-01T19:00 fz-daily@2026-12-01T17:00:00Z", "start 2026-12-02T17:00 fz-daily@2026-12-02T17:00:00Z"}},
		{"inside a window: nothing", List{daily}, "2026-12-02T17:10", "2026-12-02T18:50", nil},
		{"a one-off created ahead starts and ends on record", List{ahead}, "2026-12-02T00:00", "2026-12-03T00:00", []string{
			"start 2026-12-02T08:00 fz-ahead@2026-12-02T08:00:00Z", "end 2026-12-02T10:00 fz-ahead@2026-12-02T08:00:00Z"}},
		{"one that started as it was created: its end only", List{now}, "2026-12-02T00:00", "2026-12-03T00:00", []string{
			"end 2026-12-02T09:00 fz-now@2026-12-02T08:00:00Z"}},
		{"several freezes, by time", List{ahead, daily}, "2026-12-02T00:00", "2026-12-02T18:00", []string{
			"start 2026-12-02T08:00 fz-ahead@2026-12-02T08:00:00Z", "end 2026-12-02T10:00 fz-ahead@2026-12-02T08:00:00Z",
			"start 2026-12-02T17:00 fz-daily@2026-12-02T17:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := edgeStrings(tt.l.Edges(at(t, "", tt.after), at(t, "", tt.upTo)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Edges(%s, %s) (-want +got):\n%s", tt.after, tt.upTo, diff)
			}
		})
	}
}

// TestListEdgesBounded: a freeze of the most occurrences gives at most
// MaxEdges edges, the oldest.
func TestListEdgesBounded(t *testing.T) {
	f := Freeze{ID: "fz-many", Scope: scope.Scope{Environments: []string{"prod"}}, RRule: "FREQ=DAILY;BYHOUR=0,6,12,18",
		Duration: Duration(time.Hour), Start: at(t, "", "2026-01-01T00:00"), End: at(t, "", "2026-09-01T00:00")}
	got := List{f, f}.Edges(at(t, "", "2025-12-31T00:00"), at(t, "", "2026-09-01T00:00"))
	if len(got) != MaxEdges || !got[0].At().Equal(at(t, "", "2026-01-01T00:00")) {
		t.Errorf("Edges of %d windows = %d edges from %v, want %d from 2026-01-01T00:00", 2*MaxOccurrences, len(got), got[0].At(), MaxEdges)
	}
}
