package timeline

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestStoreCoverage: the record of an App is complete from its first
// observation by this store, not from the entries a previous start left
// in the shards (an App that was Degraded while the console was down
// recorded nothing); a Forget starts it again; a log full to PerApp
// starts at its oldest entry.
func TestStoreCoverage(t *testing.T) {
	ctx := context.Background()
	kube, _ := newFakeKube()
	clock := &fakeClock{t: t0}
	s := newTestStore(t, kube, clock, true)
	if got := s.Coverage(testApp); !got.IsZero() {
		t.Errorf("Coverage() before any Observe = %v, want zero", got)
	}
	healthy := State{Health: "Healthy", Sync: "Synced"}
	s.Observe(testApp, healthy)
	clock.Add(time.Minute)
	s.Observe(testApp, State{Health: "Degraded", Sync: "Synced"})
	if got := s.Coverage(testApp); !got.Equal(t0) {
		t.Errorf("Coverage() = %v, want the first observation %v", got, t0)
	}
	s.flush(ctx)

	// A restart: the shards hold the Degraded entry of a minute after t0,
	// but the new store has observed the App only since now.
	clock.Add(time.Hour)
	s2 := newTestStore(t, kube, clock, true)
	if got, _ := s2.Query(ctx, testApp, time.Time{}, time.Time{}); len(got) == 0 {
		t.Fatalf("the restarted store holds no entry of %s, want the one written", testApp)
	}
	if got := s2.Coverage(testApp); !got.IsZero() {
		t.Errorf("Coverage() after a restart, before any Observe = %v, want zero", got)
	}
	restart := clock.Now()
	s2.Observe(testApp, healthy)
	clock.Add(time.Minute)
	s2.Observe(testApp, healthy)
	if got := s2.Coverage(testApp); !got.Equal(restart) {
		t.Errorf("Coverage() after a restart = %v, want its first observation %v", got, restart)
	}
	// Deleted and created again: counted from the new first sight.
	s2.Forget(testApp)
	again := clock.Now()
	s2.Observe(testApp, healthy)
	clock.Add(time.Minute)
	if got := s2.Coverage(testApp); !got.Equal(again) {
		t.Errorf("Coverage() after Forget and Observe = %v, want %v", got, again)
	}
}

func TestStoreCoverageFullLog(t *testing.T) {
	kube, _ := newFakeKube()
	clock := &fakeClock{t: t0}
	s := newTestStore(t, kube, clock, true)
	s.lim.PerApp = 4
	s.Observe(testApp, State{Health: "Healthy"})
	for i := range 6 {
		clock.Add(time.Minute)
		s.Record(Entry{Time: clock.Now(), App: testApp, Kind: KindWarning, Ref: fmt.Sprintf("pod/p%d", i), Message: "m"})
	}
	// Six warnings, four kept: the oldest held is the third, at t0+3m.
	if got, want := s.Coverage(testApp), t0.Add(3*time.Minute); !got.Equal(want) {
		t.Errorf("Coverage() of a log full to PerApp = %v, want its oldest entry %v", got, want)
	}
}

func TestSpans(t *testing.T) {
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	health := func(m int, from, to string) Entry {
		return Entry{Time: at(m), App: testApp, Kind: KindHealth, From: from, To: to, Count: 1}
	}
	flap := health(30, "Healthy", "Degraded")
	flap.Count, flap.Last = 3, at(34)
	tests := []struct {
		name    string
		entries []Entry
		cur     string
		want    []Span
	}{
		{"no entry: the current state", nil, "Healthy", []Span{{From: at(0), To: at(60), State: "Healthy"}}},
		{"an entry before since holds its To", []Entry{health(-10, "Progressing", "Healthy")}, "Degraded",
			[]Span{{From: at(0), To: at(60), State: "Healthy"}}},
		{"before the first entry, its From", []Entry{health(20, "Degraded", "Healthy")}, "Healthy",
			[]Span{{From: at(0), To: at(20), State: "Degraded"}, {From: at(20), To: at(60), State: "Healthy"}}},
		{"a band inside", []Entry{health(-10, "Progressing", "Healthy"), health(10, "Healthy", "Degraded"), health(12, "Degraded", "Healthy"),
			{Time: at(11), Kind: KindDrift, From: DriftClean, To: DriftDrifted}}, "Healthy",
			[]Span{{From: at(0), To: at(10), State: "Healthy"}, {From: at(10), To: at(12), State: "Degraded"}, {From: at(12), To: at(60), State: "Healthy"}}},
		{"a folded flap", []Entry{flap}, "Degraded", []Span{{From: at(0), To: at(30), State: "Healthy"},
			{From: at(30), To: at(34), State: "Degraded", Flapped: "Healthy"}, {From: at(34), To: at(60), State: "Degraded"}}},
		{"entries after until are cut", []Entry{health(70, "Healthy", "Degraded")}, "Degraded",
			[]Span{{From: at(0), To: at(60), State: "Healthy"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Spans(tt.entries, KindHealth, tt.cur, at(0), at(60))
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Spans(%s) mismatch (-want +got):\n%s", tt.name, d)
			}
		})
	}
}
