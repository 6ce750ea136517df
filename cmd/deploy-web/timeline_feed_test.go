package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hanzoai/deploy-web/audit"
	"github.com/hanzoai/deploy-web/audit/recordfeed"
	"github.com/hanzoai/deploy-web/kubeview"
	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/timeline"
)

func TestStateOf(t *testing.T) {
	row := kubeview.AppRow{Name: "checkout", Namespace: "shop", Version: "1.4.0",
		Health: objrules.Health{Status: objrules.HealthDegraded, Message: "0 of 2 replicas available"},
		Sync:   kubeview.Sync{Status: kubeview.SyncOutOfSync, Message: "declared 1.4.0, running 1.3.0", Drifted: true}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "checkout-abc"}, Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
		Name: "app", RestartCount: 3,
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled"}},
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
	}}}}
	want := timeline.State{Health: "Degraded", HealthMessage: "0 of 2 replicas available", Sync: "OutOfSync",
		SyncMessage: "declared 1.4.0, running 1.3.0", Drifted: true, Revision: "1.4.0",
		Containers: []timeline.Container{{Pod: "checkout-abc", Name: "app", Restarts: 3, LastTermination: "OOMKilled", Waiting: "CrashLoopBackOff"}}}
	if diff := cmp.Diff(want, stateOf(row, []*corev1.Pod{pod})); diff != "" {
		t.Errorf("stateOf() mismatch (-want +got):\n%s", diff)
	}
}

func TestWarningEntry(t *testing.T) {
	at := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	appOf := func(ns, group, kind, name string) (string, bool) {
		if ns == "shop" && group == "" && kind == "Pod" && name == "checkout-abc" {
			return "checkout", true
		}
		return "", false
	}
	ev := func(mut func(*corev1.Event)) *corev1.Event {
		e := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "checkout-abc.1"}, Type: corev1.EventTypeWarning,
			Reason: "BackOff", Message: "Back-off restarting failed container app", LastTimestamp: metav1.NewTime(at),
			InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "checkout-abc"}}
		if mut != nil {
			mut(e)
		}
		return e
	}
	hostile := "<script>alert(1)</script>\nnext line"
	for _, tt := range []struct {
		name string
		ev   *corev1.Event
		want *timeline.Entry
	}{
		{"warning about an App's pod", ev(nil), &timeline.Entry{Time: at, App: timeline.App{Cluster: "prod", Namespace: "shop", Name: "checkout"},
			Kind: timeline.KindWarning, Ref: ":Pod:shop:checkout-abc", Message: "BackOff: Back-off restarting failed container app"}},
		{"series time wins", ev(func(e *corev1.Event) {
			e.Series = &corev1.EventSeries{LastObservedTime: metav1.NewMicroTime(at.Add(time.Minute))}
		}),
			&timeline.Entry{Time: at.Add(time.Minute), App: timeline.App{Cluster: "prod", Namespace: "shop", Name: "checkout"},
				Kind: timeline.KindWarning, Ref: ":Pod:shop:checkout-abc", Message: "BackOff: Back-off restarting failed container app"}},
		{"hostile message kept as data", ev(func(e *corev1.Event) { e.Message = hostile }),
			&timeline.Entry{Time: at, App: timeline.App{Cluster: "prod", Namespace: "shop", Name: "checkout"},
				Kind: timeline.KindWarning, Ref: ":Pod:shop:checkout-abc", Message: "BackOff: " + hostile}},
		{"a Normal event", ev(func(e *corev1.Event) { e.Type = corev1.EventTypeNormal }), nil},
		{"an object of no App", ev(func(e *corev1.Event) { e.InvolvedObject.Name = "other" }), nil},
		{"a bad apiVersion", ev(func(e *corev1.Event) { e.InvolvedObject.APIVersion = "a/b/c" }), nil},
		{"no time at all", ev(func(e *corev1.Event) { e.LastTimestamp = metav1.Time{} }), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := warningEntry("prod", tt.ev, appOf)
			if tt.want == nil {
				if ok {
					t.Errorf("warningEntry() = %+v, true; want none", got)
				}
				return
			}
			if diff := cmp.Diff(*tt.want, got); !ok || diff != "" {
				t.Errorf("warningEntry() ok = %v, mismatch (-want +got):\n%s", ok, diff)
			}
		})
	}
}

// TestStripEvent: the informer keeps what warningEntry reads, the message
// capped.
func TestStripEvent(t *testing.T) {
	long := strings.Repeat("x", 3*timeline.MaxMessageBytes)
	in := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "e", Annotations: map[string]string{"big": long}},
		Type: "Warning", Reason: "Failed", Message: long, Source: corev1.EventSource{Component: "kubelet"}, LastTimestamp: metav1.Now(),
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "p", UID: "u"}}
	got, err := stripEvent(in)
	if err != nil {
		t.Fatal(err)
	}
	ev := got.(*corev1.Event)
	if len(ev.Message) != timeline.MaxMessageBytes || ev.Annotations != nil || ev.Source.Component != "" || ev.InvolvedObject.UID != "" {
		t.Errorf("stripEvent() kept message %d bytes, annotations %v, source %q, uid %q; want %d bytes and nothing else",
			len(ev.Message), ev.Annotations != nil, ev.Source.Component, ev.InvolvedObject.UID, timeline.MaxMessageBytes)
	}
	if e, ok := warningEntry("c", ev, func(string, string, string, string) (string, bool) { return "a", true }); !ok || e.Ref != ":Pod:shop:p" {
		t.Errorf("warningEntry(stripEvent(e)) = %+v, %v; want an entry of :Pod:shop:p", e, ok)
	}
}

func TestAuditFeedEntries(t *testing.T) {
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
	f := newAuditFeed(isApp)
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

// fakeView is a feedView of rows and pods set by the test.
type fakeView struct {
	touched chan struct{}
	mu      sync.Mutex
	keys    []string
	rows    map[string]kubeview.AppRow
}

func (v *fakeView) Touched() <-chan struct{} { return v.touched }
func (v *fakeView) TakeTouched() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	k := v.keys
	v.keys = nil
	return k
}
func (v *fakeView) Row(ns, name string) (kubeview.AppRow, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	r, ok := v.rows[ns+"/"+name]
	return r, ok
}
func (v *fakeView) AppPods(string, string) []*corev1.Pod { return nil }

// fakeSink records what the feeds hand it.
type fakeSink struct {
	mu       sync.Mutex
	observed []string
	forgot   []string
	recorded []timeline.Entry
	done     chan struct{}
}

func (s *fakeSink) Observe(app timeline.App, st timeline.State) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.observed = append(s.observed, app.String()+"="+st.Health)
	s.step()
}
func (s *fakeSink) Forget(app timeline.App) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgot = append(s.forgot, app.String())
	s.step()
}
func (s *fakeSink) Record(es ...timeline.Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recorded = append(s.recorded, es...)
}
func (s *fakeSink) step() { s.done <- struct{}{} }

func TestFeedApps(t *testing.T) {
	v := &fakeView{touched: make(chan struct{}, 1), keys: []string{"shop/checkout", "shop/gone", "malformed"},
		rows: map[string]kubeview.AppRow{"shop/checkout": {Health: objrules.Health{Status: objrules.HealthDegraded}}}}
	sink := &fakeSink{done: make(chan struct{}, 8)}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	v.touched <- struct{}{}
	go feedApps(ctx, "prod", v, sink, time.Millisecond)
	for range 2 {
		select {
		case <-sink.done:
		case <-time.After(10 * time.Second):
			t.Fatal("feedApps did not observe the touched Apps within 10s")
		}
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if diff := cmp.Diff([]string{"prod/shop/checkout=Degraded"}, sink.observed); diff != "" {
		t.Errorf("feedApps observed mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"prod/shop/gone"}, sink.forgot); diff != "" {
		t.Errorf("feedApps forgot mismatch (-want +got):\n%s", diff)
	}
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

// TestAuditFeedSubscription: through the records feed, the timeline is
// handed the deploys of its whole age at start (a week-old apply
// included), once.
func TestAuditFeedSubscription(t *testing.T) {
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	recs := recordsOf{
		{ID: "s-0000000002", Time: now.Add(-time.Minute), Verb: audit.VerbRollback, Cluster: "prod", Namespace: "shop", App: "checkout", Outcome: audit.OutcomeSucceeded},
		{ID: "s-0000000001", Time: now.Add(-7 * 24 * time.Hour), Verb: audit.VerbSync, Cluster: "prod", Namespace: "shop", App: "checkout", Outcome: audit.OutcomeSucceeded},
		{ID: "s-0000000000", Time: now.Add(-timeline.DefaultMaxAge - time.Hour), Verb: audit.VerbSync, Cluster: "prod", Namespace: "shop", App: "checkout", Outcome: audit.OutcomeSucceeded},
	}
	feed := recordfeed.New(recs, recordfeed.Options{Now: func() time.Time { return now }})
	sink := &fakeSink{done: make(chan struct{}, 1)}
	feed.Subscribe(newAuditFeed(func(string, string, string) bool { return false }).subscription(sink))
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
