package recordentries

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/audit/recordfeed"
	"github.com/hanzoai/deploy-web/timeline"
)

func TestEntries(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	isApp := func(cluster, group, kind string) bool {
		return cluster == "prod" && group == "hanzo.ai" && kind == "App"
	}
	objs := []audit.Object{{Group: "hanzo.ai", Kind: "App", Namespace: "shop", Name: "checkout"},
		{Group: "apps", Kind: "Deployment", Namespace: "shop", Name: "checkout"}, {Group: "hanzo.ai", Kind: "App", Namespace: "shop", Name: "cart"}}
	stream := "0123456789abcdef"
	apply := func(seq string, at time.Time, outcome audit.Outcome) audit.Record {
		return audit.Record{ID: stream + "-" + seq, Time: at, Verb: audit.VerbApply, Cluster: "prod", Environment: "production",
			Commit: "0123456789abcdef0123", Outcome: outcome, Actor: audit.Actor{Email: "alice@example.com"}, Objects: objs}
	}
	checkout := timeline.App{Cluster: "prod", Namespace: "shop", Name: "checkout"}
	cart := timeline.App{Cluster: "prod", Namespace: "shop", Name: "cart"}
	f := NewRecordEntries(isApp)
	// Newest first, as List gives them.
	first := f.Entries([]audit.Record{
		apply("0000000003", t0.Add(2*time.Minute), audit.OutcomeRefused),
		apply("0000000002", t0.Add(time.Minute), audit.OutcomeSucceeded),
		apply("0000000001", t0, audit.OutcomeSucceeded),
	})
	msg := "apply of production by alice@example.com at 0123456789ab: succeeded"
	want := []timeline.Entry{
		{Time: t0, App: checkout, Kind: timeline.KindDeploy, To: "production", Ref: stream + "-0000000001", Message: msg},
		{Time: t0, App: cart, Kind: timeline.KindDeploy, To: "production", Ref: stream + "-0000000001", Message: msg},
		{Time: t0.Add(time.Minute), App: checkout, Kind: timeline.KindDeploy, From: stream + "-0000000001", To: "production", Ref: stream + "-0000000002", Message: msg},
		{Time: t0.Add(time.Minute), App: cart, Kind: timeline.KindDeploy, From: stream + "-0000000001", To: "production", Ref: stream + "-0000000002", Message: msg},
	}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Errorf("entries(three applies, one refused) mismatch (-want +got):\n%s", diff)
	}
	other := []audit.Record{
		{ID: "aaaaaaaaaaaaaaaa-0000000001", Time: t0.Add(3 * time.Minute), Verb: audit.VerbRollback, Cluster: "prod", Namespace: "shop", App: "checkout",
			Outcome: audit.OutcomeSucceeded, Message: "rolled back to 1.3.0"},
		{ID: "aaaaaaaaaaaaaaaa-0000000002", Time: t0.Add(4 * time.Minute), Verb: audit.VerbPause, Cluster: "prod", Namespace: "shop", App: "checkout", Outcome: audit.OutcomeSucceeded},
		{ID: "aaaaaaaaaaaaaaaa-0000000003", Time: t0.Add(5 * time.Minute), Verb: audit.VerbFreeze, Cluster: "prod", Namespace: "shop", App: "checkout", Outcome: audit.OutcomeSucceeded},
		{ID: "aaaaaaaaaaaaaaaa-0000000004", Time: t0.Add(6 * time.Minute), Verb: audit.VerbPrune, Cluster: "prod", Namespace: "shop", App: "checkout", Outcome: audit.OutcomeSucceeded},
		{ID: "bbbbbbbbbbbbbbbb-0000000001", Time: t0.Add(7 * time.Minute), Verb: audit.VerbApply, Cluster: "staging", Environment: "staging", Outcome: audit.OutcomeSucceeded, Objects: objs},
		{ID: "aaaaaaaaaaaaaaaa-0000000005", Time: t0.Add(8 * time.Minute), Verb: audit.VerbFreezeEnd, Cluster: "prod", Namespace: "shop", App: "checkout", Outcome: audit.OutcomeSucceeded},
		{ID: "aaaaaaaaaaaaaaaa-0000000006", Time: t0.Add(9 * time.Minute), Verb: audit.VerbOperate, Cluster: "prod", Namespace: "shop", App: "checkout", Outcome: audit.OutcomeSucceeded,
			Action: "scale", Before: "1 replica", After: "3 replicas", Actor: audit.Actor{Email: "bob@example.com"}, Message: "scale of Deployment checkout"},
		{ID: "aaaaaaaaaaaaaaaa-0000000007", Time: t0.Add(10 * time.Minute), Verb: audit.VerbOperate, Cluster: "prod", Namespace: "shop", App: "checkout", Outcome: audit.OutcomeRefused,
			Action: "scale", Message: "frozen"},
	}
	got := f.Entries(other)
	wantOther := []timeline.Entry{
		{Time: t0.Add(3 * time.Minute), App: checkout, Kind: timeline.KindRollback, Ref: "aaaaaaaaaaaaaaaa-0000000001", Message: "rollback: succeeded: rolled back to 1.3.0"},
		// A day-2 action is an entry with the value it changed; a refused
		// one is none (it changed nothing).
		{Time: t0.Add(9 * time.Minute), App: checkout, Kind: timeline.KindOperate, From: "1 replica", To: "3 replicas", Ref: "aaaaaaaaaaaaaaaa-0000000006",
			Message: "operate by bob@example.com: succeeded: scale of Deployment checkout"},
	}
	if diff := cmp.Diff(wantOther, got); diff != "" {
		t.Errorf("entries(rollback, pause, freeze, prune, apply in a cluster of no App, a scheduled freeze window's end) mismatch: only the rollback and the day-2 action are entries (freezes and pauses are drawn from their stores when a timeline is read) (-want +got):\n%s", diff)
	}
}

// recorder records the entries the feed hands it.
type recorder struct {
	mu       sync.Mutex
	recorded []timeline.Entry
}

func (s *recorder) Record(es ...timeline.Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recorded = append(s.recorded, es...)
}

// recordsOf is an audit index of recs (newest first) in one page.
type recordsOf []audit.Record

func (l recordsOf) List(_ context.Context, f audit.Filter) (audit.Page, error) {
	var out []audit.Record
	for _, r := range l {
		if !r.Time.Before(f.Since) {
			out = append(out, r)
		}
	}
	return audit.Page{Records: out}, nil
}

// TestSubscription: through the records feed, the timeline is
// handed the deploys of its whole age at start (a week-old apply
// included), once.
func TestSubscription(t *testing.T) {
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	recs := recordsOf{
		{ID: "s-0000000002", Time: now.Add(-time.Minute), Verb: audit.VerbRollback, Cluster: "prod", Namespace: "shop", App: "checkout", Outcome: audit.OutcomeSucceeded},
		{ID: "s-0000000001", Time: now.Add(-7 * 24 * time.Hour), Verb: audit.VerbSync, Cluster: "prod", Namespace: "shop", App: "checkout", Outcome: audit.OutcomeSucceeded},
		{ID: "s-0000000000", Time: now.Add(-timeline.DefaultMaxAge - time.Hour), Verb: audit.VerbSync, Cluster: "prod", Namespace: "shop", App: "checkout", Outcome: audit.OutcomeSucceeded},
	}
	feed := recordfeed.New(recs, recordfeed.Options{Now: func() time.Time { return now }})
	sink := &recorder{}
	feed.Subscribe(NewRecordEntries(func(string, string, string) bool { return false }).Subscription(sink))
	for range 2 {
		if err := feed.Pass(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, e := range sink.recorded {
		got = append(got, e.Ref+" "+string(e.Kind))
	}
	want := []string{"s-0000000001 " + string(timeline.KindDeploy), "s-0000000002 " + string(timeline.KindRollback)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries recorded (-want +got):\n%s", diff)
	}
}
