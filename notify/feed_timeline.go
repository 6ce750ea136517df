package notify

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/hanzoai/deploy-web/objrules"
	"github.com/hanzoai/deploy-web/timeline"
)

// TimelineFeed turns the timeline's entries (package timeline detects
// every transition; this is no second detector) into events: an App's
// health becoming Degraded is degraded, becoming Healthy after Degraded is
// recovered, drift appearing is drift; leaving Degraded for another state
// is an internal event that is never sent but stops a degraded message
// held for "for N seconds". Every other entry is no event.
//
// It remembers which Apps it saw become Degraded (at most MaxTracked), so
// that Degraded, Progressing, Healthy is one recovery while an App that
// only went Progressing to Healthy (every rollout) is none. The "for N
// seconds" of degraded is the Sender's (Debouncer): the feed passes each
// transition on at once. It also remembers the Apps degraded now, with the
// event that said so, for Replay. Events and Run are for one goroutine
// (one timeline subscription); Replay may be called from any.
type TimelineFeed struct {
	// Cluster names the cluster of entries that name none (a
	// single-cluster console), so that scopes naming it match.
	Cluster string
	// EnvironmentOf names the environment an App's namespace of a cluster
	// belongs to ("" for none), for subscriptions scoped to one.
	EnvironmentOf func(cluster, namespace string) string
	// Link is the console's page of an App (nil: no link).
	Link func(cluster, namespace, app string) string

	mu       sync.Mutex // guards the maps below
	degraded map[appKey]bool
	// now are the Apps whose newest health entry went to Degraded, with
	// its event (at most MaxTracked).
	now map[appKey]Event
	// drifted are the Apps whose newest drift entry went to drifted, with
	// its event (at most MaxTracked): a drift still present after a
	// handover is announced by the next sender (once: the dedup keys of
	// the previous one's delivery log).
	drifted map[appKey]Event
}

// MaxTracked bounds the Apps a TimelineFeed remembers as degraded (the
// timeline's own bound on Apps); beyond it an App still recovers when its
// health goes from Degraded straight to Healthy.
const MaxTracked = timeline.DefaultMaxApps

// Events returns the event entry e is, if any (at most one).
func (f *TimelineFeed) Events(e timeline.Entry) []Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.degraded == nil {
		f.degraded, f.now, f.drifted = map[appKey]bool{}, map[appKey]Event{}, map[appKey]Event{}
	}
	if e.App.Cluster == "" {
		e.App.Cluster = f.Cluster
	}
	key := appKey{e.App.Cluster, e.App.Namespace, e.App.Name}
	var t TriggerType
	switch {
	case e.Kind == timeline.KindHealth && e.To == string(objrules.HealthDegraded):
		if len(f.degraded) < MaxTracked {
			f.degraded[key] = true
		}
		t = TriggerDegraded
	case e.Kind == timeline.KindHealth && e.To == string(objrules.HealthHealthy):
		if !f.degraded[key] && e.From != string(objrules.HealthDegraded) {
			return nil
		}
		delete(f.degraded, key)
		t = TriggerRecovered
	case e.Kind == timeline.KindHealth && e.From == string(objrules.HealthDegraded):
		// Degraded no longer, not recovered yet: a degraded message held
		// for "for N seconds" is dropped (the Sender's Debouncer).
		t = triggerSettled
	case e.Kind == timeline.KindDrift && e.To == timeline.DriftDrifted:
		t = TriggerDrift
	case e.Kind == timeline.KindDrift:
		delete(f.drifted, key) // clean again: nothing to replay
		return nil
	default:
		return nil
	}
	ev := Event{Trigger: t, App: e.App.Name, Cluster: e.App.Cluster, Namespace: e.App.Namespace, Revision: e.Revision,
		From: e.From, To: e.To, Message: e.Message, Time: e.Time}
	if f.EnvironmentOf != nil {
		ev.Environment = f.EnvironmentOf(e.App.Cluster, e.App.Namespace)
	}
	if f.Link != nil {
		ev.Link = f.Link(e.App.Cluster, e.App.Namespace, e.App.Name)
	}
	if e.Kind == timeline.KindHealth {
		delete(f.now, key)
		if t == TriggerDegraded && len(f.now) < MaxTracked {
			f.now[key] = ev
		}
	}
	if t == TriggerDrift && len(f.drifted) < MaxTracked {
		f.drifted[key] = ev
	}
	return []Event{ev}
}

// Replay hands notify (a Sender's Notify) the degraded event of each App
// degraded now, oldest first, as it was when the App degraded (its time
// and revision, so "for N seconds" counts from then). The Sender's
// OnLead calls it: events seen while no replica led were dropped, so a
// degradation that began in a Lease handover would be lost; this replica
// saw it too. What the previous leader delivered is not sent again: the
// Sender drops a message whose key (subscription, App, trigger, revision)
// its delivery logs hold.
func (f *TimelineFeed) Replay(notify func(Event)) {
	f.mu.Lock()
	evs := make([]Event, 0, len(f.now)+len(f.drifted))
	for _, ev := range f.now {
		evs = append(evs, ev)
	}
	for _, ev := range f.drifted {
		evs = append(evs, ev)
	}
	f.mu.Unlock()
	slices.SortFunc(evs, func(a, b Event) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.App, b.App))
	})
	for _, ev := range evs {
		notify(ev)
	}
}

// Run reads entries until ctx ends or entries is closed, handing each
// event to notify (a Sender's Notify, which only the sending replica
// delivers).
func (f *TimelineFeed) Run(ctx context.Context, entries <-chan timeline.Entry, notify func(Event)) {
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-entries:
			if !ok {
				return
			}
			for _, ev := range f.Events(e) {
				notify(ev)
			}
		}
	}
}
