package clusterfeed

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// fakeView is a View of rows and pods set by the test.
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
	go Apps(ctx, "prod", v, sink, time.Millisecond)
	for range 2 {
		select {
		case <-sink.done:
		case <-time.After(10 * time.Second):
			t.Fatal("Apps did not observe the touched Apps within 10s")
		}
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if diff := cmp.Diff([]string{"prod/shop/checkout=Degraded"}, sink.observed); diff != "" {
		t.Errorf("Apps observed mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"prod/shop/gone"}, sink.forgot); diff != "" {
		t.Errorf("Apps forgot mismatch (-want +got):\n%s", diff)
	}
}
