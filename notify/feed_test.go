package notify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/timeline"
)

// TestTimelineFeed: each sequence of timeline entries of one App gives
// these events, in order.
func TestTimelineFeed(t *testing.T) {
	health := func(from, to string) timeline.Entry {
		return timeline.Entry{Kind: timeline.KindHealth, From: from, To: to}
	}
	tests := []struct {
		name    string
		entries []timeline.Entry
		want    []TriggerType
	}{
		{"degraded then healthy", []timeline.Entry{health("Progressing", "Degraded"), health("Degraded", "Healthy")},
			[]TriggerType{TriggerDegraded, TriggerRecovered}},
		{"recovery through progressing", []timeline.Entry{health("Healthy", "Degraded"), health("Degraded", "Progressing"), health("Progressing", "Healthy")},
			[]TriggerType{TriggerDegraded, TriggerRecovered}},
		{"a rollout is no recovery", []timeline.Entry{health("Healthy", "Progressing"), health("Progressing", "Healthy")}, nil},
		{"degraded to healthy unseen (after a restart)", []timeline.Entry{health("Degraded", "Healthy")}, []TriggerType{TriggerRecovered}},
		{"one recovery per degradation", []timeline.Entry{health("Healthy", "Degraded"), health("Degraded", "Healthy"),
			health("Healthy", "Progressing"), health("Progressing", "Healthy")}, []TriggerType{TriggerDegraded, TriggerRecovered}},
		{"drift appears, clears", []timeline.Entry{{Kind: timeline.KindDrift, From: timeline.DriftClean, To: timeline.DriftDrifted},
			{Kind: timeline.KindDrift, From: timeline.DriftDrifted, To: timeline.DriftClean}}, []TriggerType{TriggerDrift}},
		{"other kinds", []timeline.Entry{{Kind: timeline.KindRestart, From: "0", To: "1"}, {Kind: timeline.KindSync, From: "Synced", To: "OutOfSync"},
			{Kind: timeline.KindDeploy}, {Kind: timeline.KindCrashLoop, To: timeline.ReasonCrashLoopBackOff}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f TimelineFeed
			var got []TriggerType
			for _, e := range tt.entries {
				e.App = timeline.App{Cluster: "c1", Namespace: "shop", Name: "checkout"}
				for _, ev := range f.Events(e) {
					got = append(got, ev.Trigger)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Events(%v) = %v, want %v", tt.entries, got, tt.want)
			}
		})
	}
}

// TestTimelineFeedEvent: the event carries the App, its environment and
// link, the revision (deduplication) and the entry's text as data.
func TestTimelineFeedEvent(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	f := TimelineFeed{
		EnvironmentOf: func(cluster, ns string) string { return map[string]string{"c1/shop": "prod"}[cluster+"/"+ns] },
		Link: func(cluster, ns, app string) string {
			return "https://deploy.example/" + cluster + "/" + ns + "/" + app
		},
	}
	e := timeline.Entry{Time: at, App: timeline.App{Cluster: "c1", Namespace: "shop", Name: "checkout"}, Kind: timeline.KindHealth,
		From: "Progressing", To: "Degraded", Message: "<script>x</script> Back-off restarting", Revision: "v1.2.3"}
	want := []Event{{Trigger: TriggerDegraded, App: "checkout", Cluster: "c1", Namespace: "shop", Environment: "prod",
		Revision: "v1.2.3", From: "Progressing", To: "Degraded", Message: "<script>x</script> Back-off restarting",
		Link: "https://deploy.example/c1/shop/checkout", Time: at}}
	if diff := cmp.Diff(want, f.Events(e)); diff != "" {
		t.Errorf("Events() mismatch (-want +got):\n%s", diff)
	}
	// An entry without a cluster (a single-cluster console) is of the
	// feed's.
	f.Cluster = "home"
	noCluster := e
	noCluster.App.Cluster = ""
	if got := f.Events(noCluster); len(got) != 1 || got[0].Cluster != "home" {
		t.Errorf("Events(entry without a cluster) = %+v, want one event of cluster home", got)
	}
	// Another App's degradation does not make this one's rollout a recovery.
	other := timeline.Entry{App: timeline.App{Cluster: "c1", Namespace: "shop", Name: "cart"}, Kind: timeline.KindHealth, From: "Progressing", To: "Healthy"}
	if got := f.Events(other); len(got) != 0 {
		t.Errorf("Events(cart Progressing->Healthy) = %v, want none (only checkout was degraded)", got)
	}
}

// TestAuditEvent: which records are events, and as what.
func TestAuditEvent(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	rec := func(v audit.Verb, o audit.Outcome) audit.Record {
		return audit.Record{ID: "r-1", Time: at, Verb: v, Outcome: o, Cluster: "c1", Environment: "dev", Namespace: "shop", App: "checkout", Message: "m"}
	}
	tests := []struct {
		rec    audit.Record
		want   TriggerType // "": no event
		wantRv string
	}{
		{rec(audit.VerbApply, audit.OutcomeFailed), TriggerApplyFailed, "r-1"},
		{rec(audit.VerbApply, audit.OutcomeRefused), "", ""},
		{rec(audit.VerbApply, audit.OutcomeSucceeded), "", ""},
		{rec(audit.VerbAutoSync, audit.OutcomeFailed), TriggerAutoSyncFailed, "r-1"},
		{rec(audit.VerbAutoSync, audit.OutcomeRefused), TriggerAutoSyncFailed, "r-1"},
		{rec(audit.VerbSelfHeal, audit.OutcomeFailed), TriggerAutoSyncFailed, "r-1"},
		{rec(audit.VerbAutoSync, audit.OutcomeSucceeded), "", ""},
		{rec(audit.VerbPromoteRequest, audit.OutcomeSucceeded), TriggerPromotionRequested, "r-1"},
		{rec(audit.VerbPromoteRequest, audit.OutcomeRefused), "", ""},
		{rec(audit.VerbFreeze, audit.OutcomeSucceeded), TriggerFreezeStart, "r-1"},
		{rec(audit.VerbUnfreeze, audit.OutcomeSucceeded), TriggerFreezeEnd, "r-1"},
		{rec(audit.VerbRollback, audit.OutcomeFailed), "", ""},
		{rec(audit.VerbSync, audit.OutcomeSucceeded), "", ""},
	}
	for _, tt := range tests {
		got, ok := AuditEvent(tt.rec)
		if tt.want == "" {
			if ok {
				t.Errorf("AuditEvent(%s %s) = %v, want no event", tt.rec.Verb, tt.rec.Outcome, got.Trigger)
			}
			continue
		}
		want := Event{Trigger: tt.want, App: "checkout", Cluster: "c1", Namespace: "shop", Environment: "dev", Revision: tt.wantRv, Message: "m", Time: at}
		if diff := cmp.Diff(want, got); !ok || diff != "" {
			t.Errorf("AuditEvent(%s %s) = %v; mismatch (-want +got):\n%s", tt.rec.Verb, tt.rec.Outcome, ok, diff)
		}
	}
	withCommit := rec(audit.VerbApply, audit.OutcomeFailed)
	withCommit.Commit = "abc123"
	if got, _ := AuditEvent(withCommit); got.Revision != "abc123" {
		t.Errorf("AuditEvent(commit abc123).Revision = %q, want abc123 (one message per commit)", got.Revision)
	}
}

// fakeRecords serves records newest first in pages of pageSize; err
// fails the next List.
type fakeRecords struct {
	recs     []audit.Record // newest first
	pageSize int
	err      error
	filters  []audit.Filter
}

func (f *fakeRecords) List(_ context.Context, flt audit.Filter) (audit.Page, error) {
	f.filters = append(f.filters, flt)
	if f.err != nil {
		err := f.err
		f.err = nil
		return audit.Page{}, err
	}
	start := 0
	if flt.Continue != "" {
		fmt.Sscan(flt.Continue, &start)
	}
	var out []audit.Record
	for _, r := range f.recs {
		if !r.Time.Before(flt.Since) {
			out = append(out, r)
		}
	}
	end := min(start+f.pageSize, len(out))
	p := audit.Page{Records: out[start:end]}
	if end < len(out) {
		p.Continue = fmt.Sprint(end)
	}
	return p, nil
}

// TestAuditFeedLook: the first look announces nothing; later looks
// announce each new record's event once, oldest first, across pages; a
// failed read marks nothing seen.
func TestAuditFeedLook(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	failed := func(id string, ago time.Duration) audit.Record {
		return audit.Record{ID: id, Time: now.Add(-ago), Verb: audit.VerbApply, Outcome: audit.OutcomeFailed, Environment: "dev"}
	}
	src := &fakeRecords{pageSize: 2, recs: []audit.Record{failed("old-2", 2*time.Minute), failed("old-1", 3*time.Minute)}}
	f := AuditFeed{Records: src, Now: func() time.Time { return now }, Link: func(ev Event) string { return "https://deploy.example/environments/" + ev.Environment }}
	var got []string
	notify := func(ev Event) { got = append(got, ev.Revision+" "+ev.Link) }
	f.look(context.Background(), nil) // the priming look of Run
	f.look(context.Background(), notify)
	if len(got) != 0 {
		t.Fatalf("priming announced %v, want nothing", got)
	}
	// An apply that took 20 minutes appears with its start time; a
	// succeeded one is no event.
	ok := failed("ok-1", time.Minute)
	ok.Outcome = audit.OutcomeSucceeded
	src.recs = append([]audit.Record{failed("new-2", 0), ok, failed("new-1", 20*time.Minute)}, src.recs...)
	src.err = errors.New("apiserver down")
	f.look(context.Background(), notify)
	if len(got) != 0 {
		t.Fatalf("a failed read announced %v, want nothing", got)
	}
	f.look(context.Background(), notify)
	f.look(context.Background(), notify)
	want := []string{"new-1 https://deploy.example/environments/dev", "new-2 https://deploy.example/environments/dev"}
	if !slices.Equal(got, want) {
		t.Errorf("announced %v, want %v (each once, oldest first)", got, want)
	}
	if last := src.filters[len(src.filters)-1]; !last.Since.Equal(now.Add(-time.Hour)) || last.Limit != audit.MaxLimit {
		t.Errorf("List(%+v), want Since an hour ago and Limit %d", last, audit.MaxLimit)
	}
	// Past the lookback, ids are forgotten: the seen set stays bounded.
	now = now.Add(2 * time.Hour)
	f.look(context.Background(), notify)
	if len(f.seen) != 0 {
		t.Errorf("seen holds %d ids after the lookback, want 0", len(f.seen))
	}
}
