package auditfeed

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/audit/recordfeed"
	"github.com/hanzoai/deploy-web/freeze"
	"github.com/hanzoai/deploy-web/notify"
)

// TestEvent: which records are events, and as what.
func TestEvent(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	rec := func(v audit.Verb, o audit.Outcome) audit.Record {
		return audit.Record{ID: "r-1", Time: at, Verb: v, Outcome: o, Cluster: "c1", Environment: "dev", Namespace: "shop", App: "checkout", Message: "m"}
	}
	tests := []struct {
		rec    audit.Record
		want   notify.TriggerType // "": no event
		wantRv string
	}{
		{rec(audit.VerbApply, audit.OutcomeFailed), notify.TriggerApplyFailed, "r-1"},
		{rec(audit.VerbApply, audit.OutcomeInterrupted), notify.TriggerApplyFailed, "r-1"},
		{rec(audit.VerbApply, audit.OutcomeRefused), "", ""},
		{rec(audit.VerbApply, audit.OutcomeSucceeded), "", ""},
		{rec(audit.VerbAutoSync, audit.OutcomeFailed), notify.TriggerAutoSyncFailed, "r-1"},
		{rec(audit.VerbAutoSync, audit.OutcomeRefused), notify.TriggerAutoSyncFailed, "r-1"},
		{rec(audit.VerbSelfHeal, audit.OutcomeFailed), notify.TriggerAutoSyncFailed, "r-1"},
		{rec(audit.VerbAutoSync, audit.OutcomeSucceeded), "", ""},
		{rec(audit.VerbPromoteRequest, audit.OutcomeSucceeded), notify.TriggerPromotionRequested, "r-1"},
		{rec(audit.VerbPromoteRequest, audit.OutcomeRefused), "", ""},
		{rec(audit.VerbFreeze, audit.OutcomeSucceeded), notify.TriggerFreezeStart, "r-1"},
		{rec(audit.VerbUnfreeze, audit.OutcomeSucceeded), notify.TriggerFreezeEnd, "r-1"},
		{rec(audit.VerbRollback, audit.OutcomeFailed), "", ""},
		{rec(audit.VerbSync, audit.OutcomeSucceeded), "", ""},
		{rec(audit.VerbOperate, audit.OutcomeSucceeded), notify.TriggerOperated, "r-1"},
		{rec(audit.VerbOperate, audit.OutcomeRefused), "", ""},
	}
	for _, tt := range tests {
		got, ok := Event(tt.rec)
		if tt.want == "" {
			if ok {
				t.Errorf("Event(%s %s) = %v, want no event", tt.rec.Verb, tt.rec.Outcome, got.Trigger)
			}
			continue
		}
		want := notify.Event{Trigger: tt.want, App: "checkout", Cluster: "c1", Namespace: "shop", Environment: "dev", Revision: tt.wantRv, Message: "m", Time: at}
		if diff := cmp.Diff(want, got); !ok || diff != "" {
			t.Errorf("Event(%s %s) = %v; mismatch (-want +got):\n%s", tt.rec.Verb, tt.rec.Outcome, ok, diff)
		}
	}
	// A scheduled window's records: the window's key is the revision, so
	// two records of one window (two replicas) are one message.
	window := audit.Record{ID: "r-2", Time: at, Verb: audit.VerbFreezeStart, Outcome: audit.OutcomeSucceeded,
		Cluster: freeze.RecordCluster, Environment: freeze.RecordEnvironment, Message: "[fz-1@2026-12-01T10:00:00Z] scheduled window"}
	for _, v := range []audit.Verb{audit.VerbFreezeStart, audit.VerbFreezeEnd} {
		window.Verb = v
		got, ok := Event(window)
		wantT := map[audit.Verb]notify.TriggerType{audit.VerbFreezeStart: notify.TriggerFreezeStart, audit.VerbFreezeEnd: notify.TriggerFreezeEnd}[v]
		if !ok || got.Trigger != wantT || got.Revision != "fz-1@2026-12-01T10:00:00Z" {
			t.Errorf("Event(%s of a window) = %v, %v (revision %q), want %v with revision fz-1@2026-12-01T10:00:00Z", v, got.Trigger, ok, got.Revision, wantT)
		}
	}
	// A day-2 action's event carries the value it changed.
	op := rec(audit.VerbOperate, audit.OutcomeSucceeded)
	op.Before, op.After = "1 replica", "3 replicas"
	if got, _ := Event(op); got.From != "1 replica" || got.To != "3 replicas" {
		t.Errorf("Event(operate).From, To = %q, %q, want 1 replica, 3 replicas", got.From, got.To)
	}
	withCommit := rec(audit.VerbApply, audit.OutcomeFailed)
	withCommit.Commit = "abc123"
	if got, _ := Event(withCommit); got.Revision != "abc123" {
		t.Errorf("Event(commit abc123).Revision = %q, want abc123 (one message per commit)", got.Revision)
	}
}

// fakeRecords serves records newest first in pages of pageSize.
type fakeRecords struct {
	recs     []audit.Record // newest first
	pageSize int
}

func (f *fakeRecords) List(_ context.Context, flt audit.Filter) (audit.Page, error) {
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

// TestSubscription: through the records feed, the first pass announces
// nothing; later passes announce each new record's event once, oldest
// first, with its link; nothing while the sender does not lead, and what
// appeared meanwhile once it does.
func TestSubscription(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	failed := func(id string, ago time.Duration) audit.Record {
		return audit.Record{ID: id, Time: now.Add(-ago), Verb: audit.VerbApply, Outcome: audit.OutcomeFailed, Environment: "dev"}
	}
	src := &fakeRecords{pageSize: 2, recs: []audit.Record{failed("old-2", 2*time.Minute), failed("old-1", 3*time.Minute)}}
	feed := recordfeed.New(src, recordfeed.Options{Now: func() time.Time { return now }})
	leading := false
	var got []string
	send := func(ev notify.Event) { got = append(got, ev.Revision+" "+ev.Link) }
	feed.Subscribe(Subscription(func() bool { return leading }, func(ev notify.Event) string { return "https://deploy.example/environments/" + ev.Environment }, send))
	pass := func() {
		t.Helper()
		now = now.Add(10 * time.Second)
		if err := feed.Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	pass()
	leading = true
	pass()
	if len(got) != 0 {
		t.Fatalf("priming announced %v, want nothing", got)
	}
	// An apply that took 20 minutes appears with its start time; a
	// succeeded one is no event.
	ok := failed("ok-1", time.Minute)
	ok.Outcome = audit.OutcomeSucceeded
	src.recs = append([]audit.Record{failed("new-2", 0), ok, failed("new-1", 20*time.Minute)}, src.recs...)
	leading = false
	pass()
	if len(got) != 0 {
		t.Fatalf("a sender not leading announced %v, want nothing", got)
	}
	leading = true
	pass()
	pass()
	want := []string{"new-1 https://deploy.example/environments/dev", "new-2 https://deploy.example/environments/dev"}
	if !slices.Equal(got, want) {
		t.Errorf("announced %v, want %v (each once, oldest first)", got, want)
	}
}
