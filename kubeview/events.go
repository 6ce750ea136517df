package kubeview

import (
	"cmp"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// IndexInvolved maps an event's involvedObject UID to the event.
const IndexInvolved = "involved"

// Event is one Kubernetes event about an object.
type Event struct {
	Type    string    `json:"type"`
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	Count   int32     `json:"count"`
	Last    time.Time `json:"lastSeen"`
}

func indexByInvolved(obj any) ([]string, error) {
	if e, ok := obj.(*corev1.Event); ok && e.InvolvedObject.UID != "" {
		return []string{string(e.InvolvedObject.UID)}, nil
	}
	return nil, nil
}

// Events returns the cached events about the object with uid in namespace,
// newest first.
func (c *Cache) Events(namespace, uid string) []Event {
	nc, ok := c.ns[namespace]
	if !ok || nc.events == nil {
		return nil
	}
	objs, err := nc.events.GetIndexer().ByIndex(IndexInvolved, uid)
	if err != nil {
		return nil
	}
	out := make([]Event, 0, len(objs))
	for _, o := range objs {
		e, ok := o.(*corev1.Event)
		if !ok {
			continue
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
	return out
}
