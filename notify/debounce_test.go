package notify

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDebouncer(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	checkout := Event{Trigger: TriggerDegraded, App: "checkout", Cluster: "c1", Namespace: "shop"}
	checkoutC2 := Event{Trigger: TriggerDegraded, App: "checkout", Cluster: "c2", Namespace: "shop"}
	recovered := Event{Trigger: TriggerRecovered, App: "checkout", Cluster: "c1", Namespace: "shop"}
	// step is one thing the caller does at a time offset (seconds).
	type step struct {
		at      int
		do      string // "degraded", "recovered", "settled", "due"
		sub     string
		ev      Event
		wait    int
		want    []string // due: "sub/cluster" of each message; recovered: subs silenced
		wantLen int
	}
	tests := []struct {
		name  string
		max   int
		steps []step
	}{
		{"still degraded after for", 10, []step{
			{at: 0, do: "degraded", sub: "a", ev: checkout, wait: 60, wantLen: 1},
			{at: 59, do: "due", wantLen: 1},
			{at: 60, do: "due", want: []string{"a/c1"}},
			{at: 61, do: "due"},
		}},
		{"recovered before for: nothing due, subscription silenced", 10, []step{
			{at: 0, do: "degraded", sub: "a", ev: checkout, wait: 60, wantLen: 1},
			{at: 30, do: "recovered", ev: recovered, want: []string{"a"}},
			{at: 90, do: "due"},
		}},
		{"a second degraded keeps the first time", 10, []step{
			{at: 0, do: "degraded", sub: "a", ev: checkout, wait: 60, wantLen: 1},
			{at: 50, do: "degraded", sub: "a", ev: checkout, wait: 60, wantLen: 1},
			{at: 60, do: "due", want: []string{"a/c1"}},
		}},
		{"two subscriptions, two waits", 10, []step{
			{at: 0, do: "degraded", sub: "a", ev: checkout, wait: 30, wantLen: 1},
			{at: 0, do: "degraded", sub: "b", ev: checkout, wait: 120, wantLen: 2},
			{at: 30, do: "due", want: []string{"a/c1"}, wantLen: 1},
			{at: 119, do: "due", wantLen: 1},
			{at: 120, do: "due", want: []string{"b/c1"}},
		}},
		{"same app name, other cluster: held apart", 10, []step{
			{at: 0, do: "degraded", sub: "a", ev: checkout, wait: 30, wantLen: 1},
			{at: 0, do: "degraded", sub: "a", ev: checkoutC2, wait: 30, wantLen: 2},
			{at: 10, do: "recovered", ev: recovered, want: []string{"a"}, wantLen: 1},
			{at: 30, do: "due", want: []string{"a/c2"}},
		}},
		{"recovered after the message: nobody silenced", 10, []step{
			{at: 0, do: "degraded", sub: "a", ev: checkout, wait: 10, wantLen: 1},
			{at: 10, do: "due", want: []string{"a/c1"}},
			{at: 20, do: "recovered", ev: recovered},
		}},
		{"settled before for: nothing due, silenced at the recovery", 10, []step{
			{at: 0, do: "degraded", sub: "a", ev: checkout, wait: 60, wantLen: 1},
			{at: 20, do: "settled", ev: checkout},
			{at: 60, do: "due"},
			{at: 90, do: "recovered", ev: recovered, want: []string{"a"}},
		}},
		{"settled, then degraded again: for starts over", 10, []step{
			{at: 0, do: "degraded", sub: "a", ev: checkout, wait: 60, wantLen: 1},
			{at: 20, do: "settled", ev: checkout},
			{at: 30, do: "degraded", sub: "a", ev: checkout, wait: 60, wantLen: 1},
			{at: 60, do: "due", wantLen: 1},
			{at: 90, do: "due", want: []string{"a/c1"}},
			{at: 95, do: "recovered", ev: recovered},
		}},
		{"settled keeps other apps held", 10, []step{
			{at: 0, do: "degraded", sub: "a", ev: checkoutC2, wait: 60, wantLen: 1},
			{at: 10, do: "settled", ev: checkout, wantLen: 1},
			{at: 60, do: "due", want: []string{"a/c2"}},
		}},
		{"full: refused, the caller sends at once", 1, []step{
			{at: 0, do: "degraded", sub: "a", ev: checkout, wait: 10, wantLen: 1},
			{at: 0, do: "degraded", sub: "b", ev: checkout, wait: 10, wantLen: 1, want: []string{"refused"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDebouncer(tt.max)
			for i, s := range tt.steps {
				now := t0.Add(time.Duration(s.at) * time.Second)
				var got []string
				switch s.do {
				case "degraded":
					if !d.Degraded(s.sub, s.ev, now, time.Duration(s.wait)*time.Second) {
						got = []string{"refused"}
					}
				case "recovered":
					got = d.Recovered(s.ev)
				case "settled":
					d.Settled(s.ev)
				case "due":
					for _, p := range d.Due(now) {
						got = append(got, p.SubscriptionID+"/"+p.Event.Cluster)
					}
				}
				if diff := cmp.Diff(s.want, got); diff != "" {
					t.Errorf("step %d (%s at %ds) (-want +got):\n%s", i, s.do, s.at, diff)
				}
				if d.Len() != s.wantLen {
					t.Errorf("step %d (%s at %ds): Len() = %d, want %d", i, s.do, s.at, d.Len(), s.wantLen)
				}
			}
		})
	}
}

func TestDedup(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := newDedup(2, time.Hour)
	d.add("a", t0)
	d.add("b", t0)
	if !d.seen("a", t0.Add(time.Minute)) || !d.seen("b", t0) {
		t.Fatalf("seen(a), seen(b) = false, want true")
	}
	d.add("c", t0) // over size: the oldest (a) goes
	if d.seen("a", t0) {
		t.Errorf("seen(a) after c = true, want false (evicted)")
	}
	if d.seen("b", t0.Add(time.Hour)) {
		t.Errorf("seen(b) after ttl = true, want false (expired)")
	}
	d.remove("c")
	if d.seen("c", t0) {
		t.Errorf("seen(c) after remove = true, want false")
	}
}

func TestDedupKey(t *testing.T) {
	ev := Event{Trigger: TriggerDegraded, App: "checkout", Cluster: "c1", Namespace: "shop", Revision: "abc", Message: "x", Time: time.Unix(1, 0)}
	same := ev
	same.Message, same.Time = "other text", time.Unix(2, 0)
	if dedupKey("s1", ev) != dedupKey("s1", same) {
		t.Errorf("dedupKey differs for the same subscription, App, trigger and revision")
	}
	for name, other := range map[string]Event{
		"revision": {Trigger: TriggerDegraded, App: "checkout", Cluster: "c1", Namespace: "shop", Revision: "abd"},
		"trigger":  {Trigger: TriggerRecovered, App: "checkout", Cluster: "c1", Namespace: "shop", Revision: "abc"},
		"cluster":  {Trigger: TriggerDegraded, App: "checkout", Cluster: "c2", Namespace: "shop", Revision: "abc"},
		// Field boundaries are kept: "a"+"bc" is not "ab"+"c".
		"boundary": {Trigger: TriggerDegraded, App: "checkout", Cluster: "c1s", Namespace: "hop", Revision: "abc"},
	} {
		if dedupKey("s1", ev) == dedupKey("s1", other) {
			t.Errorf("dedupKey same for a different %s", name)
		}
	}
	if dedupKey("s1", ev) == dedupKey("s2", ev) {
		t.Errorf("dedupKey same for two subscriptions")
	}
}
