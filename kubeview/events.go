package kubeview

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/hanzoai/deploy-web/internal/textfmt"
)

// Event is one Kubernetes event about an object.
type Event struct {
	Type   string `json:"type"`
	Reason string `json:"reason"`
	// Message is at most maxEventMessage bytes, "…" marking a cut.
	Message string    `json:"message"`
	Count   int32     `json:"count"`
	Last    time.Time `json:"lastSeen"`
}

// maxEvents bounds the events kept for one object: the newest ones.
const maxEvents = 500

// maxEventPages bounds the pages of maxEvents read for one object
// (10,000 events); past it the newest of those read are kept and the list
// says it is incomplete.
const maxEventPages = 20

// maxEventMessage bounds an event's message as kept ("…" marks a cut): the
// apiserver accepts messages of up to about a megabyte, and 500 of those
// would be held for one tab.
const maxEventMessage = 4096

// EventList is the events about one object, newest first.
type EventList struct {
	// Items holds at most maxEvents events: the newest.
	Items []Event
	// Total counts the object's events read (more than len(Items) when
	// capped).
	Total int
	// Capped says the object has more events than Items holds.
	Capped bool
	// Incomplete says not every event was read (more than maxEventPages
	// pages): Items are the newest of those read.
	Incomplete bool
}

// Events reads the events about the object with uid in a platform
// namespace from the apiserver and keeps the newest maxEvents, newest
// first. The apiserver pages a list in its own (name) order, not by time,
// so every page is read (at most maxEventPages) and only the newest are
// kept as they come: memory stays under two pages. They are read per
// request (the resource panel's events tab) rather than cached: a fleet
// has several events per pod, more than any other kind, and only this tab
// shows them. The whole read has a deadline of its own (liveReadTimeout)
// within ctx's.
func (c *Cache) Events(ctx context.Context, namespace, uid string) (EventList, error) {
	var el EventList
	if _, ok := c.ns[namespace]; !ok || uid == "" {
		return el, nil
	}
	ctx, cancel := context.WithTimeout(ctx, liveReadTimeout)
	defer cancel()
	newestFirst := func(a, b Event) int { return cmp.Or(b.Last.Compare(a.Last), cmp.Compare(a.Reason, b.Reason)) }
	opts := metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.uid", uid).String(),
		Limit:         maxEvents,
	}
	for page := 0; ; page++ {
		if page == maxEventPages {
			el.Incomplete = true
			break
		}
		list, err := c.cs.CoreV1().Events(namespace).List(ctx, opts)
		if err != nil {
			return EventList{}, fmt.Errorf("kubeview: list events of %s in %s: %w", uid, namespace, err)
		}
		for _, e := range list.Items {
			if string(e.InvolvedObject.UID) != uid || e.Namespace != namespace {
				continue // a server that ignored the selector
			}
			last := e.LastTimestamp.Time
			if last.IsZero() {
				last = e.EventTime.Time
			}
			if last.IsZero() {
				last = e.CreationTimestamp.Time
			}
			count := e.Count
			if count == 0 {
				count = 1
			}
			el.Total++
			el.Items = append(el.Items, Event{Type: e.Type, Reason: e.Reason, Message: cutMessage(e.Message), Count: count, Last: last})
		}
		slices.SortFunc(el.Items, newestFirst)
		if len(el.Items) > maxEvents {
			el.Items = slices.Clip(el.Items[:maxEvents])
		}
		if list.Continue == "" {
			break
		}
		opts.Continue = list.Continue
	}
	el.Capped = el.Total > len(el.Items) || el.Incomplete
	return el, nil
}

// cutMessage keeps at most maxEventMessage bytes of m (cutText).
func cutMessage(m string) string { return cutText(m, maxEventMessage) }

// cutText keeps at most max bytes of s, "…" marking a cut, without
// leaving half a character (event messages, drift values).
func cutText(s string, max int) string { return textfmt.Cut(s, max) }
