package kubeview

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// Event is one Kubernetes event about an object.
type Event struct {
	Type    string    `json:"type"`
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	Count   int32     `json:"count"`
	Last    time.Time `json:"lastSeen"`
}

// maxEvents bounds the events read for one object.
const maxEvents = 500

// Events reads the events about the object with uid in a platform
// namespace from the apiserver, newest first, at most maxEvents. They are
// read per request (the resource panel's events tab) rather than cached:
// a fleet has several events per pod, more than any other kind, and only
// this tab shows them. The read has a deadline of its own
// (liveReadTimeout) within ctx's.
func (c *Cache) Events(ctx context.Context, namespace, uid string) ([]Event, error) {
	if _, ok := c.ns[namespace]; !ok || uid == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, liveReadTimeout)
	defer cancel()
	list, err := c.cs.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.uid", uid).String(),
		Limit:         maxEvents,
	})
	if err != nil {
		return nil, fmt.Errorf("kubeview: list events of %s in %s: %w", uid, namespace, err)
	}
	out := make([]Event, 0, len(list.Items))
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
		out = append(out, Event{Type: e.Type, Reason: e.Reason, Message: e.Message, Count: count, Last: last})
	}
	slices.SortFunc(out, func(a, b Event) int { return cmp.Or(b.Last.Compare(a.Last), cmp.Compare(a.Reason, b.Reason)) })
	return out, nil
}
