package freezewatch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/audit/recordfeed"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/internal/scope"
	"github.com/hanzoai/deploy-web/internal/sign/signtest"
)

// fakeFreezes is a stored list of freezes.
type fakeFreezes struct{ l freeze.List }

func (f *fakeFreezes) List(context.Context) (freeze.List, error) { return f.l, nil }

// fakeTrail is an audit trail in memory that both replicas share, as the
// audit index every replica keeps; failAppend fails the next Append.
type fakeTrail struct {
	mu         sync.Mutex
	recs       []audit.Record
	failAppend error
}

func (f *fakeTrail) List(_ context.Context, flt audit.Filter) (audit.Page, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []audit.Record
	for _, r := range f.recs {
		if (flt.Verb == "" || r.Verb == flt.Verb) && (flt.Cluster == "" || r.Cluster == flt.Cluster) &&
			(flt.Environment == "" || r.Environment == flt.Environment) &&
			!r.Time.Before(flt.Since) && (flt.Until.IsZero() || !r.Time.After(flt.Until)) {
			out = append(out, r)
		}
	}
	slices.Reverse(out)
	return audit.Page{Records: out}, nil
}

func (f *fakeTrail) Append(_ context.Context, r audit.Record) (audit.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.failAppend; err != nil {
		f.failAppend = nil
		return audit.Record{}, err
	}
	r.ID = fmt.Sprintf("r-%d", len(f.recs)+1)
	f.recs = append(f.recs, r)
	return r, nil
}

// feedOf is a replica's feed of the records of l, on clock.
func feedOf(l audit.Lister, clock func() time.Time) *recordfeed.Feed {
	return recordfeed.New(l, recordfeed.Options{Now: clock})
}

// windows lists the records as "verb time key" in the order appended.
func (f *fakeTrail) windows() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.recs {
		k, _ := KeyOf(r)
		out = append(out, string(r.Verb)+" "+r.Time.UTC().Format("01-02T15:04")+" "+k)
	}
	return out
}

func utc(s string) time.Time {
	t, err := time.Parse("2006-01-02T15:04", s)
	if err != nil {
		panic(err)
	}
	return t
}

// daily is a freeze of prod every day 18:00-20:00 UTC, Dec 1 to Dec 3.
func daily() freeze.Freeze {
	return freeze.Freeze{ID: "fz-daily", Scope: scope.Scope{Environments: []string{"prod"}}, RRule: "FREQ=DAILY;BYHOUR=18;BYMINUTE=0",
		Duration: freeze.Duration(2 * time.Hour), Start: utc("2026-12-01T00:00"), End: utc("2026-12-04T00:00"),
		Created: utc("2026-11-30T09:00"), Reason: "evening batch"}
}

var wantDaily = []string{
	"freeze-start 12-01T18:00 fz-daily@2026-12-01T18:00:00Z", "freeze-end 12-01T20:00 fz-daily@2026-12-01T18:00:00Z",
	"freeze-start 12-02T18:00 fz-daily@2026-12-02T18:00:00Z", "freeze-end 12-02T20:00 fz-daily@2026-12-02T18:00:00Z",
	"freeze-start 12-03T18:00 fz-daily@2026-12-03T18:00:00Z", "freeze-end 12-03T20:00 fz-daily@2026-12-03T18:00:00Z",
}

// TestWatcherWalk steps a watcher every 10 s of a fake clock over three
// days: each window's start and end is recorded once, in order, at its
// own time, in the freezes' stream; a failed write is retried on the
// next step, not lost.
func TestWatcherWalk(t *testing.T) {
	ctx := context.Background()
	now := utc("2026-12-01T00:00")
	trail := &fakeTrail{}
	clock := func() time.Time { return now }
	w := &Watcher{Freezes: &fakeFreezes{freeze.List{daily()}}, Records: trail, Feed: feedOf(trail, clock), Now: clock}
	for ; now.Before(utc("2026-12-04T01:00")); now = now.Add(10 * time.Second) {
		if now.Equal(utc("2026-12-02T18:00")) {
			trail.failAppend = errors.New("apiserver unavailable")
		}
		_, err := w.Step(ctx)
		if err != nil && !now.Equal(utc("2026-12-02T18:00")) {
			t.Fatalf("Step at %v: %v", now, err)
		}
	}
	if diff := cmp.Diff(wantDaily, trail.windows()); diff != "" {
		t.Errorf("records after three days (-want +got):\n%s", diff)
	}
	r := trail.recs[0]
	if r.Cluster != freeze.RecordCluster || r.Environment != freeze.RecordEnvironment || r.Outcome != audit.OutcomeSucceeded ||
		r.Actor.Subject != Subject || !strings.Contains(r.Message, "evening batch") {
		t.Errorf("record = %+v, want the freezes' stream, succeeded, actor %s, the reason in the message", r, Subject)
	}
}

// TestWatcherTwoReplicas: two replicas, the Lease handed from one to the
// other inside a window and with a gap over a window's end (nobody
// leads for 20 s as it ends) and, later, both told they lead for a step
// (a stale leader): still one record per window start and end.
func TestWatcherTwoReplicas(t *testing.T) {
	ctx := context.Background()
	now := utc("2026-12-01T00:00")
	clock := func() time.Time { return now }
	trail := &fakeTrail{}
	fr := &fakeFreezes{freeze.List{daily()}}
	leader := 0 // 0: a, 1: b, -1: nobody, 2: both
	a := &Watcher{Freezes: fr, Records: trail, Feed: feedOf(trail, clock), Now: clock, Active: func() bool { return leader == 0 || leader == 2 }}
	b := &Watcher{Freezes: fr, Records: trail, Feed: feedOf(trail, clock), Now: clock, Active: func() bool { return leader == 1 || leader == 2 }}
	for ; now.Before(utc("2026-12-04T01:00")); now = now.Add(10 * time.Second) {
		switch {
		case now.Equal(utc("2026-12-01T19:00")):
			leader = 1 // a clean handover inside the first window
		case now.Equal(utc("2026-12-02T19:59")):
			leader = -1 // b crashes before the second window ends
		case now.Equal(utc("2026-12-02T20:00").Add(20 * time.Second)):
			leader = 0 // a takes over after the Lease ran out
		case now.Equal(utc("2026-12-03T17:59")):
			leader = 2 // b still thinks it leads for a moment
		case now.Equal(utc("2026-12-03T18:01")):
			leader = 1
		}
		for _, w := range []*Watcher{a, b} {
			if w.Active() {
				if _, err := w.Step(ctx); err != nil {
					t.Fatalf("Step at %v: %v", now, err)
				}
			}
		}
	}
	if diff := cmp.Diff(wantDaily, trail.windows()); diff != "" {
		t.Errorf("records of two replicas (-want +got):\n%s", diff)
	}
}

// TestKeyOf: only a key first in a record of this package's verbs and
// stream counts, so a freeze's reason cannot claim another's window.
func TestKeyOf(t *testing.T) {
	rec := func(v audit.Verb, cluster, msg string) audit.Record {
		return audit.Record{Verb: v, Cluster: cluster, Environment: freeze.RecordEnvironment, Message: msg}
	}
	tests := []struct {
		r    audit.Record
		want string
	}{
		{rec(audit.VerbFreezeStart, freeze.RecordCluster, "[fz-1@2026-12-01T18:00:00Z] scheduled"), "fz-1@2026-12-01T18:00:00Z"},
		{rec(audit.VerbFreezeEnd, freeze.RecordCluster, "[fz-1@2026-12-01T18:00:00Z] scheduled"), "fz-1@2026-12-01T18:00:00Z"},
		{rec(audit.VerbFreeze, freeze.RecordCluster, "[fz-1@2026-12-01T18:00:00Z] by hand"), ""},
		{rec(audit.VerbUnfreeze, freeze.RecordCluster, "[fz-1@2026-12-01T18:00:00Z] ended by hand"), "fz-1@2026-12-01T18:00:00Z"},
		{rec(audit.VerbUnfreeze, freeze.RecordCluster, "ended freeze of env=prod ([fz-1@2026-12-01T18:00:00Z]) at"), ""},
		{rec(audit.VerbFreezeStart, "prod-eu", "[fz-1@2026-12-01T18:00:00Z] other stream"), ""},
		{rec(audit.VerbFreezeStart, freeze.RecordCluster, "scheduled: reason [fz-2@2026-12-01T18:00:00Z]"), ""},
		{rec(audit.VerbFreezeStart, freeze.RecordCluster, "[] empty"), ""},
	}
	for _, tt := range tests {
		got, ok := KeyOf(tt.r)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("KeyOf(%s %s %q) = %q, %v; want %q", tt.r.Verb, tt.r.Cluster, tt.r.Message, got, ok, tt.want)
		}
	}
}

// TestWatcherEndedByHand: a person ends a daily freeze inside its window
// (freeze.Store.End, and the unfreeze record the console writes): the
// schedule records the window's start, no freeze-end of the window the
// unfreeze ended (its key is the unfreeze's), and nothing of the days the
// freeze no longer has.
func TestWatcherEndedByHand(t *testing.T) {
	ctx := context.Background()
	now := utc("2026-12-02T17:00")
	store := freeze.NewStore(fake.NewClientset().CoreV1(), "deploy-web", signtest.Keys()).WithClock(func() time.Time { return now })
	d := daily()
	d.Author = freeze.Author{Subject: "root"}
	f, err := store.Add(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	trail := &fakeTrail{}
	clock := func() time.Time { return now }
	w := &Watcher{Freezes: store, Records: trail, Feed: feedOf(trail, clock), Now: clock}
	for ; now.Before(utc("2026-12-04T01:00")); now = now.Add(10 * time.Second) {
		if now.Equal(utc("2026-12-02T19:00")) {
			_, ended, err := store.End(ctx, f.ID, now)
			if err != nil || ended == nil {
				t.Fatalf("End(%s) in its window = %v, %v; want the window's end edge", f.ID, ended, err)
			}
			if _, err := trail.Append(ctx, audit.Record{Time: now, Verb: audit.VerbUnfreeze, Cluster: freeze.RecordCluster,
				Environment: freeze.RecordEnvironment, Outcome: audit.OutcomeSucceeded, Message: UnfreezeMessage(ended, "ended freeze of env=prod")}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Step(ctx); err != nil {
			t.Fatalf("Step at %v: %v", now, err)
		}
	}
	key := f.ID + "@2026-12-02T18:00:00Z"
	want := []string{"freeze-start 12-02T18:00 " + key, "unfreeze 12-02T19:00 " + key}
	if diff := cmp.Diff(want, trail.windows()); diff != "" {
		t.Errorf("records of a freeze ended by hand at 19:00 (-want +got):\n%s", diff)
	}
}
