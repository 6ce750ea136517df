package notify

import (
	"slices"
	"time"
)

// Debouncer holds degraded messages back until the App has stayed
// degraded for the subscription's "for": the caller feeds it what it
// sees (Degraded, Recovered) and asks, with its clock's time, what is due.
// It keeps no clock and starts nothing: a pure state machine. Not safe for
// concurrent use.
type Debouncer struct {
	max     int
	pending []Pending
	// settled are messages dropped because the App left Degraded (but did
	// not recover) before their time: their subscriptions were never told,
	// so they get no "recovered" either.
	settled []Pending
}

// Pending is a degraded message waiting for its time.
type Pending struct {
	SubscriptionID string
	Event          Event
	Due            time.Time
}

// NewDebouncer returns a debouncer that holds at most max messages
// (a degraded App beyond that is sent at once rather than forgotten).
func NewDebouncer(max int) *Debouncer { return &Debouncer{max: max} }

// Degraded holds ev for subscription sub until at+wait; it reports false
// when the debouncer is full (the caller sends at once). A second
// Degraded for the same subscription and App keeps the first time.
func (d *Debouncer) Degraded(sub string, ev Event, at time.Time, wait time.Duration) bool {
	d.settled = slices.DeleteFunc(d.settled, func(p Pending) bool {
		return p.SubscriptionID == sub && p.Event.appKey() == ev.appKey()
	})
	for _, p := range d.pending {
		if p.SubscriptionID == sub && p.Event.appKey() == ev.appKey() {
			return true
		}
	}
	if len(d.pending) >= d.max {
		return false
	}
	d.pending = append(d.pending, Pending{SubscriptionID: sub, Event: ev, Due: at.Add(wait)})
	return true
}

// Settled drops every message held for the App of ev, which left
// Degraded for another state than Healthy before their time: "degraded for
// N seconds" restarts if it degrades again. Their subscriptions are
// remembered (at most max) as never told, for Recovered.
func (d *Debouncer) Settled(ev Event) {
	d.pending = slices.DeleteFunc(d.pending, func(p Pending) bool {
		if p.Event.appKey() == ev.appKey() {
			d.settled = append(d.settled, p)
			return true
		}
		return false
	})
	d.settled = d.settled[max(0, len(d.settled)-d.max):]
}

// Recovered drops every message held for the App of ev and returns the
// subscriptions they were for, and those Settled dropped: those were
// never told the App was degraded, so they need no "recovered" either.
func (d *Debouncer) Recovered(ev Event) []string {
	var subs []string
	drop := func(p Pending) bool {
		if p.Event.appKey() == ev.appKey() {
			subs = append(subs, p.SubscriptionID)
			return true
		}
		return false
	}
	d.pending = slices.DeleteFunc(d.pending, drop)
	d.settled = slices.DeleteFunc(d.settled, drop)
	return subs
}

// Due removes and returns the messages whose time has come at now, in
// the order they were held.
func (d *Debouncer) Due(now time.Time) []Pending {
	var due []Pending
	d.pending = slices.DeleteFunc(d.pending, func(p Pending) bool {
		if !p.Due.After(now) {
			due = append(due, p)
			return true
		}
		return false
	})
	return due
}

// Len is how many messages are held.
func (d *Debouncer) Len() int { return len(d.pending) }
